/* report.html: every input string escaped, an empty run all n/a with no
 * number made up, a failed chunk shown, the tables capped, the timelines
 * broken where the scheduler was lost. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "roastop/report_html.h"

#define HOSTILE "<script>alert(1)</script>&\"'"
#define HOSTILE_ESC "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"

static struct run R;
static struct strbuf out;

static int setup(void **state)
{
	(void)state;
	strbuf_init(&out);
	return run_init(&R);
}

static int teardown(void **state)
{
	(void)state;
	run_destroy(&R);
	strbuf_free(&out);
	return 0;
}

static void apply(struct event ev)
{
	assert_int_equal(run_apply(&R, &ev), 0);
}

static void run_start(double t, const char *name)
{
	struct event ev = test_event(EV_RUN_START, t);
	ev.u.run_start.run_id = "r1";
	ev.u.run_start.name = name;
	ev.u.run_start.processor = name;
	apply(ev);
}

static void chunk(double t, const char *ds, const char *file, double dur, const char *error)
{
	struct event ev = test_event(EV_CHUNK, t);
	ev.u.chunk.dataset = ds;
	ev.u.chunk.file = file;
	ev.u.chunk.worker = ds;
	ev.u.chunk.duration = optnum_of(dur);
	ev.u.chunk.num_events = optnum_of(1000);
	ev.u.chunk.error = error;
	struct kv_num sec = { ds, dur / 2 };
	ev.u.chunk.timing = &sec;
	ev.u.chunk.n_timing = 1;
	apply(ev);
}

static void sample(double t, uint32_t workers)
{
	struct worker_sample w[2] = {
		{ .id = "tcp://a:1", .name = HOSTILE, .nthreads = optnum_of(2),
		  .memory_bytes = optnum_of(1 << 30), .memory_limit = optnum_of(4.0 * (1 << 30)),
		  .cpu_percent = optnum_of(90), .executing = optnum_of(2) },
		{ .id = "tcp://b:1", .name = "b", .nthreads = optnum_of(2),
		  .memory_bytes = optnum_of(1 << 29), .memory_limit = optnum_of(4.0 * (1 << 30)),
		  .cpu_percent = optnum_of(50), .executing = optnum_of(1) },
	};
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample.source = "state";
	ev.u.sample.worker_count = workers;
	ev.u.sample.n_workers = workers;
	ev.u.sample.workers = w;
	apply(ev);
}

static void scheduler_lost(double t)
{
	struct event ev = test_event(EV_STATUS, t);
	ev.u.status.source = "scheduler";
	ev.u.status.state = SRC_LOST;
	ev.u.status.reason = HOSTILE;
	ev.u.status.gaps_timelines = (optnum){ 1, true };
	apply(ev);
}

static void run_end(double t, const char *status, const char *type, const char *message)
{
	struct event ev = test_event(EV_RUN_END, t);
	ev.u.run_end.run_id = "r1";
	ev.u.run_end.status = status;
	ev.u.run_end.error_type = type;
	ev.u.run_end.error_message = message;
	apply(ev);
}

static void render(double now)
{
	struct metrics m;
	metrics_compute(&R, now, NULL, &m);
	strbuf_reset(&out);
	report_html_write(&m, &R, NULL, NULL, &out);
	assert_false(out.failed);
	assert_non_null(out.data);
}

static size_t count_of(const char *needle)
{
	size_t n = 0;
	for (const char *p = out.data; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The page is whole: one document, every section closed. */
static void assert_whole(void)
{
	assert_true(strncmp(out.data, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(out.data, "</body></html>\n"));
	assert_int_equal(count_of("<section"), count_of("</section>"));
	assert_int_equal(count_of("<svg"), count_of("</svg>"));
	assert_int_equal(count_of("<table"), count_of("</table>"));
}

/* No script of its own, so any "<script" would be an input's. */
static void test_escapes_every_input_string(void **state)
{
	(void)state;
	run_start(100, HOSTILE);
	sample(101, 2);
	chunk(102, HOSTILE, HOSTILE, 0.5, NULL);
	chunk(103, HOSTILE, HOSTILE, 0.7, HOSTILE);
	run_end(104, "failed", HOSTILE, HOSTILE);
	render(200);
	assert_whole();
	assert_null(strstr(out.data, "<script"));
	assert_null(strstr(out.data, "alert(1)</"));
	/* run name (title, heading), dataset, file, worker, section, error
	 * type, status reason */
	assert_true(count_of(HOSTILE_ESC) >= 8);
	assert_non_null(strstr(out.data, "data-dataset=\"" HOSTILE_ESC "\""));
	assert_non_null(strstr(out.data, "data-status=\"failed\""));
}

static void test_control_characters_are_replaced(void **state)
{
	(void)state;
	run_start(100, "a\x01" "b\x7f" "c");
	render(101);
	assert_non_null(strstr(out.data, "a?b?c"));
	assert_null(strchr(out.data, '\x01'));
	assert_null(strchr(out.data, '\x7f'));
}

/* Nothing measured: n/a and null throughout, never a 0, NaN or inf. */
static void test_empty_run_is_all_na(void **state)
{
	(void)state;
	render(100);
	assert_whole();
	assert_null(strstr(out.data, "nan"));
	assert_null(strstr(out.data, "inf\""));
	assert_null(strstr(out.data, "<svg id=\"hist\""));
	assert_null(strstr(out.data, "<svg id=\"tl-"));
	assert_non_null(strstr(out.data, "n/a: no successful chunks"));
	assert_non_null(strstr(out.data, "n/a: no scheduler samples"));
	assert_non_null(strstr(out.data, "n/a: no Dask fine metrics received"));
	assert_non_null(strstr(out.data, "data-key=\"num_chunks\" data-value=\"null\""));
	assert_non_null(strstr(out.data, "data-key=\"chunk_duration_p50\" data-value=\"null\""));
	assert_null(strstr(out.data, "data-value=\"0\""));
}

static void test_failed_chunk_is_listed(void **state)
{
	(void)state;
	run_start(100, "one-fails");
	chunk(101, "ds", "f.root", 0.5, NULL);
	chunk(102, "ds", "g.root", 0.25, "ValueError");
	run_end(103, "completed", NULL, NULL);
	render(200);
	assert_whole();
	assert_non_null(strstr(out.data, "<p data-failed=\"1\">1 of 2 chunks failed"));
	assert_non_null(strstr(out.data, "<tr data-chunks=\"1\"><td>ValueError</td>"));
	/* and the chunk itself: its file, dataset and worker */
	assert_non_null(strstr(out.data, "<table class=\"failed-chunks\">"));
	assert_non_null(strstr(out.data, "<tr><td>ValueError</td><td>g.root</td><td class=\"n\">n/a</td>"
					 "<td>ds</td><td>ds</td>"));
	/* the histogram counts the successful chunk alone */
	assert_non_null(strstr(out.data, "<svg id=\"hist\""));
	assert_non_null(strstr(out.data, " data-n=\"1\" data-p50=\"0.5\""));
	assert_non_null(strstr(out.data, "data-dataset=\"ds\" data-chunks=\"1\" data-failed=\"1\""));
	assert_non_null(strstr(out.data, "data-key=\"num_failed_chunks\" data-value=\"1\""));
}

/* REPORT_HTML_MAX_ROWS rows, then a count of the rest. */
static void test_tables_are_capped(void **state)
{
	(void)state;
	run_start(100, "many");
	char name[32];
	for (int i = 0; i < REPORT_HTML_MAX_ROWS + 10; i++) {
		snprintf(name, sizeof(name), "ds%03d", i);
		chunk(101 + i * 0.01, name, name, 1 + i, NULL);
	}
	render(200);
	assert_whole();
	assert_int_equal(count_of("<tr data-dataset="), REPORT_HTML_MAX_ROWS);
	assert_int_equal(count_of("data-more=\"10\""), 3); /* datasets, files, sections */
	/* largest first: the slowest dataset leads, the 10 fastest are left out */
	assert_non_null(strstr(out.data, "data-dataset=\"ds059\""));
	assert_null(strstr(out.data, "data-dataset=\"ds009\""));
	assert_true(strstr(out.data, "data-dataset=\"ds059\"") <
		    strstr(out.data, "data-dataset=\"ds058\""));
}

/* A lost scheduler breaks every line and shades the gap. */
static void test_timeline_gap(void **state)
{
	(void)state;
	run_start(100, "gap");
	sample(101, 2);
	sample(102, 2);
	scheduler_lost(103);
	sample(110, 1);
	sample(111, 1);
	run_end(112, "completed", NULL, NULL);
	render(200);
	assert_whole();
	assert_non_null(strstr(out.data, "<g data-series=\"workers\" data-points=\"4\" data-gaps=\"1\""));
	assert_non_null(strstr(out.data, "data-max=\"2\""));
	/* two stretches per line, six lines (memory has two) */
	assert_int_equal(count_of("<polyline"), 2 * 6);
	assert_int_equal(count_of("<rect class=\"gap\""), 5); /* one per chart */
}

static void connected(double t)
{
	struct event ev = test_event(EV_STATUS, t);
	ev.u.status.source = "scheduler";
	ev.u.status.state = SRC_CONNECTED;
	apply(ev);
}

/* A name of n bytes that escapes to six times its length. */
static const char *quotes(char *buf, size_t n, int i)
{
	memset(buf, '"', n);
	buf[n] = '\0';
	char id[8];
	snprintf(id, sizeof(id), "%06d", i % 1000000);
	memcpy(buf, id, 6);
	return buf;
}

/* The worst a run can make it: every timeline full and broken at every
 * point (the scheduler lost between every two samples), every table past
 * its cap, names that escape sixfold. The bound docs/metrics.md states. */
static void test_size_is_bounded(void **state)
{
	(void)state;
	run_start(100, "big");
	for (int i = 0; i < RUN_TIMELINE_POINTS - 1; i++) { /* full, not yet halved */
		sample(101 + i, 2);
		scheduler_lost(101.4 + i);
		connected(101.5 + i);
	}
	char ds[RUN_NAME_LEN], file[RUN_KEY_MAX + 1], err[RUN_KEY_MAX + 1];
	for (int i = 0; i < 400; i++) {
		double t = 101 + i * 0.01;
		quotes(ds, RUN_NAME_LEN - 1, i);
		quotes(file, RUN_KEY_MAX, i);
		quotes(err, RUN_KEY_MAX, i);
		chunk(t, ds, file, 1 + i, NULL);
		chunk(t, ds, file, 1 + i, err);
	}
	render(1e4);
	assert_whole();
	printf("report.html, worst case: %zu bytes\n", out.len);
	assert_true(out.len < 2u << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_escapes_every_input_string, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_characters_are_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_run_is_all_na, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_chunk_is_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tables_are_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_is_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
