/* Every formula on hand-computed cases. States are built through run_apply
 * with hand-made events, as the real sources would build them; the
 * expected values are worked out in the comments. */
#include "test_util.h"

#include <cjson/cJSON.h>
#include <string.h>
#include <time.h>

#include "roastop/metrics.h"
#include "roastop/metrics_json.h"

static struct run R;

static int setup(void **state)
{
	*state = &R;
	return run_init(&R);
}

static int teardown(void **state)
{
	run_destroy(*state);
	return 0;
}

static void apply(struct event ev)
{
	assert_int_equal(run_apply(&R, &ev), 0);
}

static void start(double t, const char *processor)
{
	struct event ev = test_event(EV_RUN_START, t);
	ev.u.run_start.run_id = "r";
	ev.u.run_start.processor = processor;
	apply(ev);
}

static void end(double t)
{
	apply(test_event(EV_RUN_END, t));
}

static void report(double t, double bytes, double entries, double ptime, double chunks)
{
	struct event ev = test_event(EV_REPORT, t);
	ev.u.report = (struct ev_report){ .bytesread = optnum_of(bytes), .entries = optnum_of(entries),
					  .processtime = optnum_of(ptime), .chunks = optnum_of(chunks) };
	apply(ev);
}

static struct event chunk_ev(double t, const char *ds, double dur)
{
	struct event ev = test_event(EV_CHUNK, t);
	ev.u.chunk.dataset = ds;
	ev.u.chunk.duration = optnum_of(dur);
	return ev;
}

/* A successful chunk with events, bytes and a memory delta of dur x 10 MB. */
static void chunk(double t, const char *ds, double dur, double events, double bytes)
{
	struct event ev = chunk_ev(t, ds, dur);
	ev.u.chunk.num_events = optnum_of(events);
	ev.u.chunk.bytes_read = optnum_of(bytes);
	ev.u.chunk.mem_delta_mb = optnum_of(dur * 10);
	apply(ev);
}

static void failed_chunk(double t, const char *ds, const char *error)
{
	struct event ev = chunk_ev(t, ds, 99);
	ev.u.chunk.num_events = optnum_of(1e6);
	ev.u.chunk.error = error;
	apply(ev);
}

struct w {
	const char *id;
	double threads, mem, cpu;
};

/* A detailed scheduler sample; every worker has a 1000-byte memory limit. */
static void sample_of(double t, const struct w *ws, size_t n)
{
	struct worker_sample s[8];
	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		s[i] = (struct worker_sample){ .id = ws[i].id, .nthreads = optnum_of(ws[i].threads),
					       .memory_bytes = optnum_of(ws[i].mem),
					       .memory_limit = optnum_of(1000),
					       .cpu_percent = optnum_of(ws[i].cpu) };
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample = (struct ev_sample){ .worker_count = (uint32_t)n, .n_workers = n, .workers = s };
	apply(ev);
}

/* n identical workers w0.. with the given threads and memory mem + index. */
static void sample(double t, size_t n, double threads_each, double mem_each)
{
	static const char *ids[8] = { "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7" };
	struct w ws[8] = { 0 };
	for (size_t i = 0; i < n; i++)
		ws[i] = (struct w){ ids[i], threads_each, mem_each + (double)i, 50 + (double)i };
	sample_of(t, ws, n);
}

static void fine_rows(double t, enum fine_scope scope, struct fine_row *rows, size_t n)
{
	struct event ev = test_event(EV_FINE, t);
	ev.u.fine = (struct ev_fine){ scope, n, rows };
	apply(ev);
}

static void fine_row(double t, enum fine_scope scope, const char *prefix, const char *act,
		     const char *unit, double v)
{
	struct fine_row row = { "execute", prefix, act, unit, v };
	fine_rows(t, scope, &row, 1);
}

static void compute(struct metrics *m, double now)
{
	metrics_compute(&R, now, NULL, m);
}

/* metrics.json as the exporter writes it, parsed back. */
static cJSON *to_json(const struct metrics *m)
{
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(metrics_write_json(m, &R, NULL, NULL, &sb), 0);
	cJSON *j = cJSON_Parse(sb.data);
	assert_non_null(j);
	strbuf_free(&sb);
	return j;
}

static double jnum(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static bool jnull(const cJSON *obj, const char *key)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(obj, key));
}

static bool jhas(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key) != NULL;
}

static const char *jstr(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- nothing measured ------------------------------------------------- */

static void nothing_measured_is_null_or_absent(void **state)
{
	(void)state;
	struct metrics m;
	compute(&m, 100);
	assert_false(m.elapsed_time_seconds.valid);
	assert_false(m.total_events.valid);
	assert_false(m.num_chunks.valid);
	assert_false(m.avg_workers.valid);
	assert_false(m.speedup_factor.valid);
	assert_false(m.processor_cpu_time_seconds.valid);
	assert_false(m.has_fine);
	cJSON *j = to_json(&m);
	/* keys roastcoffea always writes: present, null */
	static const char *always[] = { "data_rate_gbps", "total_events", "elapsed_time_seconds",
					"num_chunks", "avg_workers", "total_cores",
					"core_efficiency", "speedup_factor", "tracking_data" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(always); i++)
		assert_true(jnull(j, always[i]));
	/* groups roastcoffea writes only with their source: absent */
	static const char *absent[] = { "processor_cpu_time_seconds", "num_successful_chunks",
					"per_dataset", "file_metadata", "total_branches_read",
					"data_rate_mb_per_s", "chunk_duration_p50", "section_summary" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(absent); i++)
		assert_false(jhas(j, absent[i]));
	const cJSON *src = cJSON_GetObjectItem(j, "metric_sources");
	assert_true(jnull(src, "total_events"));
	assert_true(jnull(src, "fine_metrics"));
	cJSON_Delete(j);
}

/* ---- elapsed ------------------------------------------------------------ */

static void elapsed_without_markers_runs_first_event_to_now(void **state)
{
	(void)state;
	sample(5, 1, 1, 1);
	chunk(8, "a", 1, 10, 0);
	struct metrics m;
	compute(&m, 20);
	assert_near(m.elapsed_time_seconds.value, 15, 1e-12); /* 20 - 5 */
	assert_near(m.t_start, 5, 0);
	compute(&m, 6); /* a stale clock never ends before the latest event (8) */
	assert_near(m.elapsed_time_seconds.value, 3, 1e-12);
}

static void elapsed_with_markers_ignores_now(void **state)
{
	(void)state;
	sample(1, 1, 1, 1);
	start(10, "P");
	end(30);
	struct metrics m;
	compute(&m, 1000);
	assert_near(m.elapsed_time_seconds.value, 20, 1e-12);
	assert_near(m.t_start, 10, 0);
	assert_near(m.t_end, 30, 0);
}

static void zero_elapsed_gives_null_rates(void **state)
{
	(void)state;
	start(50, NULL);
	chunk(50, "a", 1, 10, 10);
	end(50);
	struct metrics m;
	compute(&m, 50);
	assert_true(m.elapsed_time_seconds.valid);
	assert_near(m.elapsed_time_seconds.value, 0, 0);
	assert_false(m.event_rate_elapsed_khz.valid);
	assert_false(m.data_rate_gbps.valid);
	assert_false(m.speedup_factor.valid);
	assert_false(m.chunks_per_second.valid);
	assert_false(m.efficiency_ratio.valid);
	assert_true(m.event_rate_cpu_total_khz.valid); /* 10 events / 1 s: no elapsed needed */
	assert_near(m.event_rate_cpu_total_khz.value, 0.01, 1e-12);
}

static void run_end_before_start_is_invalid(void **state)
{
	(void)state;
	start(100, "P");
	chunk(101, "a", 1, 10, 10);
	end(90); /* out of order: a negative interval is not a measurement */
	struct metrics m;
	compute(&m, 200);
	assert_false(m.elapsed_time_seconds.valid);
	assert_false(m.event_rate_elapsed_khz.valid);
	cJSON *j = to_json(&m);
	assert_true(jnull(j, "elapsed_time_seconds"));
	cJSON_Delete(j);
}

/* ---- workflow ------------------------------------------------------------ */

/* run 100..110; chunks 2 s/1000 ev/1e6 B and 4 s/3000 ev/3e6 B */
static void workflow_from_chunks_then_report(void **state)
{
	(void)state;
	start(100, "P");
	chunk(102, "a", 2, 1000, 1e6);
	chunk(104, "b", 4, 3000, 3e6);
	struct metrics m;
	compute(&m, 110);
	assert_near(m.elapsed_time_seconds.value, 10, 1e-12); /* live: until now */
	assert_near(m.total_events.value, 4000, 0);
	assert_int_equal(m.src_events, TOTAL_CHUNKS);
	assert_int_equal(m.src_cpu, TOTAL_CHUNKS);
	assert_int_equal(m.src_bytes, TOTAL_CHUNKS);
	assert_near(m.total_cpu_time.value, 6, 1e-12);
	assert_near(m.total_bytes_read.value, 4e6, 0);
	assert_near(m.num_chunks.value, 2, 0);
	assert_near(m.avg_cpu_time_per_chunk.value, 3, 1e-12);	/* 6 / 2 */
	assert_near(m.event_rate_elapsed_khz.value, 0.4, 1e-12); /* 4000 / 10 / 1000 */
	assert_near(m.event_rate_cpu_total_khz.value, 4000.0 / 6 / 1000, 1e-12);
	assert_near(m.efficiency_ratio.value, 0.4 / (4000.0 / 6 / 1000), 1e-12); /* = 0.6 */
	assert_near(m.data_rate_gbps.value, 4e6 * 8 / 1e9 / 10, 1e-12);
	assert_near(m.data_rate_mb_per_s.value, 0.4, 1e-12);
	assert_near(m.speedup_factor.value, 0.6, 1e-12);
	assert_near(m.chunks_per_second.value, 0.2, 1e-12);
	assert_false(m.core_efficiency.valid); /* no workers seen */
	assert_false(m.event_rate_core_khz.valid);

	report(108, 5e6, 4200, 7, 2);
	end(108);
	compute(&m, 500);
	assert_near(m.elapsed_time_seconds.value, 8, 1e-12); /* ended: until run end */
	assert_near(m.total_events.value, 4200, 0);
	assert_int_equal(m.src_events, TOTAL_REPORT);
	assert_near(m.total_cpu_time.value, 7, 0);
	assert_near(m.avg_cpu_time_per_chunk.value, 3.5, 1e-12); /* 7 / report's 2 */
	assert_near(m.total_bytes_read.value, 5e6, 0);
	assert_near(m.num_chunks.value, 2, 0);
	assert_int_equal(m.src_chunks, TOTAL_CHUNKS); /* chunk records override the report */
	assert_near(m.total_events_from_chunks.value, 4000, 0);
	cJSON *j = to_json(&m);
	const cJSON *src = cJSON_GetObjectItem(j, "metric_sources");
	assert_string_equal(jstr(src, "total_events"), "coffea_report");
	assert_string_equal(jstr(src, "num_chunks"), "chunks");
	assert_near(jnum(j, "total_events"), 4200, 0);
	cJSON_Delete(j);
}

/* report only: 1e9 bytes, 1000 events, 50 s, 10 chunks over 0..100 */
static void report_without_chunk_records(void **state)
{
	(void)state;
	start(0, "P");
	report(100, 1e9, 1000, 50, 10);
	end(100);
	struct metrics m;
	compute(&m, 100);
	assert_near(m.num_chunks.value, 10, 0);
	assert_int_equal(m.src_chunks, TOTAL_REPORT);
	assert_near(m.avg_cpu_time_per_chunk.value, 5, 1e-12);
	assert_near(m.data_rate_gbps.value, 0.08, 1e-12);
	assert_near(m.event_rate_elapsed_khz.value, 0.01, 1e-12);
	assert_near(m.event_rate_cpu_total_khz.value, 0.02, 1e-12);
	assert_near(m.efficiency_ratio.value, 0.5, 1e-12);
	assert_near(m.chunks_per_second.value, 0.1, 1e-12);
	assert_false(m.num_successful_chunks.valid);
	cJSON *j = to_json(&m);
	assert_false(jhas(j, "num_successful_chunks")); /* roastcoffea: no chunk group */
	assert_false(jhas(j, "per_dataset"));
	assert_false(jhas(j, "file_metadata"));
	assert_near(jnum(j, "num_chunks"), 10, 0);
	cJSON_Delete(j);
}

/* the report's chunks (3) lose to the 4 chunk records, failed one included */
static void failed_chunks_count_but_stay_out_of_statistics(void **state)
{
	(void)state;
	chunk(1, "a", 1, 100, 0);
	chunk(2, "a", 3, 300, 0);
	chunk(3, "b", 5, 50, 0);
	failed_chunk(4, "b", "KeyError");
	report(5, 0, 450, 9, 3);
	struct metrics m;
	compute(&m, 5);
	assert_near(m.num_chunks.value, 4, 0);
	assert_near(m.num_successful_chunks.value, 3, 0);
	assert_near(m.num_failed_chunks.value, 1, 0);
	assert_near(m.chunk_duration_mean.value, 3, 1e-12); /* (1 + 3 + 5) / 3, not 99 */
	assert_near(m.chunk_duration_std.value, 2, 1e-12);  /* sample std of 1, 3, 5 */
	assert_near(m.chunk_duration_min.value, 1, 0);
	assert_near(m.chunk_duration_max.value, 5, 0);
	assert_near(m.chunk_mem_delta_mean_mb.value, 30, 1e-12); /* 10, 30, 50 */
	assert_near(m.chunk_mem_delta_std_mb.value, 20, 1e-12);
	assert_near(m.total_events_from_chunks.value, 450, 0);
	assert_near(m.chunk_events_mean.value, 150, 1e-12);
	assert_near(m.chunk_events_min.value, 50, 0);
	assert_near(m.chunk_events_max.value, 300, 0);
	/* avg_cpu_time_per_chunk divides the report's time by the report's chunks */
	assert_near(m.avg_cpu_time_per_chunk.value, 3, 1e-12);
}

static void one_chunk_has_zero_std(void **state)
{
	(void)state;
	chunk(1, "a", 2.5, 10, 0);
	struct metrics m;
	compute(&m, 1);
	assert_near(m.chunk_duration_std.value, 0, 0);
	assert_near(m.chunk_mem_delta_std_mb.value, 0, 0);
	assert_near(m.chunk_duration_p50.value, 2.5, 0); /* clamped to the exact min/max */
}

static void only_failed_chunks(void **state)
{
	(void)state;
	failed_chunk(1, "a", "OSError");
	failed_chunk(2, "a", "OSError");
	struct metrics m;
	compute(&m, 2);
	assert_near(m.num_chunks.value, 2, 0);
	assert_near(m.num_failed_chunks.value, 2, 0);
	assert_near(m.num_successful_chunks.value, 0, 0);
	assert_false(m.chunk_duration_mean.valid);
	assert_false(m.total_events.valid); /* nothing succeeded: no event total */
	cJSON *j = to_json(&m);
	assert_near(jnum(j, "num_failed_chunks"), 2, 0);
	assert_false(jhas(j, "chunk_duration_mean")); /* roastcoffea stops after the counts */
	assert_false(jhas(j, "per_dataset"));
	const cJSON *errs = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "roastop"), "chunk_errors");
	assert_near(jnum(errs, "OSError"), 2, 0);
	cJSON_Delete(j);
}

/* mem delta from before/after when the chunk has no delta; missing events */
static void chunk_fields_optional(void **state)
{
	(void)state;
	struct event ev = chunk_ev(1, "a", 2);
	ev.u.chunk.mem_before_mb = optnum_of(100);
	ev.u.chunk.mem_after_mb = optnum_of(130);
	apply(ev);
	apply(chunk_ev(2, "a", 4));
	struct metrics m;
	compute(&m, 2);
	assert_near(m.chunk_mem_delta_mean_mb.value, 30, 1e-12); /* only the first had memory */
	assert_false(m.total_events_from_chunks.valid);
	assert_false(m.chunk_events_mean.valid);
	cJSON *j = to_json(&m);
	assert_false(jhas(j, "chunk_events_mean"));
	assert_false(jhas(j, "total_events_from_chunks"));
	const cJSON *a = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "per_dataset"), "a");
	assert_near(jnum(a, "total_events"), 0, 0);
	assert_false(jhas(a, "mean_events_per_chunk")); /* roastcoffea: only when events > 0 */
	assert_near(jnum(a, "mean_duration"), 3, 1e-12);
	cJSON_Delete(j);
}

static void per_dataset_one_and_several(void **state)
{
	(void)state;
	chunk(1, "a", 1, 100, 0);
	struct metrics m;
	compute(&m, 1);
	cJSON *j = to_json(&m);
	const cJSON *pd = cJSON_GetObjectItem(j, "per_dataset");
	assert_int_equal(cJSON_GetArraySize(pd), 1);
	assert_near(jnum(cJSON_GetObjectItem(pd, "a"), "mean_events_per_chunk"), 100, 0);
	cJSON_Delete(j);

	chunk(2, "a", 3, 300, 0);
	chunk(3, "b", 5, 50, 0);
	failed_chunk(4, "b", "KeyError");
	failed_chunk(5, "c", "KeyError"); /* no successful chunk: not in per_dataset */
	apply(chunk_ev(6, NULL, 2));	  /* no dataset: "unknown", as roastcoffea */
	compute(&m, 6);
	j = to_json(&m);
	pd = cJSON_GetObjectItem(j, "per_dataset");
	assert_int_equal(cJSON_GetArraySize(pd), 3);
	const cJSON *a = cJSON_GetObjectItem(pd, "a"), *b = cJSON_GetObjectItem(pd, "b");
	assert_near(jnum(a, "num_chunks"), 2, 0);
	assert_near(jnum(a, "total_duration"), 4, 1e-12);
	assert_near(jnum(a, "total_events"), 400, 0);
	assert_near(jnum(a, "mean_duration"), 2, 1e-12);
	assert_near(jnum(a, "mean_events_per_chunk"), 200, 1e-12);
	assert_near(jnum(b, "num_chunks"), 1, 0); /* the failed one is left out */
	assert_near(jnum(b, "total_duration"), 5, 0);
	assert_false(jhas(pd, "c"));
	assert_near(jnum(cJSON_GetObjectItem(pd, "unknown"), "num_chunks"), 1, 0);
	cJSON_Delete(j);

	struct dataset_metrics d;
	assert_true(metrics_dataset(&R, &m, 1, &d));
	assert_string_equal(d.name, "b");
	assert_int_equal(d.num_failed, 1);
	assert_near(d.event_rate_khz.value, 50.0 / 5 / 1000, 1e-12);
	assert_near(d.share_of_time_percent.value, 5.0 / 11.0 * 100, 1e-12); /* 1+3+5+2 */
	assert_true(metrics_dataset(&R, &m, 2, &d));
	assert_string_equal(d.name, "c");
	assert_int_equal(d.num_chunks, 0);
	assert_false(d.mean_duration.valid);
	assert_true(metrics_dataset(&R, &m, 3, &d));
	assert_false(metrics_dataset(&R, &m, 4, &d));
}

/* durations 1..100 s: nearest-rank p50 = 50, p90 = 90, p99 = 99 (1 % bins) */
static void quantiles_from_histogram(void **state)
{
	(void)state;
	for (int i = 1; i <= 100; i++)
		chunk(i, "a", i, 1, 0);
	struct metrics m;
	compute(&m, 100);
	assert_near(m.chunk_duration_p50.value, 50, 0.01);
	assert_near(m.chunk_duration_p90.value, 90, 0.01);
	assert_near(m.chunk_duration_p99.value, 99, 0.01);
	assert_near(m.chunk_duration_mean.value, 50.5, 1e-12);
}

/* ---- workers --------------------------------------------------------- */

/* Samples at 0, 10, 20 with 2, 4, 4 workers of 4 threads:
 * workers (30 + 40) / 20 = 3.5; threads (120 + 160) / 20 = 14 */
static void workers_time_weighted(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 2, 4, 100);
	sample(10, 4, 4, 100);
	sample(20, 4, 4, 300);
	chunk(20, "a", 10, 1000, 0);
	struct metrics m;
	compute(&m, 20);
	assert_near(m.avg_workers.value, 3.5, 1e-12);
	assert_near(m.peak_workers.value, 4, 0);
	assert_near(m.total_cores.value, 14, 1e-12);
	assert_near(m.total_threads_avg.value, 14, 1e-12);
	assert_near(m.cores_per_worker.value, 4, 0);
	assert_near(m.peak_memory_bytes.value, 303, 0);
	/* w0: 100,100,300 over 0..20 -> (1000 + 2000)/20 = 150; w1: 101,101,301 -> 151;
	 * w2: 102 (10), 302 (20) -> 202; w3: 103, 303 -> 203; mean = 706/4 = 176.5 */
	assert_near(m.avg_memory_per_worker_bytes.value, 176.5, 1e-12);
	assert_near(m.core_efficiency.value, 10.0 / 280.0, 1e-12); /* 10 / (14 x 20) */
	assert_near(m.event_rate_core_khz.value, 1000.0 / 280.0 / 1000, 1e-12);
	assert_near(m.memory_utilization_max_percent.value, 30.3, 1e-12);
	assert_near(m.memory_utilization_min_percent.value, 10.0, 1e-12);
	assert_near(m.workers_now.value, 4, 0);
	assert_near(m.total_threads_now.value, 16, 0);
}

/* Workers come and go; w2 has 8 threads and is seen once.
 *   t=0:  w0 (4 thr, 100 B, 10 %), w1 (4, 200, 20 %)
 *   t=10: w0 (4, 300, 10 %), w1 (4, 200, 20 %), w2 (8, 1000, 60 %)
 *   t=20: w0 (4, 100, 10 %)
 * workers 2, 3, 1: ((2+3)/2 x 10 + (3+1)/2 x 10) / 20 = 45 / 20 = 2.25
 * threads 8, 16, 4: (120 + 100) / 20 = 11 (roastcoffea's code would say 4+4+8 = 16)
 * cores/worker: (4 + 4 + 8) / 3; memory: w0 200, w1 200, w2 1000 -> 1400 / 3
 * memory %: 10 20 30 20 100 10 -> mean 190/6, min 10, max 100
 * CPU %: 10 20 10 20 60 10 -> 130 / 6
 * chunks of 20, 12 and 12 s (44 s) and 2200 events; elapsed and window 0..20:
 * core_efficiency 44 / (11 x 20) = 0.2; speedup 2.2; per core 2200/220/1000 = 0.01 kHz
 * processor non-CPU 22 s: io_overhead_pct = 22 / (11 x 20) x 100 = 10 */
static void workers_join_and_leave(void **state)
{
	(void)state;
	sample_of(0, (struct w[]){ { "w0", 4, 100, 10 }, { "w1", 4, 200, 20 } }, 2);
	sample_of(10, (struct w[]){ { "w0", 4, 300, 10 }, { "w1", 4, 200, 20 }, { "w2", 8, 1000, 60 } },
		  3);
	sample_of(20, (struct w[]){ { "w0", 4, 100, 10 } }, 1);
	chunk(20, "a", 20, 1000, 0);
	chunk(20, "a", 12, 600, 0);
	chunk(20, "a", 12, 600, 0);
	fine_row(20, FINE_SPAN, "P", "thread-noncpu", "seconds", 22);
	struct metrics m;
	compute(&m, 20);
	assert_near(m.elapsed_time_seconds.value, 20, 0);
	assert_near(m.avg_workers.value, 2.25, 1e-12);
	assert_near(m.peak_workers.value, 3, 0);
	assert_near(m.total_cores.value, 11, 1e-12);
	assert_near(m.cores_per_worker.value, 16.0 / 3.0, 1e-12);
	assert_near(m.avg_memory_per_worker_bytes.value, 1400.0 / 3.0, 1e-12);
	assert_near(m.peak_memory_bytes.value, 1000, 0);
	assert_near(m.memory_utilization_mean_percent.value, 190.0 / 6.0, 1e-12);
	assert_near(m.memory_utilization_min_percent.value, 10, 1e-12);
	assert_near(m.memory_utilization_max_percent.value, 100, 1e-12);
	assert_near(m.cpu_utilization_mean_percent.value, 130.0 / 6.0, 1e-12);
	assert_near(m.core_efficiency.value, 0.2, 1e-12);
	assert_near(m.speedup_factor.value, 2.2, 1e-12);
	assert_near(m.event_rate_core_khz.value, 0.01, 1e-12);
	assert_near(m.io_overhead_pct.value, 10, 1e-12);
	assert_near(m.workers_now.value, 1, 0);
	assert_near(m.total_threads_now.value, 4, 0);
}

static void single_sample_is_its_own_average(void **state)
{
	(void)state;
	sample(5, 3, 2, 10);
	struct metrics m;
	compute(&m, 5);
	assert_near(m.avg_workers.value, 3, 0);
	assert_near(m.total_cores.value, 6, 0);
	assert_near(m.avg_memory_per_worker_bytes.value, 11, 1e-12); /* 10, 11, 12 */
	assert_false(m.core_efficiency.valid);			     /* elapsed 0 */
}

/* An empty cluster: 0 workers is a measurement, cores x elapsed = 0 is not
 * a denominator, per-worker averages have no workers to average. */
static void no_workers(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 0, 0, 0);
	sample(10, 0, 0, 0);
	chunk(10, "a", 5, 100, 0);
	struct metrics m;
	compute(&m, 10);
	assert_near(m.avg_workers.value, 0, 0);
	assert_near(m.peak_workers.value, 0, 0);
	assert_near(m.total_cores.value, 0, 0);
	assert_false(m.core_efficiency.valid);
	assert_false(m.event_rate_core_khz.valid);
	assert_false(m.cores_per_worker.valid);
	assert_false(m.avg_memory_per_worker_bytes.valid);
	assert_false(m.peak_memory_bytes.valid);
	/* 5 s of chunk time on no thread: the inputs contradict each other */
	assert_false(m.speedup_factor.valid);
	assert_false(m.efficiency_ratio.valid); /* a speedup too */
	assert_int_equal(m.n_warnings, 2);
	assert_string_equal(m.warnings[0].key, "speedup_factor");
	assert_string_equal(m.warnings[1].key, "efficiency_ratio");
	cJSON *j = to_json(&m);
	assert_true(jnull(j, "core_efficiency"));
	assert_true(jnull(j, "cores_per_worker"));
	assert_near(jnum(j, "avg_workers"), 0, 0);
	assert_false(jhas(j, "memory_utilization_mean_percent"));
	cJSON_Delete(j);
}

/* The scheduler was lost from 15 to 40: 2 workers for 10 s, then 4 for
 * 10 s; the 25 s gap counts on neither side: (20 + 40) / 20 = 3 */
static void scheduler_gap_excluded(void **state)
{
	(void)state;
	sample(0, 2, 1, 0);
	sample(10, 2, 1, 0);
	struct event st = test_event(EV_STATUS, 15);
	st.u.status = (struct ev_status){ .source = "scheduler", .state = SRC_LOST,
					  .gaps_timelines = { 1, true } };
	apply(st);
	sample(40, 4, 1, 0);
	sample(50, 4, 1, 0);
	struct metrics m;
	compute(&m, 50);
	assert_near(m.avg_workers.value, 3, 1e-12);
	assert_near(m.total_cores.value, 3, 1e-12);
}

/* ---- fine metrics ---------------------------------------------------- */

static struct fine_row span_rows[] = {
	{ "execute", "MyProc", "thread-cpu", "seconds", 30 },
	{ "execute", "MyProc", "thread-noncpu", "seconds", 10 },
	{ "execute", "lambda", "thread-cpu", "seconds", 2 },
	{ "execute", "lambda", "thread-noncpu", "seconds", 1 },
	{ "execute", "MyProc", "disk-read", "bytes", 500 },
	{ "execute", "MyProc", "disk-read", "seconds", 7 }, /* time, not bytes: ignored */
	{ "execute", "MyProc", "disk-write", "bytes", 300 },
	{ "execute", "MyProc", "memory-read", "bytes", 900 },
	{ "execute", "MyProc", "memory-read", "count", 4 }, /* ignored */
	{ "execute", "MyProc", "serialize", "seconds", 1.5 },
	{ "execute", "lambda", "deserialize", "seconds", 0.5 },
	{ "execute", "MyProc", "compress", "seconds", 0.25 },
	{ "execute", "MyProc", "decompress", "seconds", 0.75 },
	{ "gather-dep", "", "decompress", "seconds", 100 }, /* not task execution */
	{ "execute", "MyProc", "executor", "seconds", 50 }, /* no roastcoffea key */
};

static void fine_metrics_split_by_processor(void **state)
{
	(void)state;
	start(0, "MyProc");
	fine_rows(1, FINE_SPAN, span_rows, ROASTOP_ARRAY_LEN(span_rows));
	fine_row(1, FINE_CLUSTER, "MyProc", "thread-cpu", "seconds", 1e6); /* span wins */
	struct metrics m;
	compute(&m, 10);
	assert_true(m.has_fine);
	assert_true(m.fine_from_span);
	assert_true(m.processor_known);
	assert_near(m.processor_cpu_time_seconds.value, 30, 0);
	assert_near(m.processor_io_wait_time_seconds.value, 10, 0);
	assert_near(m.processor_cpu_percent.value, 75, 1e-12);
	assert_near(m.processor_io_wait_percent.value, 25, 1e-12);
	assert_near(m.overhead_cpu_time_seconds.value, 2, 0);
	assert_near(m.overhead_io_wait_time_seconds.value, 1, 0);
	assert_near(m.overhead_cpu_percent.value, 200.0 / 3.0, 1e-12);
	assert_near(m.overhead_io_wait_percent.value, 100.0 / 3.0, 1e-12);
	assert_near(m.disk_read_bytes.value, 500, 0);
	assert_near(m.disk_write_bytes.value, 300, 0);
	assert_near(m.total_bytes_memory_read.value, 900, 0);
	assert_near(m.serialization_time_seconds.value, 1.5, 0);
	assert_near(m.deserialization_time_seconds.value, 0.5, 0);
	assert_near(m.total_serialization_overhead_seconds.value, 2, 1e-12);
	assert_near(m.compression_time_seconds.value, 0.25, 0);
	assert_near(m.decompression_time_seconds.value, 0.75, 0);
	assert_near(m.total_compression_overhead_seconds.value, 1, 1e-12);

	struct metrics_options o = { .processor_prefix = "lam*" };
	metrics_compute(&R, 10, &o, &m);
	assert_near(m.processor_cpu_time_seconds.value, 2, 0);
	assert_near(m.processor_io_wait_time_seconds.value, 1, 0);
	assert_near(m.processor_cpu_percent.value, 200.0 / 3.0, 1e-12);
	assert_near(m.overhead_cpu_time_seconds.value, 30, 0);
	o.processor_prefix = "*";
	metrics_compute(&R, 10, &o, &m);
	assert_near(m.processor_cpu_time_seconds.value, 32, 0);
	assert_true(m.overhead_cpu_time_seconds.valid); /* measured: nothing else ran */
	assert_near(m.overhead_cpu_time_seconds.value, 0, 0);
}

/* Cluster counters: rows in the first snapshot are a baseline, later rows
 * count from 0. No processor name: all rows are processor work and the
 * overhead is unknown (null, where roastcoffea writes 0). */
static void fine_without_processor_name(void **state)
{
	(void)state;
	fine_row(1, FINE_CLUSTER, "a", "thread-cpu", "seconds", 5); /* baseline */
	fine_row(2, FINE_CLUSTER, "a", "thread-cpu", "seconds", 9);
	fine_row(2, FINE_CLUSTER, "b", "thread-cpu", "seconds", 3); /* new later: from 0 */
	struct metrics m;
	compute(&m, 2);
	assert_false(m.fine_from_span);
	assert_false(m.processor_known);
	assert_near(m.processor_cpu_time_seconds.value, 7, 0); /* (9 - 5) + 3 */
	assert_near(m.processor_cpu_percent.value, 100, 1e-12);
	assert_near(m.processor_io_wait_percent.value, 0, 0);
	assert_false(m.overhead_cpu_time_seconds.valid);
	assert_false(m.overhead_io_wait_time_seconds.valid);
	assert_false(m.overhead_cpu_percent.valid);
	assert_false(m.io_overhead_pct.valid); /* no cores known */
	cJSON *j = to_json(&m);
	assert_true(jnull(j, "overhead_cpu_time_seconds")); /* the fine group is written */
	assert_near(jnum(j, "processor_cpu_time_seconds"), 7, 0);
	assert_near(jnum(j, "disk_read_bytes"), 0, 0);
	assert_string_equal(jstr(cJSON_GetObjectItem(j, "metric_sources"), "fine_metrics"), "cluster");
	cJSON_Delete(j);
}

static void fine_zero_time_has_no_percent(void **state)
{
	(void)state;
	start(0, "P");
	fine_row(1, FINE_SPAN, "P", "disk-read", "bytes", 10);
	struct metrics m;
	compute(&m, 1);
	assert_near(m.processor_cpu_time_seconds.value, 0, 0);
	assert_false(m.processor_cpu_percent.valid); /* 0 / 0; roastcoffea writes 0 */
	assert_false(m.processor_io_wait_percent.valid);
}

/* Cluster rows until the collector opens a span; then the span's rows. */
static void span_replaces_cluster_rows(void **state)
{
	(void)state;
	start(0, "P");
	fine_row(1, FINE_CLUSTER, "P", "thread-cpu", "seconds", 100);
	fine_row(2, FINE_CLUSTER, "P", "thread-cpu", "seconds", 140);
	struct metrics m;
	compute(&m, 2);
	assert_false(m.fine_from_span);
	assert_near(m.processor_cpu_time_seconds.value, 40, 0);
	fine_row(3, FINE_SPAN, "P", "thread-cpu", "seconds", 12);
	compute(&m, 3);
	assert_true(m.fine_from_span);
	assert_near(m.processor_cpu_time_seconds.value, 12, 0); /* a span starts at 0 */
	cJSON *j = to_json(&m);
	assert_string_equal(jstr(cJSON_GetObjectItem(j, "metric_sources"), "fine_metrics"), "span");
	cJSON_Delete(j);
}

/* The scheduler restarts: its counters start again from 0. Growth before
 * (9 - 5) is kept and the new scheduler's 4 added: 8. */
static void scheduler_restart_keeps_fine_growth(void **state)
{
	(void)state;
	struct event s1 = test_event(EV_SAMPLE, 0);
	s1.u.sample = (struct ev_sample){ .scheduler_id = "sched-A", .worker_count = 0 };
	apply(s1);
	fine_row(1, FINE_CLUSTER, "P", "thread-cpu", "seconds", 5);
	fine_row(2, FINE_CLUSTER, "P", "thread-cpu", "seconds", 9);
	struct event s2 = test_event(EV_SAMPLE, 3);
	s2.u.sample = (struct ev_sample){ .scheduler_id = "sched-B", .worker_count = 0 };
	apply(s2);
	fine_row(4, FINE_CLUSTER, "P", "thread-cpu", "seconds", 2);
	fine_row(5, FINE_CLUSTER, "P", "thread-cpu", "seconds", 4);
	struct metrics m;
	compute(&m, 5);
	assert_near(m.processor_cpu_time_seconds.value, 8, 0);
	cJSON *j = to_json(&m);
	const cJSON *ro = cJSON_GetObjectItem(j, "roastop");
	assert_near(jnum(ro, "scheduler_restarts"), 1, 0);
	assert_near(jnum(cJSON_GetObjectItem(ro, "fine_snapshots"), "cluster"), 4, 0);
	cJSON_Delete(j);
}

/* ---- branch coverage ------------------------------------------------- */

static void file_chunk(double t, const char *file, bool meta, double ratio, double branches,
		       double tree_bytes, optnum bytes_pct, optnum branch_pct, optnum accessed,
		       const char **names, size_t n_names)
{
	struct event ev = chunk_ev(t, "d", 1);
	ev.u.chunk.file = file;
	ev.u.chunk.bytes_read_percent = bytes_pct;
	ev.u.chunk.branches_read_percent = branch_pct;
	ev.u.chunk.accessed_bytes = accessed;
	ev.u.chunk.accessed_branches = names;
	ev.u.chunk.n_branches = n_names;
	if (meta) {
		ev.u.chunk.has_file_metadata = true;
		ev.u.chunk.file_metadata = (struct file_meta){ file, optnum_of(ratio),
							       optnum_of(branches), optnum_of(tree_bytes) };
	}
	apply(ev);
}

/* f1: metadata, first chunk reads 20 % of bytes and 10 % of branches;
 * f1's second chunk says 99 % (the first chunk wins, as roastcoffea);
 * f2: metadata, no read percentages (0); f3: no metadata.
 * branches a b | b c | a | d -> 4 distinct. */
static void branch_coverage_as_roastcoffea(void **state)
{
	(void)state;
	file_chunk(1, "f1", true, 0.5, 100, 1e6, optnum_of(20), optnum_of(10), optnum_of(2e5),
		   (const char *[]){ "a", "b" }, 2);
	file_chunk(2, "f1", false, 0, 0, 0, optnum_of(99), optnum_of(99), optnum_of(9e5),
		   (const char *[]){ "b", "c" }, 2);
	file_chunk(3, "f2", true, 0.25, 200, 2e6, optnum_none(), optnum_none(), optnum_none(),
		   (const char *[]){ "a" }, 1);
	file_chunk(4, "f3", false, 0, 0, 0, optnum_of(50), optnum_of(50), optnum_none(),
		   (const char *[]){ "d" }, 1);
	struct metrics m;
	compute(&m, 4);
	assert_near(m.avg_branches_read_percent.value, 5, 1e-12); /* (10 + 0) / 2 */
	assert_near(m.avg_bytes_read_percent.value, 10, 1e-12);	  /* (20 + 0) / 2 */
	assert_near(m.total_branches_read.value, 4, 0);
	cJSON *j = to_json(&m);
	const cJSON *meta = cJSON_GetObjectItem(j, "file_metadata");
	assert_int_equal(cJSON_GetArraySize(meta), 2);
	assert_near(jnum(cJSON_GetObjectItem(meta, "f2"), "compression_ratio"), 0.25, 0);
	assert_string_equal(jstr(cJSON_GetObjectItem(meta, "f1"), "filename"), "f1");
	const cJSON *ratios = cJSON_GetObjectItem(j, "compression_ratios");
	assert_int_equal(cJSON_GetArraySize(ratios), 2);
	assert_near(cJSON_GetArrayItem(ratios, 0)->valuedouble, 0.5, 0);
	const cJSON *reads = cJSON_GetObjectItem(j, "file_read_metrics");
	const cJSON *f1 = cJSON_GetObjectItem(reads, "f1"), *f2 = cJSON_GetObjectItem(reads, "f2");
	assert_near(jnum(f1, "total_branches"), 100, 0);
	assert_near(jnum(f1, "branches_read_percent"), 10, 0);
	assert_near(jnum(f1, "total_tree_bytes"), 1e6, 0);
	assert_near(jnum(f1, "bytes_read"), 2e5, 0);
	assert_near(jnum(f1, "bytes_read_percent"), 20, 0);
	assert_near(jnum(f2, "bytes_read_percent"), 0, 0);
	assert_false(jhas(reads, "f3"));
	const cJSON *per_file = cJSON_GetObjectItem(j, "bytes_read_percent_per_file");
	assert_int_equal(cJSON_GetArraySize(per_file), 1); /* f2's 0 is left out */
	assert_near(cJSON_GetArrayItem(per_file, 0)->valuedouble, 20, 0);
	assert_near(jnum(j, "total_branches_read"), 4, 0);
	cJSON_Delete(j);
}

static void chunks_without_branch_data(void **state)
{
	(void)state;
	chunk(1, "a", 1, 1, 1);
	struct metrics m;
	compute(&m, 1);
	assert_false(m.avg_bytes_read_percent.valid);
	assert_false(m.total_branches_read.valid);
	cJSON *j = to_json(&m);
	assert_true(jnull(j, "avg_bytes_read_percent")); /* roastcoffea writes 0.0 */
	assert_true(jnull(j, "total_branches_read"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "file_metadata")), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "compression_ratios")), 0);
	cJSON_Delete(j);
}

/* ---- sections, progress, JSON rules ------------------------------------ */

static void section_chunk(double t, double jets_s, double hist_mb, double read_b)
{
	struct event ev = chunk_ev(t, "a", 1);
	struct kv_num timing = { "jets", jets_s }, memory = { "hist", hist_mb },
		      bytes = { "read", read_b };
	ev.u.chunk.timing = &timing;
	ev.u.chunk.n_timing = 1;
	ev.u.chunk.memory = &memory;
	ev.u.chunk.n_memory = 1;
	ev.u.chunk.bytes = &bytes;
	ev.u.chunk.n_bytes = 1;
	apply(ev);
}

static void section_summary_shape(void **state)
{
	(void)state;
	section_chunk(1, 0.5, 12, 1000);
	section_chunk(2, 1.5, 4, 3000);
	struct metrics m;
	compute(&m, 2);
	cJSON *j = to_json(&m);
	const cJSON *ss = cJSON_GetObjectItem(j, "section_summary");
	const cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(ss, "timing"), "jets");
	assert_near(jnum(t, "count"), 2, 0);
	assert_near(jnum(t, "total_seconds"), 2, 1e-12);
	assert_near(jnum(t, "mean_seconds"), 1, 1e-12);
	assert_near(jnum(t, "max_seconds"), 1.5, 0);
	assert_int_equal(cJSON_GetArraySize(t), 4);
	const cJSON *mm = cJSON_GetObjectItem(cJSON_GetObjectItem(ss, "memory"), "hist");
	assert_near(jnum(mm, "mean_mb"), 8, 1e-12);
	assert_near(jnum(mm, "min_mb"), 4, 0);
	assert_near(jnum(mm, "max_mb"), 12, 0);
	assert_int_equal(cJSON_GetArraySize(mm), 4);
	const cJSON *b = cJSON_GetObjectItem(cJSON_GetObjectItem(ss, "bytes"), "read");
	assert_near(jnum(b, "total_bytes"), 4000, 0);
	assert_near(jnum(b, "mean_bytes"), 2000, 0);
	assert_int_equal(cJSON_GetArraySize(b), 3);
	cJSON_Delete(j);
}

static void start_expecting(double events)
{
	struct event ev = test_event(EV_RUN_START, 0);
	ev.u.run_start.run_id = "r";
	ev.u.run_start.expected_events = optnum_of(events);
	apply(ev);
}

/* A slow start (10 events at 10, 20, 30 s), then 100 events every 10 s to
 * 100 s: 730 done. The last 60 s, from the 40 s arrival (130 done), gained
 * 600: 10/s, not the run's average 7.3/s; 9,270 left -> 927 s. */
static void eta_from_the_recent_rate(void **state)
{
	(void)state;
	start_expecting(10000);
	for (int t = 10; t <= 100; t += 10)
		chunk(t, "a", 1, t <= 30 ? 10 : 100, 0);
	struct metrics m;
	compute(&m, 100);
	assert_int_equal(m.progress_source, PROGRESS_EVENTS);
	assert_near(m.progress_done.value, 730, 0);
	assert_near(m.progress_total.value, 10000, 0);
	assert_near(m.progress_fraction.value, 0.073, 1e-12);
	assert_near(m.progress_percent.value, 7.3, 1e-12);
	assert_near(m.eta_rate.value, 10, 1e-12);
	assert_near(m.eta_seconds.value, 927, 1e-9);
	cJSON *j = to_json(&m);
	assert_string_equal(jstr(j, "progress_source"), "events");
	assert_near(jnum(j, "eta_seconds"), 927, 1e-9);
	assert_near(jnum(j, "progress_fraction"), 0.073, 1e-12);
	cJSON_Delete(j);
}

/* Nothing arrives after 100 s: at 160 s the window holds one arrival, so
 * the rate reaches back to the 4th latest (70 s, 430 done): 300 events over
 * 90 s, and the ETA grows (9,270 / (10/3) = 2,781 s) instead of standing. */
static void eta_grows_while_stalled(void **state)
{
	(void)state;
	start_expecting(10000);
	for (int t = 10; t <= 100; t += 10)
		chunk(t, "a", 1, t <= 30 ? 10 : 100, 0);
	struct metrics m;
	compute(&m, 160);
	assert_near(m.eta_rate.value, 300.0 / 90, 1e-12);
	assert_near(m.eta_seconds.value, 2781, 1e-9);
}

/* One arrival is no rate; done >= expected is 0 s left while running; an
 * ended run has no ETA but keeps its progress. */
static void eta_unknown_zero_and_over(void **state)
{
	(void)state;
	start_expecting(300);
	chunk(10, "a", 1, 100, 0);
	struct metrics m;
	compute(&m, 10);
	assert_near(m.progress_fraction.value, 1.0 / 3, 1e-12);
	assert_false(m.eta_rate.valid);
	assert_false(m.eta_seconds.valid);
	cJSON *j = to_json(&m);
	assert_false(jhas(j, "eta_seconds")); /* not known: left out, never guessed */
	cJSON_Delete(j);
	chunk(20, "a", 1, 250, 0);
	compute(&m, 20);
	assert_near(m.progress_fraction.value, 350.0 / 300, 1e-12);
	assert_near(m.eta_seconds.value, 0, 0);
	end(25);
	compute(&m, 25);
	assert_false(m.eta_seconds.valid);
	assert_near(m.progress_fraction.value, 350.0 / 300, 1e-12);
}

static void tasks_sample(double t, double done, double total)
{
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample = (struct ev_sample){ .tasks_done = optnum_of(done),
					  .tasks_total = optnum_of(total) };
	apply(ev);
}

/* No expected total: the run's tasks, 1 per second for 60 s of 300, so
 * 240 left at 1/s. Without tasks either, no progress and no ETA. */
static void eta_from_tasks_without_expected_events(void **state)
{
	(void)state;
	start(0, "P");
	struct metrics m;
	compute(&m, 0);
	assert_int_equal(m.progress_source, PROGRESS_NONE);
	assert_false(m.progress_fraction.valid);
	cJSON *j = to_json(&m);
	assert_false(jhas(j, "progress_source"));
	cJSON_Delete(j);
	for (int t = 0; t <= 60; t += 10)
		tasks_sample(t, t, 300);
	chunk(60, "a", 1, 1000, 0);
	compute(&m, 60);
	assert_int_equal(m.progress_source, PROGRESS_TASKS);
	assert_near(m.progress_fraction.value, 0.2, 1e-12);
	assert_near(m.eta_rate.value, 1, 1e-12);
	assert_near(m.eta_seconds.value, 240, 1e-9);
	j = to_json(&m);
	assert_string_equal(jstr(j, "progress_source"), "tasks");
	assert_near(jnum(j, "eta_seconds"), 240, 1e-9);
	cJSON_Delete(j);
}

/* Overflowing sums are not numbers: null in JSON, never inf or NaN. */
static void json_never_has_nan_or_inf(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 1, 1, 1);
	chunk(1, "a", 1e308, 1, 1e308);
	chunk(2, "a", 1e308, 1, 1e308);
	struct metrics m;
	compute(&m, 2);
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(metrics_write_json(&m, &R, NULL, NULL, &sb), 0);
	assert_false(has_token(sb.data, "nan"));
	assert_false(has_token(sb.data, "inf")); /* "chunk_info" is a key, not a number */
	cJSON *j = cJSON_Parse(sb.data);
	assert_non_null(j);
	assert_true(jnull(j, "total_cpu_time"));
	assert_true(jnull(j, "total_bytes_read"));
	cJSON_Delete(j);
	strbuf_free(&sb);
}

static void roastop_block_and_extra(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 1, 1, 1);
	chunk(1, "a", 1, 1, 1);
	struct event bad = test_event(EV_NONE, 1);
	assert_int_equal(run_apply(&R, &bad), 1);
	struct metrics m;
	compute(&m, 1);
	struct strbuf sb;
	strbuf_init(&sb);
	static struct session ses; /* no run, no source: its counters all 0 */
	ses.runs_total = 7;
	struct metrics_extra_input extra = { .ses = &ses, .serve_error = "address in use",
					     .serve_failures = 1 };
	assert_int_equal(metrics_write_json(&m, &R, NULL, &extra, &sb), 0);
	cJSON *j = cJSON_Parse(sb.data);
	const cJSON *ro = cJSON_GetObjectItem(j, "roastop");
	assert_string_equal(jstr(ro, "version"), ROASTOP_VERSION);
	assert_string_equal(jstr(ro, "processor"), "P");
	/* the extras, rendered at the write, each block on one line */
	assert_near(jnum(cJSON_GetObjectItem(ro, "session"), "runs"), 7, 0);
	assert_string_equal(jstr(cJSON_GetObjectItem(ro, "serve"), "error"), "address in use");
	assert_non_null(strstr(sb.data, "\"session\": {\"runs\":7,\"runs_summarised\":0,"));
	assert_null(cJSON_GetObjectItem(ro, "tasks")); /* not asked for */
	assert_near(jnum(ro, "events_ignored"), 1, 0);
	const cJSON *applied = cJSON_GetObjectItem(ro, "events_applied");
	assert_near(jnum(applied, "chunk"), 1, 0);
	assert_near(jnum(applied, "sample"), 1, 0);
	assert_near(jnum(cJSON_GetObjectItem(ro, "overflow"), "files"), 0, 0);
	const cJSON *counts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tracking_data"),
						  "worker_counts");
	assert_int_equal(cJSON_GetArraySize(counts), 1); /* the one sample */
	const cJSON *raw = cJSON_GetObjectItem(ro, "raw_chunks");
	assert_near(jnum(raw, "kept"), 1, 0);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(raw, "sampled")));
	cJSON_Delete(j);
	strbuf_free(&sb);
}

/* The raw data in roastcoffea's form: its timestamps (local time, no
 * offset), a worker's memory and limit at the same times, chunk_info's
 * str(tuple) keys, a record without the fields its chunk did not carry,
 * and the span rows under str(tuple) keys. */
static void raw_data_in_roastcoffeas_form(void **state)
{
	(void)state;
	start(0, "P");
	sample(10, 2, 4, 100);
	sample(11, 2, 4, 200);
	struct event ev = chunk_ev(12, "ttbar", 2);
	ev.u.chunk.file = "/data/a.root";
	ev.u.chunk.entry_start = optnum_of(0);
	ev.u.chunk.entry_stop = optnum_of(100);
	ev.u.chunk.t_start = optnum_of(10);
	ev.u.chunk.t_end = optnum_of(12);
	ev.u.chunk.bytes_read = optnum_of(500);
	apply(ev);
	fine_row(12, FINE_SPAN, "P", "thread-cpu", "seconds", 1.5);
	struct metrics m;
	compute(&m, 12);
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(metrics_write_json(&m, &R, NULL, NULL, &sb), 0);
	cJSON *j = cJSON_Parse(sb.data);
	const cJSON *td = cJSON_GetObjectItem(j, "tracking_data");
	const cJSON *counts = cJSON_GetObjectItem(td, "worker_counts");
	assert_int_equal(cJSON_GetArraySize(counts), 2);
	char iso[40];
	time_t t10 = 10;
	struct tm tm;
	localtime_r(&t10, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S.000000", &tm);
	assert_string_equal(counts->child->string, iso);
	assert_near(counts->child->valuedouble, 2, 0);
	const cJSON *mem = cJSON_GetObjectItem(cJSON_GetObjectItem(td, "worker_memory"), "w1");
	const cJSON *lim = cJSON_GetObjectItem(cJSON_GetObjectItem(td, "worker_memory_limit"), "w1");
	assert_int_equal(cJSON_GetArraySize(mem), 2);
	assert_string_equal(mem->child->child->valuestring, iso);
	assert_near(mem->child->next->child->next->valuedouble, 201, 0);
	assert_string_equal(lim->child->next->child->valuestring,
			    mem->child->next->child->valuestring);
	assert_near(lim->child->child->next->valuedouble, 1000, 0);
	const cJSON *cores = cJSON_GetObjectItem(cJSON_GetObjectItem(td, "worker_cores"), "w0");
	assert_near(cores->child->child->next->valuedouble, 4, 0);
	/* no sample gave tasks processing or executing: no series, not zeros */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(td, "worker_active_tasks")), 0);
	const cJSON *info = cJSON_GetObjectItem(j, "chunk_info");
	const cJSON *row = cJSON_GetObjectItem(info, "('/data/a.root', 0, 100)");
	assert_non_null(row);
	assert_near(cJSON_GetArrayItem(row, 2)->valuedouble, 500, 0);
	const cJSON *rec = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "raw_chunk_metrics"), 0);
	assert_near(jnum(rec, "duration"), 2, 0);
	assert_string_equal(jstr(rec, "dataset"), "ttbar");
	assert_false(jhas(rec, "num_events")); /* not carried: left out, not null */
	const cJSON *span = cJSON_GetObjectItem(j, "raw_span_metrics");
	assert_near(jnum(span, "('execute', 'P', 'thread-cpu', 'seconds')"), 1.5, 0);
	cJSON_Delete(j);
	strbuf_free(&sb);
}

/* Pure: the same state and clock give the same bytes, and the state is
 * left as it was. */
static void compute_is_pure(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 2, 2, 5);
	chunk(3, "a", 2, 10, 10);
	fine_row(3, FINE_SPAN, "P", "thread-cpu", "seconds", 1);
	uint64_t applied = R.applied[EV_CHUNK];
	struct metrics a, b;
	compute(&a, 7);
	compute(&b, 7);
	struct strbuf sa, sb;
	strbuf_init(&sa);
	strbuf_init(&sb);
	metrics_write_json(&a, &R, NULL, NULL, &sa);
	metrics_write_json(&b, &R, NULL, NULL, &sb);
	assert_string_equal(sa.data, sb.data);
	assert_int_equal(R.applied[EV_CHUNK], applied);
	assert_near(R.chunk_duration.sum, 2, 0);
	strbuf_free(&sa);
	strbuf_free(&sb);
}

/* The live screen's "now" values: the latest sample's worst memory %, mean
 * CPU and executing tasks; unknown before any sample. */
static void latest_sample_values(void **state)
{
	(void)state;
	struct metrics m;
	compute(&m, 0);
	assert_false(m.memory_worst_percent_now.valid);
	assert_false(m.cpu_percent_now.valid);
	struct w ws[2] = { { "a", 2, 100, 20 }, { "b", 2, 900, 60 } };
	sample_of(1, ws, 2);
	ws[1].mem = 500;
	ws[0].cpu = 80;
	sample_of(2, ws, 2);
	compute(&m, 2);
	assert_near(m.memory_worst_percent_now.value, 50, 1e-12); /* 500 / 1000 */
	assert_near(m.cpu_percent_now.value, 70, 1e-12); /* (80 + 60) / 2 */
	assert_false(m.tasks_executing_now.valid); /* no worker said what it executes */
	assert_false(m.tasks_executing_peak.valid);
	assert_near(m.memory_utilization_max_percent.value, 90, 1e-12); /* the run's worst */
}

/* ---- invariants (docs/metrics.md, "Invariants") ------------------------ */

static bool warned(const struct metrics *m, const char *key, const char *text)
{
	for (size_t i = 0; i < m->n_warnings; i++)
		if (strcmp(m->warnings[i].key, key) == 0 && strstr(m->warnings[i].reason, text))
			return true;
	return false;
}

static void straggler(double t, const char *ds, double dur, double events, double bytes)
{
	struct event ev = chunk_ev(t, ds, dur);
	ev.u.chunk.num_events = optnum_of(events);
	ev.u.chunk.bytes_read = optnum_of(bytes);
	apply(ev);
}

/* The case seen in issue 18: 2 one-thread workers, a run 0..3 whose
 * collector saw an exception (one chunk raised at 2.0), and a chunk that
 * slept: it ran 0.1..6.1, after the run's end. Before: its 6 s over a 3 s
 * window gave core efficiency 8.8 / 6 = 147 %, speedup 2.9 on 2 threads, and
 * its events raised the rate. Now 2.9 s of it lie inside the window:
 * (1.4 + 1.4 + 2.9) / (2 x 3) = 0.95, speedup 1.9; 200,000 events / 3 s. */
static void seen_failed_run_with_a_straggler(void **state)
{
	(void)state;
	start(0, "P");
	for (int t = 0; t <= 3; t++)
		sample((double)t, 2, 1, 100);
	chunk(1.5, "a", 1.4, 100000, 1e6);
	failed_chunk(2.0, "a", "ValueError");
	chunk(2.9, "a", 1.4, 100000, 1e6);
	end(3);
	for (int t = 4; t <= 7; t++)
		sample((double)t, 2, 1, 100);
	straggler(6.1, "a", 6.0, 100000, 1e6);
	struct metrics m;
	compute(&m, 10);
	assert_near(m.elapsed_time_seconds.value, 3, 1e-12);
	assert_near(m.total_cores.value, 2, 1e-12);
	assert_near(m.window_cpu_time.value, 5.7, 1e-12);
	assert_near(m.core_efficiency.value, 0.95, 1e-12);
	assert_near(m.speedup_factor.value, 1.9, 1e-12);
	assert_near(m.window_events.value, 200000, 0);
	assert_near(m.event_rate_elapsed_khz.value, 200.0 / 3.0, 1e-12);
	assert_near(m.data_rate_mb_per_s.value, 2.0 / 3.0, 1e-12);
	assert_near(m.chunks_per_second.value, 2.0 / 3.0, 1e-12); /* not the failed one */
	assert_near(m.total_events.value, 300000, 0); /* processed: all successful chunks */
	assert_near(m.num_chunks.value, 4, 0);
	assert_near(m.num_failed_chunks.value, 1, 0);
	assert_int_equal(m.n_warnings, 0);
	assert_non_null(strstr(run_log_get(&R, 0)->text, "after the run ended"));
}

/* The straggler seen alone: its chunk time beyond the run window would
 * claim more than the threads could give, and is left out. */
static void chunk_time_outside_the_window_is_left_out(void **state)
{
	(void)state;
	sample(-5, 1, 1, 0); /* before the run: not in its window */
	chunk(-1, "a", 3, 10, 10); /* before the run-start marker: outside whole */
	start(0, "P");
	sample(0, 1, 1, 0);
	chunk(2, "a", 4, 10, 10); /* ran -2..2: 2 s inside */
	sample(10, 1, 1, 0);
	end(10);
	chunk(12, "a", 5, 10, 10); /* ran 7..12: 3 s inside */
	struct metrics m;
	compute(&m, 20);
	assert_near(m.window_cpu_time.value, 5, 1e-12);
	assert_near(m.core_efficiency.value, 0.5, 1e-12);
	assert_near(m.window_events.value, 10, 0); /* only the chunk received inside */
	assert_near(m.window_chunks.value, 1, 0);
	assert_near(m.total_cpu_time.value, 12, 1e-12);
}

/* Within the tolerance (clock granularity) a bounded value is clamped;
 * past it the inputs contradict and it is null with a reason. */
static void efficiency_clamped_within_tolerance(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 1, 2, 0);
	sample(10, 1, 2, 0);
	chunk(10, "a", 10, 1, 0);
	chunk(10, "a", 10.2, 1, 0); /* 20.2 s on 2 x 10 s: 1 %, under 2 % + 0.1 s / 10 s */
	end(10);
	struct metrics m;
	compute(&m, 10);
	assert_near(m.core_efficiency.value, 1, 0);
	assert_near(m.speedup_factor.value, 2, 0);
	assert_near(m.efficiency_ratio.value, 2, 0);
	assert_int_equal(m.n_warnings, 0);
}

/* coffea's processtime larger than cores x elapsed: not this run's time */
static void report_processtime_over_core_time_is_null(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 2, 1, 0);
	sample(10, 2, 1, 0);
	report(10, 1e6, 1000, 50, 10); /* 50 s on 2 x 10 s */
	end(10);
	struct metrics m;
	compute(&m, 10);
	assert_false(m.core_efficiency.valid);
	assert_false(m.speedup_factor.valid);
	assert_false(m.efficiency_ratio.valid);
	assert_true(warned(&m, "core_efficiency", "coffea's processtime 50.0 s exceeds"));
	assert_true(warned(&m, "speedup_factor", "total threads x window"));
	assert_near(m.event_rate_elapsed_khz.value, 0.1, 1e-12); /* not contradicted */
	cJSON *j = to_json(&m);
	const cJSON *w = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "roastop"), "warnings");
	assert_true(cJSON_IsArray(w));
	assert_int_equal(cJSON_GetArraySize(w), m.n_warnings);
	assert_string_equal(jstr(cJSON_GetArrayItem(w, 0), "key"), "core_efficiency");
	assert_non_null(strstr(jstr(cJSON_GetArrayItem(w, 0), "reason"), "processtime"));
	assert_true(jnull(j, "core_efficiency"));
	cJSON_Delete(j);
}

/* A report with fewer events than the run's own chunk records, or more
 * reports than runs: a report of another run; its totals are null. */
static void report_of_another_run_is_null(void **state)
{
	(void)state;
	start(0, "P");
	chunk(2, "a", 1, 500, 10);
	report(3, 1e6, 100, 1, 1);
	struct metrics m;
	compute(&m, 4);
	assert_false(m.total_events.valid);
	assert_false(m.total_cpu_time.valid);
	assert_false(m.total_bytes_read.valid);
	assert_false(m.event_rate_elapsed_khz.valid);
	assert_true(warned(&m, "total_events", "fewer than its chunks' 500"));
	assert_true(warned(&m, "total_bytes_read", "another run"));
	report(3.5, 1e6, 1000, 1, 1);
	compute(&m, 4);
	assert_true(warned(&m, "total_events", "2 coffea reports for 1 run starts"));
	cJSON *j = to_json(&m);
	assert_true(jnull(j, "total_events"));
	assert_true(jnull(cJSON_GetObjectItem(j, "metric_sources"), "total_events"));
	cJSON_Delete(j);
}

/* No markers: the rates divide by the chunks' own span, not the idle
 * watch before them. */
static void unmarked_rates_over_the_chunks_span(void **state)
{
	(void)state;
	sample(0, 1, 1, 0);
	chunk(100, "a", 2, 1000, 0); /* ran 98..100 */
	chunk(102, "a", 2, 1000, 0);
	struct metrics m;
	compute(&m, 200);
	assert_near(m.elapsed_time_seconds.value, 200, 1e-12);
	assert_near(m.rate_window_seconds.value, 4, 1e-12); /* 98..102 */
	assert_near(m.event_rate_elapsed_khz.value, 0.5, 1e-12);
}

/* No markers and no scheduler: the first event is a chunk, whose time ran
 * before roastop heard of it and still counts: window 8..11. */
static void unmarked_first_event_is_a_chunk(void **state)
{
	(void)state;
	chunk(10, "a", 2, 300, 0);
	chunk(11, "a", 2, 300, 0);
	struct metrics m;
	compute(&m, 11);
	assert_near(m.rate_window_seconds.value, 3, 1e-12);
	assert_near(m.window_cpu_time.value, 4, 1e-12);
	assert_near(m.speedup_factor.value, 4.0 / 3.0, 1e-12);
	assert_near(m.event_rate_elapsed_khz.value, 0.2, 1e-12);
}

/* Non-CPU time is thread time too: at most the core time. */
static void io_overhead_over_core_time_is_null(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 1, 1, 0);
	sample(10, 1, 1, 0);
	fine_row(10, FINE_SPAN, "P", "thread-noncpu", "seconds", 30);
	end(10);
	struct metrics m;
	compute(&m, 10);
	assert_false(m.io_overhead_pct.valid);
	assert_true(warned(&m, "io_overhead_pct", "non-CPU time / core time"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(nothing_measured_is_null_or_absent),
		T(elapsed_without_markers_runs_first_event_to_now),
		T(elapsed_with_markers_ignores_now),
		T(zero_elapsed_gives_null_rates),
		T(run_end_before_start_is_invalid),
		T(workflow_from_chunks_then_report),
		T(report_without_chunk_records),
		T(failed_chunks_count_but_stay_out_of_statistics),
		T(one_chunk_has_zero_std),
		T(only_failed_chunks),
		T(chunk_fields_optional),
		T(per_dataset_one_and_several),
		T(quantiles_from_histogram),
		T(workers_time_weighted),
		T(workers_join_and_leave),
		T(single_sample_is_its_own_average),
		T(no_workers),
		T(scheduler_gap_excluded),
		T(fine_metrics_split_by_processor),
		T(fine_without_processor_name),
		T(fine_zero_time_has_no_percent),
		T(span_replaces_cluster_rows),
		T(scheduler_restart_keeps_fine_growth),
		T(branch_coverage_as_roastcoffea),
		T(chunks_without_branch_data),
		T(section_summary_shape),
		T(eta_from_the_recent_rate),
		T(eta_grows_while_stalled),
		T(eta_unknown_zero_and_over),
		T(eta_from_tasks_without_expected_events),
		T(json_never_has_nan_or_inf),
		T(roastop_block_and_extra),
		T(raw_data_in_roastcoffeas_form),
		T(compute_is_pure),
		T(latest_sample_values),
		T(seen_failed_run_with_a_straggler),
		T(chunk_time_outside_the_window_is_left_out),
		T(efficiency_clamped_within_tolerance),
		T(report_processtime_over_core_time_is_null),
		T(report_of_another_run_is_null),
		T(unmarked_rates_over_the_chunks_span),
		T(unmarked_first_event_is_a_chunk),
		T(io_overhead_over_core_time_is_null),
	};
	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
