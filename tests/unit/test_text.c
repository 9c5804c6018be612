/* The summary tables: every value from struct metrics, "n/a" for what was
 * not measured, aligned columns, names from the wire kept on one line. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "roastop/report_text.h"

#define VALUE_COL 37 /* "  " + 34-wide label + " " */

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

static void chunk(double t, const char *ds, double dur, double events)
{
	struct event ev = test_event(EV_CHUNK, t);
	ev.u.chunk.dataset = ds;
	ev.u.chunk.duration = optnum_of(dur);
	ev.u.chunk.num_events = optnum_of(events);
	apply(ev);
}

static void summarise(double now)
{
	struct metrics m;
	metrics_compute(&R, now, NULL, &m);
	strbuf_reset(&out);
	text_summary(&m, &R, NULL, &out);
	assert_false(out.failed);
}

/* The line that starts with "  label" followed by padding, or NULL. */
static const char *line_of(const char *label)
{
	char key[64];
	snprintf(key, sizeof(key), "\n  %s ", label);
	const char *p = strstr(out.data, key);
	return p ? p + 1 : NULL;
}

/* The value column of that line, up to the newline. */
static void value_of(const char *label, char *buf, size_t size)
{
	const char *l = line_of(label);
	assert_non_null(l);
	const char *nl = strchr(l, '\n');
	assert_true(nl - l > VALUE_COL);
	assert_true(l[VALUE_COL - 1] == ' ' && l[VALUE_COL] != ' '); /* aligned */
	size_t n = (size_t)(nl - l - VALUE_COL);
	assert_true(n < size);
	memcpy(buf, l + VALUE_COL, n);
	buf[n] = '\0';
}

static void assert_value(const char *label, const char *want)
{
	char got[128];
	value_of(label, got, sizeof(got));
	assert_string_equal(got, want);
}

static void empty_run_is_all_na(void **state)
{
	(void)state;
	summarise(100);
	static const char *titles[] = { "Throughput Metrics", "Event Processing Metrics",
					"Resource Utilization", "Timing Breakdown", "Fine Metrics",
					"Chunk Metrics" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(titles); i++)
		assert_non_null(strstr(out.data, titles[i]));
	assert_non_null(strstr(out.data, "no run-start received"));
	/* every value printed is "n/a", never a made-up 0 */
	int rows = 0;
	for (const char *l = out.data; (l = strstr(l, "\n  ")); l++) {
		if (l[3] == ' ')
			continue;
		const char *nl = strchr(l + 1, '\n');
		assert_true(nl - (l + 1) > VALUE_COL);
		assert_memory_equal(l + 1 + VALUE_COL, "n/a", 3);
		rows++;
	}
	assert_true(rows >= 20);
	assert_value("Fine metrics", "n/a (no Dask fine metrics received)");
	assert_value("Chunk records", "n/a (none received)");
}

/* run 0..8, report 4,200 events / 7 s / 2 chunks / 3e6 bytes; samples of 2
 * workers x 4 threads at 0 and 8 (8 cores); chunks 2 s and 4 s. */
static void full_run_values(void **state)
{
	(void)state;
	struct event ev = test_event(EV_RUN_START, 0);
	ev.u.run_start.run_id = "r7";
	ev.u.run_start.name = "ttbar-scan";
	ev.u.run_start.processor = "MyProc";
	apply(ev);
	struct worker_sample ws[2] = {
		{ .id = "a", .nthreads = optnum_of(4), .memory_bytes = optnum_of(1536),
		  .memory_limit = optnum_of(3072), .cpu_percent = optnum_of(40) },
		{ .id = "b", .nthreads = optnum_of(4), .memory_bytes = optnum_of(1536),
		  .memory_limit = optnum_of(3072), .cpu_percent = optnum_of(60) },
	};
	for (double t = 0; t <= 8; t += 8) {
		ev = test_event(EV_SAMPLE, t);
		ev.u.sample = (struct ev_sample){ .worker_count = 2, .n_workers = 2, .workers = ws };
		apply(ev);
	}
	chunk(2, "ttbar", 2, 1000);
	chunk(4, "wjets", 4, 3000);
	struct fine_row rows[] = { { "execute", "MyProc", "thread-cpu", "seconds", 6 },
				   { "execute", "MyProc", "thread-noncpu", "seconds", 2 },
				   { "execute", "other", "thread-cpu", "seconds", 90 } };
	ev = test_event(EV_FINE, 7);
	ev.u.fine = (struct ev_fine){ FINE_SPAN, 3, rows };
	apply(ev);
	ev = test_event(EV_REPORT, 8);
	ev.u.report = (struct ev_report){ .bytesread = optnum_of(3e6), .entries = optnum_of(4200),
					  .processtime = optnum_of(7), .chunks = optnum_of(2) };
	apply(ev);
	apply(test_event(EV_RUN_END, 8));
	summarise(100);

	assert_non_null(strstr(out.data, "roastop " ROASTOP_VERSION " summary - run ttbar-scan (MyProc)\nrun ended: completed\n"));
	/* 3e6 x 8 / 8 s = 3 Mbps; 3e6 / 8 s = 375 kB/s: rates in decimal units */
	assert_value("Data Rate", "3.00 Mbps (375 kB/s)");
	assert_value("Total Bytes Read (Coffea)", "2.86 MiB (coffea report)"); /* sizes IEC */
	assert_value("Total Events", "4,200 (coffea report)");
	assert_value("Event Rate (Elapsed Time)", "525 Hz"); /* 4200 / 8 */
	assert_value("Event Rate (Total CPU)", "600 Hz");    /* 4200 / 7 */
	assert_value("Event Rate (Core-Averaged)", "65.6 Hz/core"); /* 4200 / (8 x 8) */
	assert_value("Efficiency Ratio", "87.5 %");	       /* 0.525 / 0.6 */
	assert_value("Total Cores (Time-Averaged)", "8.0");
	assert_value("Core Efficiency", "10.9 %"); /* 7 / (8 x 8) = 0.109375 */
	assert_value("Speedup Factor", "0.9x");	   /* 7 / 8 */
	assert_value("Peak Memory (per worker)", "1.50 KiB");
	assert_value("Memory Utilization (mean)", "50.0 %");
	assert_value("CPU Utilization (mean)", "50.0 %");
	assert_value("Elapsed Time", "8.0s");
	assert_value("Total CPU Time", "7.0s (coffea report)");
	assert_value("Number of Chunks", "2 (chunk records)");
	assert_value("Avg CPU Time/Chunk", "3.5s");
	assert_value("Chunks per Second", "0.25");
	assert_non_null(strstr(out.data, "Fine Metrics (Dask span)"));
	assert_value("Processor CPU Time", "6.0s");
	assert_value("  CPU %", "75.0 %");
	assert_value("Dask Overhead CPU Time", "1m 30s");
	assert_value("I/O Overhead (of core time)", "3.1 %"); /* 2 / 64 x 100 */
	assert_value("Mean Chunk Time", "3.0s");
	/* the per-dataset table, one aligned row per dataset */
	char want[160];
	snprintf(want, sizeof(want), "    %-28s %8s %7s %14s %10s %10s\n", "wjets", "1", "0", "3,000",
		 "4.0s", "4.0s");
	assert_non_null(strstr(out.data, want));
	assert_non_null(strstr(out.data, "Per-Dataset Breakdown"));
}

/* Item 8 of issue 18: sizes in IEC units (the emitter's "MB" is rss / 2^20,
 * so a memory delta is MiB), durations under 1 s in ms, rates with an SI
 * prefix that fits (kHz -> MHz), and a note saying which is which. */
static void units_iec_sizes_decimal_rates(void **state)
{
	(void)state;
	struct event ev = test_event(EV_RUN_START, 0);
	ev.u.run_start.run_id = "u";
	apply(ev);
	for (int i = 0; i < 4; i++) {
		ev = test_event(EV_CHUNK, 0.5 + 0.1 * i);
		ev.u.chunk.dataset = "fast";
		ev.u.chunk.duration = optnum_of(0.215);
		ev.u.chunk.num_events = optnum_of(1e5);
		ev.u.chunk.mem_delta_mb = optnum_of(12.5);
		struct kv_num kv = { "fill", 0.5 };
		ev.u.chunk.memory = &kv;
		ev.u.chunk.n_memory = 1;
		apply(ev);
	}
	apply(test_event(EV_RUN_END, 1));
	summarise(1);
	assert_value("Mean Chunk Time", "215 ms");
	assert_value("  p50", "215 ms");
	assert_value("Elapsed Time", "1.0s");
	assert_value("Event Rate (Elapsed Time)", "400 kHz"); /* 4e5 events / 1 s */
	assert_value("Mean Memory Delta", "12.5 MiB");
	char want[160];
	snprintf(want, sizeof(want), "    %-28s %8s %7s %14s %10s %10s\n", "fast", "4", "0", "400,000",
		 "215 ms", "215 ms");
	assert_non_null(strstr(out.data, want));
	snprintf(want, sizeof(want), "    %-28s %8s %10s %10s %10s\n", "fill", "4", "512 KiB",
		 "512 KiB", "512 KiB");
	assert_non_null(strstr(out.data, want));
	assert_non_null(strstr(out.data, "KiB, MiB, GiB"));
	assert_non_null(strstr(out.data, "decimal"));
	assert_null(strstr(out.data, " KB"));
	assert_null(strstr(out.data, " MB\n"));
}

static void unknown_processor_has_no_overhead(void **state)
{
	(void)state;
	struct fine_row row = { "execute", "anything", "thread-cpu", "seconds", 5 };
	struct event ev = test_event(EV_FINE, 1);
	ev.u.fine = (struct ev_fine){ FINE_CLUSTER, 1, &row };
	apply(ev);
	summarise(1);
	assert_non_null(strstr(out.data, "Fine Metrics (Dask cluster counters)"));
	assert_value("Dask Overhead", "n/a (processor name unknown: all tasks counted above)");
	assert_null(line_of("Dask Overhead CPU Time"));
}

static void timed_section(double t, const char *name, double seconds)
{
	struct event ev = test_event(EV_CHUNK, t);
	ev.u.chunk.duration = optnum_of(1);
	struct kv_num kv = { name, seconds };
	ev.u.chunk.timing = &kv;
	ev.u.chunk.n_timing = 1;
	apply(ev);
}

/* Sections by total, largest first; past ten, a count of the rest. */
static void sections_sorted_and_capped(void **state)
{
	(void)state;
	timed_section(1, "small", 1);
	timed_section(2, "big", 10);
	timed_section(3, "big", 10);
	char name[16];
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "s%02d", i);
		timed_section(4 + i, name, 2);
	}
	summarise(20);
	const char *big = strstr(out.data, "    big "), *s00 = strstr(out.data, "    s00 ");
	assert_non_null(big);
	assert_non_null(s00);
	assert_true(big < s00);
	assert_null(strstr(out.data, "    small ")); /* 11th and 12th by total */
	assert_non_null(strstr(out.data, "(2 more in metrics.json)"));
	char want[160];
	snprintf(want, sizeof(want), "    %-28s %8s %10s %10s %10s\n", "big", "2", "10.0s", "20.0s",
		 "10.0s");
	assert_non_null(strstr(out.data, want));
}

/* A newline in a dataset or error name must not break the table. */
static void wire_names_stay_on_one_line(void **state)
{
	(void)state;
	chunk(1, "evil\nname\t", 1, 10);
	struct event ev = test_event(EV_CHUNK, 2);
	ev.u.chunk.duration = optnum_of(1);
	ev.u.chunk.error = "Bad\rError";
	apply(ev);
	summarise(2);
	assert_non_null(strstr(out.data, "    evil?name?"));
	assert_non_null(strstr(out.data, "      Bad?Error"));
	assert_null(strstr(out.data, "\nname"));
	assert_null(strchr(out.data, '\r'));
	assert_null(strchr(out.data, '\t'));
	assert_value("  Failed", "1");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(empty_run_is_all_na),
		T(full_run_values),
		T(units_iec_sizes_decimal_rates),
		T(unknown_processor_has_no_overhead),
		T(sections_sorted_and_capped),
		T(wire_names_stay_on_one_line),
	};
	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
