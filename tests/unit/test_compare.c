/* roastop compare: two measurements' metrics.json read by the writer's own
 * keys (a roastcoffea one with Python's NaN and Infinity too), the change
 * from metrics_change, n/a where a side lacks a number, the findings each
 * had or n/a, and lines that fit 80 columns. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/compare.h"

static const char *const ROASTCOFFEA =
	"{\"elapsed_time_seconds\": 10, \"total_events\": 1000, \"event_rate_elapsed_khz\": 0.1,"
	" \"core_efficiency\": NaN, \"num_chunks\": 4, \"data_rate_gbps\": Infinity,"
	" \"note\": \"NaN \\\" Infinity in a string\", \"speedup_factor\": -Infinity}";

static const char *const ROASTOP =
	"{\"elapsed_time_seconds\": 5, \"total_events\": 1000, \"event_rate_elapsed_khz\": 0.2,"
	" \"num_chunks\": 8, \"core_efficiency\": 0.5, \"run_name\": \"b\","
	" \"run_status\": \"completed\", \"roastop\": {\"version\": \"9.9\", \"retries\":"
	" {\"count\": 2}, \"findings\": [{\"id\": \"chunks-too-small\", \"severity\":"
	" \"warning\", \"title\": \"Chunks too small\\u0007\"}, 7]}}";

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Removes what the tests made: the files named (relative to dir), then dir. */
static void remove_all(const char *dir, const char *const *names, size_t n)
{
	char path[600];
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		assert_true(unlink(path) == 0 || rmdir(path) == 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

static char *make_dir(char *tmpl)
{
	assert_non_null(mkdtemp(tmpl));
	return tmpl;
}

static void change_is_the_metrics_module_s(void **state)
{
	(void)state;
	optnum d, p;
	metrics_change(optnum_of(10), optnum_of(5), &d, &p);
	assert_near(d.value, -5, 1e-12);
	assert_near(p.value, -50, 1e-12);
	metrics_change(optnum_of(0), optnum_of(5), &d, &p);
	assert_true(d.valid && !p.valid); /* no percentage of nothing */
	metrics_change(optnum_none(), optnum_of(5), &d, &p);
	assert_false(d.valid || p.valid); /* n/a, never against 0 */
}

static void two_measurements_side_by_side(void **state)
{
	(void)state;
	char ta[] = "/tmp/roastop-cmpA-XXXXXX", tb[] = "/tmp/roastop-cmpB-XXXXXX";
	char *a = make_dir(ta), *b = make_dir(tb);
	write_file(a, "metrics.json", ROASTCOFFEA);
	char run[600];
	snprintf(run, sizeof(run), "%s/run1", b); /* an output root: its latest */
	assert_int_equal(mkdir(run, 0755), 0);
	write_file(run, "metrics.json", ROASTOP);
	char latest[600];
	snprintf(latest, sizeof(latest), "%s/latest", b);
	assert_int_equal(symlink("run1", latest), 0);
	static struct compare_side sa, sb;
	char err[256];
	assert_int_equal(compare_load(a, &sa, err, sizeof(err)), 0);
	assert_int_equal(compare_load(b, &sb, err, sizeof(err)), 0);
	assert_string_equal(sa.writer, "roastcoffea");
	assert_string_equal(sb.writer, "roastop 9.9");
	assert_false(sa.m.core_efficiency.valid || sa.m.data_rate_gbps.valid);
	assert_false(sa.m.speedup_factor.valid || sa.m.num_failed_chunks.valid);
	assert_true(sb.m.chunk_retries.valid && sb.m.chunk_retries.value == 2);
	assert_false(sa.has_findings);
	assert_true(sb.has_findings);
	assert_int_equal(sb.findings_total, 2);
	assert_int_equal(sb.n_findings, 1); /* not an object: counted, not listed */
	struct strbuf o;
	strbuf_init(&o);
	compare_write(&o, &sa, &sb);
	const char *t = o.data;
	assert_non_null(strstr(t, "Event rate (elapsed)"));
	assert_non_null(strstr(t, "100 Hz"));
	assert_non_null(strstr(t, "+100 Hz (+100.0 %)"));
	assert_non_null(strstr(t, "-5.0s (-50.0 %)"));
	assert_non_null(strstr(t, "A  findings: n/a"));
	assert_non_null(strstr(t, "B  2 findings"));
	assert_non_null(strstr(t, "warning  chunks-too-small: Chunks too small?"));
	const char *eff = strstr(t, "Core efficiency");
	assert_non_null(eff);
	assert_true(strncmp(strchr(eff, '\n') - 3, "n/a", 3) == 0); /* A lacks it: no change */
	for (const char *line = t; *line;) {
		const char *nl = strchr(line, '\n');
		assert_non_null(nl);
		assert_true(nl - line <= 80);
		line = nl + 1;
	}
	strbuf_free(&o);
	static const char *const in_a[] = { "metrics.json" };
	static const char *const in_b[] = { "latest", "run1/metrics.json", "run1" };
	remove_all(a, in_a, 1);
	remove_all(b, in_b, 3);
}

static void unreadable_measurements_are_refused(void **state)
{
	(void)state;
	char td[] = "/tmp/roastop-cmpC-XXXXXX";
	char *d = make_dir(td);
	static struct compare_side s;
	char err[256];
	assert_int_equal(compare_load(d, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "metrics.json"));
	write_file(d, "metrics.json", "[1, 2]");
	assert_int_equal(compare_load(d, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a JSON object"));
	write_file(d, "metrics.json", "{\"total_events\": NaN");
	assert_int_equal(compare_load(d, &s, err, sizeof(err)), -1);
	FILE *null = fopen("/dev/null", "w");
	assert_int_equal(compare_main(d, d, null, null), 1);
	fclose(null);
	static const char *const made[] = { "metrics.json" };
	remove_all(d, made, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(change_is_the_metrics_module_s),
		cmocka_unit_test(two_measurements_side_by_side),
		cmocka_unit_test(unreadable_measurements_are_refused),
	};
	return cmocka_run_group_tests_name("compare", tests, NULL, NULL);
}
