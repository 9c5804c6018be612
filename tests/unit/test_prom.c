#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/prom.h"

struct seen {
	int n;
	char names[16][64];
	double values[16];
	char state[16][32];
	int n_labels[16];
};

static void collect(void *ctx, const struct prom_sample *s)
{
	struct seen *seen = ctx;
	if (seen->n >= 16)
		return;
	snprintf(seen->names[seen->n], 64, "%s", s->name);
	seen->values[seen->n] = s->value;
	const char *st = prom_label(s, "state");
	snprintf(seen->state[seen->n], 32, "%s", st ? st : "");
	seen->n_labels[seen->n] = (int)s->n_labels;
	seen->n++;
}

static void dask_like_text(void **state)
{
	(void)state;
	const char *text =
		"# HELP dask_scheduler_workers Number of workers known by scheduler\n"
		"# TYPE dask_scheduler_workers gauge\n"
		"dask_scheduler_workers{state=\"idle\"} 2.0\n"
		"dask_scheduler_workers{state=\"saturated\"} 0.0\n"
		"dask_scheduler_tasks{state=\"memory\"} 17.0\n"
		"dask_scheduler_tasks_compute_seconds_total{task_prefix_name=\"sum\"} 1.5e-3\n"
		"process_start_time_seconds 1.76722560e+09\r\n"
		"weird_value NaN\n"
		"\n"
		"with_ts{a=\"x\\\"y\\\\z\\n\",b=\"2\",} 3 1700000000000\n";
	struct seen seen = { 0 };
	struct prom_stats st;
	prom_parse(text, strlen(text), collect, &seen, &st);
	assert_int_equal(st.samples, 7);
	assert_int_equal(st.comments, 2);
	assert_int_equal(st.first_bad_line, 0);
	assert_string_equal(seen.names[0], "dask_scheduler_workers");
	assert_string_equal(seen.state[0], "idle");
	assert_near(seen.values[0], 2, 0);
	assert_near(seen.values[3], 1.5e-3, 1e-15);
	assert_near(seen.values[4], 1767225600, 0);
	assert_true(isnan(seen.values[5]));
	assert_int_equal(seen.n_labels[6], 2);
}

static void bad_lines_counted_good_kept(void **state)
{
	(void)state;
	const char *text = "good 1\n"
			   "9bad 1\n"
			   "x{a=1} 2\n"
			   "x{a=\"unterminated} 2\n"
			   "y 0x10\n"
			   "y inf\n"
			   "z 1 notatime\n"
			   "good 2\n";
	struct seen seen = { 0 };
	struct prom_stats st;
	prom_parse(text, strlen(text), collect, &seen, &st);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.rejected[PROM_BAD_NAME], 1);
	assert_int_equal(st.rejected[PROM_BAD_LABELS], 2);
	assert_int_equal(st.rejected[PROM_BAD_VALUE], 2);
	assert_int_equal(st.rejected[PROM_BAD_TIMESTAMP], 1);
	assert_int_equal(st.first_bad_line, 2);
	assert_near(seen.values[1], 2, 0);
}

static void limits(void **state)
{
	(void)state;
	struct seen seen = { 0 };
	struct prom_stats st;
	char *big = malloc(PROM_MAX_LINE + 100);
	memset(big, 'a', PROM_MAX_LINE + 50);
	memcpy(big + PROM_MAX_LINE + 50, " 1\nok 1\n", 9);
	prom_parse(big, strlen(big), collect, &seen, &st);
	assert_int_equal(st.rejected[PROM_LINE_TOO_LONG], 1);
	assert_int_equal(st.samples, 1);
	free(big);
	char many[4096] = "m{";
	for (int i = 0; i <= PROM_MAX_LABELS; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "l%d=\"v\",", i);
	strcat(many, "} 1\n");
	prom_parse(many, strlen(many), collect, &seen, &st);
	assert_int_equal(st.rejected[PROM_TOO_MANY_LABELS], 1);
}

/* A timestamp past int64 was clamped by strtoll to INT64_MAX and kept as
 * if given: a rejection now, counted as bad_timestamp. */
static void timestamp_out_of_range(void **state)
{
	(void)state;
	const char *text = "a 1 9223372036854775807\n"
			   "b 1 9223372036854775808\n"
			   "c 1 -9223372036854775809\n"
			   "d 1 99999999999999999999999999\n"
			   "e 1 -1700000000000\n";
	struct seen seen = { 0 };
	struct prom_stats st;
	prom_parse(text, strlen(text), collect, &seen, &st);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.rejected[PROM_BAD_TIMESTAMP], 3);
	assert_int_equal(st.first_bad_line, 2);
	assert_string_equal(seen.names[0], "a");
	assert_string_equal(seen.names[1], "e");
}

struct workers {
	double idle, total_states;
	uint64_t samples;
};

static void count_workers(void *ctx, const struct prom_sample *s)
{
	struct workers *w = ctx;
	w->samples++;
	if (strcmp(s->name, "dask_scheduler_workers") != 0)
		return;
	const char *st = prom_label(s, "state");
	w->total_states += s->value;
	if (st && strcmp(st, "idle") == 0)
		w->idle = s->value;
}

/* The scheduler's real /metrics (distributed 2026.8.0, two idle workers). */
static void real_dask_fixture(void **state)
{
	(void)state;
	FILE *f = fopen("tests/fixtures/dask-2026.8.0/scheduler-metrics.txt", "r");
	assert_non_null(f);
	static char text[1 << 20];
	size_t len = fread(text, 1, sizeof(text), f);
	fclose(f);
	uint64_t sample_lines = 0;
	for (const char *p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		if (*p != '#' && *p != '\n')
			sample_lines++;
		p = nl ? nl + 1 : text + len;
	}
	struct workers w = { 0 };
	struct prom_stats st;
	prom_parse(text, len, count_workers, &w, &st);
	assert_int_equal(st.first_bad_line, 0);
	assert_int_equal(st.samples, sample_lines);
	assert_near(w.idle, 2, 0);
	assert_near(w.total_states, 2, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dask_like_text),
		cmocka_unit_test(bad_lines_counted_good_kept),
		cmocka_unit_test(limits),
		cmocka_unit_test(timestamp_out_of_range),
		cmocka_unit_test(real_dask_fixture),
	};
	return cmocka_run_group_tests_name("prom", tests, NULL, NULL);
}
