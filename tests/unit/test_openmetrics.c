/* openmetrics_write(): names, types, units and labels as documented
 * (docs/metrics.md, "OpenMetrics"); an unmeasured number has no sample. */
#include "test_util.h"

#include <string.h>

#include "roastop/metrics.h"
#include "roastop/openmetrics.h"
#include "roastop/udp.h"

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static void write_all(const struct session_run *row, struct strbuf *out)
{
	static struct metrics m;
	memset(&m, 0, sizeof(m));
	m.num_chunks = optnum_of(42);
	m.num_failed_chunks = optnum_of(0);
	m.chunk_retries = optnum_of(4);
	m.event_rate_elapsed_khz = optnum_of(2.5);
	m.memory_used_now_bytes = optnum_of(3.0 * (1 << 30));
	m.cpu_percent_now = optnum_of(50);
	/* workers_now, total_threads_now... stay unmeasured */
	struct session ses = { .runs_total = 3 };
	struct udp_stats us = { .datagrams = 100, .applied = 90 };
	us.rejected[UDP_BAD_TAG] = 7;
	us.json.by_reason[DEC_NOT_JSON] = 2;
	static struct source_stats ls, sv;
	memset(&ls, 0, sizeof(ls));
	memset(&sv, 0, sizeof(sv));
	udp_stats_to_source(&us, "127.0.0.1:1", &ls);
	source_stats_type("udp", &ls);
	source_count(&sv, NULL, "connections", 5);
	source_count(&sv, NULL, "requests", 4);
	source_count(&sv, "rejected", "method", 0);
	source_count(&sv, "rejected", "auth", 1);
	struct openmetrics_input in = { .ses = &ses, .row = row, .m = &m, .listener = &ls,
					.listener_name = "udp", .server = &sv };
	strbuf_init(out);
	openmetrics_write(&in, out);
}

static void run_numbers_in_base_units_with_run_id(void **state)
{
	(void)state;
	struct session_run row = { .run_id = "r-1", .status = RUN_RUNNING };
	struct strbuf o;
	write_all(&row, &o);
	assert_true(has_line(o.data, "# TYPE roastop_chunks counter"));
	assert_true(has_line(o.data, "roastop_chunks_total{run_id=\"r-1\"} 42"));
	/* a gauge: a retry that succeeds takes a failed chunk off */
	assert_true(has_line(o.data, "# TYPE roastop_chunks_failed gauge"));
	assert_true(has_line(o.data, "roastop_chunks_failed{run_id=\"r-1\"} 0"));
	assert_true(has_line(o.data, "roastop_chunk_retries_total{run_id=\"r-1\"} 4"));
	assert_true(has_line(o.data, "# TYPE roastop_events_per_second gauge"));
	assert_true(has_line(o.data, "roastop_events_per_second{run_id=\"r-1\"} 2500"));
	assert_true(has_line(o.data, "roastop_memory_used_bytes{run_id=\"r-1\"} 3221225472"));
	assert_true(has_line(o.data, "roastop_cpu_utilization_ratio{run_id=\"r-1\"} 0.5"));
	assert_true(has_line(o.data, "roastop_run_status{run_id=\"r-1\",status=\"running\"} 1"));
	assert_true(has_line(o.data, "roastop_run_status{run_id=\"r-1\",status=\"failed\"} 0"));
	assert_true(has_line(o.data, "roastop_run_closed{run_id=\"r-1\"} 0"));
	strbuf_free(&o);
}

static void unmeasured_numbers_have_no_family(void **state)
{
	(void)state;
	struct session_run row = { .run_id = "r" };
	struct strbuf o;
	write_all(&row, &o);
	assert_null(strstr(o.data, "roastop_workers"));
	assert_null(strstr(o.data, "roastop_threads"));
	assert_null(strstr(o.data, "roastop_eta_seconds"));
	strbuf_free(&o);
}

static void counters_of_the_listener_and_server(void **state)
{
	(void)state;
	struct strbuf o;
	write_all(NULL, &o);
	assert_true(has_line(o.data, "roastop_chunks_total 42")); /* the watch: no run_id */
	assert_null(strstr(o.data, "roastop_run_status"));
	assert_true(has_line(o.data, "roastop_runs_total 3"));
	assert_true(has_line(o.data, "roastop_udp_datagrams_total 100"));
	assert_true(has_line(o.data, "roastop_udp_datagrams_rejected_total{reason=\"bad_tag\"} 7"));
	assert_true(has_line(o.data, "roastop_udp_decode_rejected_total{reason=\"not_json\"} 2"));
	assert_true(has_line(o.data, "roastop_http_requests_total 4"));
	assert_true(has_line(o.data, "roastop_http_requests_rejected_total{reason=\"auth\"} 1"));
	assert_true(has_line(o.data, "roastop_http_requests_rejected_total{reason=\"method\"} 0"));
	assert_true(has_line(o.data, "roastop_http_connections_total 5"));
	size_t n = strlen(o.data);
	assert_true(n > 6 && strcmp(o.data + n - 6, "# EOF\n") == 0);
	assert_int_equal(strstr(o.data, "# EOF") - o.data, (long)(n - 6)); /* only at the end */
	strbuf_free(&o);
}

/* The listener's datagrams over 64 KiB and the decoder's bodies over its
 * bound are one reason, one key (a JSON object holds a name once). */
static void too_large_is_one_reason(void **state)
{
	(void)state;
	struct udp_stats us = { .datagrams = 3 };
	us.rejected[UDP_TOO_LARGE] = 1;
	us.json.by_reason[DEC_TOO_LARGE] = 2;
	static struct source_stats ls;
	memset(&ls, 0, sizeof(ls));
	udp_stats_to_source(&us, "127.0.0.1:1", &ls);
	int seen = 0;
	for (size_t i = 0; i < ls.n_counters; i++) {
		if (strcmp(ls.counters[i].name, "too_large") != 0)
			continue;
		seen++;
		assert_int_equal(ls.counters[i].value, 3);
	}
	assert_int_equal(seen, 1);
}

static void label_values_are_escaped(void **state)
{
	(void)state;
	struct session_run row = { .run_id = "a\"b\\c\nd" };
	struct strbuf o;
	write_all(&row, &o);
	assert_true(has_line(o.data, "roastop_chunks_total{run_id=\"a\\\"b\\\\c\\nd\"} 42"));
	strbuf_free(&o);
}

/* 4 files of 4 chunks of 1,000 events, 1 s each; slow_factor for the last
 * file's. */
static void files_run(struct run *r, double slow_factor)
{
	static const char *const files[4] = { "/d/a.root", "/d/b.root", "/d/c.root", "/d/d.root" };
	assert_int_equal(run_init(r), 0);
	double t = 100;
	for (int i = 0; i < 16; i++) {
		double d = i % 4 == 3 ? slow_factor : 1;
		struct event ev = test_event(EV_CHUNK, t + d);
		ev.u.chunk.file = files[i % 4];
		ev.u.chunk.dataset = "ds";
		ev.u.chunk.duration = optnum_of(d);
		ev.u.chunk.num_events = optnum_of(1000);
		assert_int_equal(run_apply(r, &ev), 0);
		t += d;
	}
}

/* A gauge per finding id, 1 while it holds for the newest run, else 0. */
static void a_gauge_per_finding(void **state)
{
	(void)state;
	for (int slow = 0; slow < 2; slow++) {
		static struct run r;
		static struct metrics m;
		files_run(&r, slow ? 10 : 1);
		metrics_compute(&r, 200, NULL, &m);
		static struct findings all, rec;
		struct diagnosis_context ctx = { .now = 200 };
		diagnosis_evaluate(&r, &m, &ctx, &all);
		diagnosis_of_record(&all, &rec);
		struct session_run row = { .run_id = "r-2", .run = &r };
		struct openmetrics_input in = { .row = &row, .m = &m, .findings = &rec };
		struct strbuf o;
		strbuf_init(&o);
		openmetrics_write(&in, &o);
		assert_true(has_line(o.data, "# TYPE roastop_finding gauge"));
		assert_true(has_line(o.data, slow ? "roastop_finding{run_id=\"r-2\",finding=\"slow_file\"} 1"
						  : "roastop_finding{run_id=\"r-2\",finding=\"slow_file\"} 0"));
		assert_true(has_line(o.data, "roastop_finding{run_id=\"r-2\",finding=\"tail\"} 0"));
		assert_true(has_line(o.data, "roastop_finding{run_id=\"r-2\",finding=\"silent_run\"} 0"));
		strbuf_free(&o);
		run_destroy(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_numbers_in_base_units_with_run_id),
		cmocka_unit_test(unmeasured_numbers_have_no_family),
		cmocka_unit_test(counters_of_the_listener_and_server),
		cmocka_unit_test(label_values_are_escaped),
		cmocka_unit_test(too_large_is_one_reason),
		cmocka_unit_test(a_gauge_per_finding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
