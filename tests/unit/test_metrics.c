/* Every formula on hand-computed cases. States are built through run_apply
 * with hand-made events, as the real sources would build them. */
#include "test_util.h"

#include <string.h>

#include "roastop/metrics.h"

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

static struct event at(enum event_type type, double t)
{
	struct event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.t = t;
	return ev;
}

static void start(double t, const char *processor)
{
	struct event ev = at(EV_RUN_START, t);
	ev.u.run_start.run_id = "r";
	ev.u.run_start.processor = processor;
	apply(ev);
}

static void chunk(double t, const char *ds, double dur, double events, double bytes)
{
	struct event ev = at(EV_CHUNK, t);
	ev.u.chunk.dataset = ds;
	ev.u.chunk.duration = optnum_of(dur);
	ev.u.chunk.num_events = optnum_of(events);
	ev.u.chunk.bytes_read = optnum_of(bytes);
	ev.u.chunk.mem_delta_mb = optnum_of(dur * 10);
	apply(ev);
}

static void sample(double t, size_t n, double threads_each, double mem_each)
{
	static struct worker_sample ws[8];
	static const char *ids[8] = { "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7" };
	for (size_t i = 0; i < n; i++)
		ws[i] = (struct worker_sample){ .id = ids[i], .nthreads = optnum_of(threads_each),
						.memory_bytes = optnum_of(mem_each + (double)i),
						.memory_limit = optnum_of(1000),
						.cpu_percent = optnum_of(50 + (double)i) };
	struct event ev = at(EV_SAMPLE, t);
	ev.u.sample = (struct ev_sample){ .worker_count = (uint32_t)n, .n_workers = n, .workers = ws };
	apply(ev);
}

/* metrics.json as the exporter writes it, parsed back. */
static cJSON *to_json(const struct metrics *m)
{
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(metrics_write_json(m, &R, NULL, &sb), 0);
	cJSON *j = cJSON_Parse(sb.data);
	assert_non_null(j);
	strbuf_free(&sb);
	return j;
}

static void compute(struct metrics *m, double now)
{
	metrics_compute(&R, now, NULL, m);
}

static void nothing_measured_is_all_null(void **state)
{
	(void)state;
	struct metrics m;
	compute(&m, 100);
	assert_false(m.elapsed_time_seconds.valid);
	assert_false(m.total_events.valid);
	assert_false(m.avg_workers.valid);
	assert_false(m.processor_cpu_time_seconds.valid);
	assert_false(m.num_chunks.valid);
	cJSON *j = to_json(&m);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "total_events")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "core_efficiency")));
	cJSON_Delete(j);
}

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
	assert_near(m.total_cpu_time.value, 6, 1e-12);
	assert_near(m.avg_cpu_time_per_chunk.value, 3, 1e-12);
	assert_near(m.event_rate_elapsed_khz.value, 0.4, 1e-12); /* 4000 / 10 / 1000 */
	assert_near(m.event_rate_cpu_total_khz.value, 4000.0 / 6 / 1000, 1e-12);
	assert_near(m.data_rate_gbps.value, 4e6 * 8 / 1e9 / 10, 1e-12);
	assert_near(m.data_rate_mb_per_s.value, 0.4, 1e-12);
	assert_near(m.speedup_factor.value, 0.6, 1e-12);
	assert_false(m.core_efficiency.valid); /* no workers seen */

	struct event rep = at(EV_REPORT, 108);
	rep.u.report = (struct ev_report){ .bytesread = optnum_of(5e6), .entries = optnum_of(4200),
					   .processtime = optnum_of(7), .chunks = optnum_of(2) };
	apply(rep);
	apply(at(EV_RUN_END, 108));
	compute(&m, 500);
	assert_near(m.elapsed_time_seconds.value, 8, 1e-12); /* ended: until run end */
	assert_near(m.total_events.value, 4200, 0);
	assert_int_equal(m.src_events, TOTAL_REPORT);
	assert_near(m.total_cpu_time.value, 7, 0);
	assert_near(m.avg_cpu_time_per_chunk.value, 3.5, 1e-12);
	assert_near(m.total_bytes_read.value, 5e6, 0);
	assert_near(m.num_chunks.value, 2, 0);
	assert_near(m.total_events_from_chunks.value, 4000, 0);
}

static void zero_elapsed_gives_null_rates(void **state)
{
	(void)state;
	start(50, NULL);
	chunk(50, "a", 1, 10, 10);
	apply(at(EV_RUN_END, 50));
	struct metrics m;
	compute(&m, 50);
	assert_near(m.elapsed_time_seconds.value, 0, 0);
	assert_false(m.event_rate_elapsed_khz.valid);
	assert_false(m.data_rate_gbps.valid);
	assert_false(m.speedup_factor.valid);
	assert_true(m.event_rate_cpu_total_khz.valid);
}

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
	assert_near(m.cores_per_worker.value, 4, 0);
	assert_near(m.peak_memory_bytes.value, 303, 0);
	/* w0: 100,100,300 over 0..20 -> (1000 + 2000)/20 = 150; w1: 101,101,301 -> 151;
	 * w2: 102 (10), 302 (20) -> 202; w3: 103, 303 -> 203; mean = 706/4 = 176.5 */
	assert_near(m.avg_memory_per_worker_bytes.value, 176.5, 1e-12);
	/* core_efficiency = 10 / (14 x 20) */
	assert_near(m.core_efficiency.value, 10.0 / 280.0, 1e-12);
	assert_near(m.event_rate_core_khz.value, 1000.0 / 280.0 / 1000, 1e-12);
	assert_near(m.memory_utilization_max_percent.value, 30.3, 1e-12);
	assert_near(m.workers_now.value, 4, 0);
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
}

static void failed_chunks_and_datasets(void **state)
{
	(void)state;
	chunk(1, "a", 1, 100, 0);
	chunk(2, "a", 3, 300, 0);
	chunk(3, "b", 5, 50, 0);
	struct event bad = at(EV_CHUNK, 4);
	bad.u.chunk.dataset = "b";
	bad.u.chunk.duration = optnum_of(99);
	bad.u.chunk.error = "KeyError";
	apply(bad);
	struct metrics m;
	compute(&m, 4);
	assert_near(m.num_chunks.value, 4, 0);
	assert_near(m.num_successful_chunks.value, 3, 0);
	assert_near(m.num_failed_chunks.value, 1, 0);
	assert_near(m.chunk_duration_mean.value, 3, 1e-12);
	assert_near(m.chunk_duration_std.value, 2, 1e-12); /* 1,3,5: sample std 2 */
	assert_near(m.chunk_duration_max.value, 5, 0);
	assert_near(m.chunk_mem_delta_mean_mb.value, 30, 1e-12);
	assert_near(m.chunk_events_min.value, 50, 0);
	struct dataset_metrics d;
	assert_true(metrics_dataset(&R, &m, 0, &d));
	assert_string_equal(d.name, "a");
	assert_near(d.mean_duration.value, 2, 1e-12);
	assert_near(d.mean_events_per_chunk.value, 200, 1e-12);
	assert_true(metrics_dataset(&R, &m, 1, &d));
	assert_int_equal(d.num_failed, 1);
	assert_near(d.share_of_time_percent.value, 5.0 / 9.0 * 100, 1e-12);
	assert_false(metrics_dataset(&R, &m, 2, &d));
	assert_true(m.chunk_duration_p50.value >= 1 && m.chunk_duration_p99.value <= 5);
}

static void fine_row(double t, enum fine_scope scope, const char *prefix, const char *act,
		     const char *unit, double v)
{
	struct fine_row row = { "execute", prefix, act, unit, v };
	struct event ev = at(EV_FINE, t);
	ev.u.fine = (struct ev_fine){ scope, 1, &row };
	apply(ev);
}

static void fine_metrics_split_by_processor(void **state)
{
	(void)state;
	start(0, "MyProc");
	fine_row(1, FINE_SPAN, "MyProc", "thread-cpu", "seconds", 30);
	fine_row(1, FINE_SPAN, "MyProc", "thread-noncpu", "seconds", 10);
	fine_row(1, FINE_SPAN, "lambda", "thread-cpu", "seconds", 2);
	fine_row(1, FINE_SPAN, "MyProc", "disk-read", "bytes", 500);
	fine_row(1, FINE_SPAN, "MyProc", "serialize", "seconds", 1.5);
	fine_row(1, FINE_SPAN, "MyProc", "deserialize", "seconds", 0.5);
	fine_row(1, FINE_SPAN, "MyProc", "compress", "bytes", 999); /* not seconds: ignored */
	fine_row(1, FINE_CLUSTER, "MyProc", "thread-cpu", "seconds", 1e6); /* span wins */
	struct metrics m;
	compute(&m, 10);
	assert_true(m.fine_from_span);
	assert_near(m.processor_cpu_time_seconds.value, 30, 0);
	assert_near(m.processor_io_wait_time_seconds.value, 10, 0);
	assert_near(m.processor_cpu_percent.value, 75, 1e-12);
	assert_near(m.processor_io_wait_percent.value, 25, 1e-12);
	assert_near(m.overhead_cpu_time_seconds.value, 2, 0);
	assert_near(m.overhead_io_wait_time_seconds.value, 0, 0);
	assert_near(m.disk_read_bytes.value, 500, 0);
	assert_near(m.total_serialization_overhead_seconds.value, 2, 1e-12);
	assert_near(m.compression_time_seconds.value, 0, 0);
	struct metrics_options o = { .processor_prefix = "lam*" };
	metrics_compute(&R, 10, &o, &m);
	assert_near(m.processor_cpu_time_seconds.value, 2, 0);
	assert_near(m.overhead_cpu_time_seconds.value, 30, 0);
}

static void fine_without_processor_counts_all_no_overhead(void **state)
{
	(void)state;
	fine_row(1, FINE_CLUSTER, "a", "thread-cpu", "seconds", 5); /* baseline */
	fine_row(2, FINE_CLUSTER, "a", "thread-cpu", "seconds", 9);
	fine_row(2, FINE_CLUSTER, "b", "thread-cpu", "seconds", 3); /* new later: from 0 */
	struct metrics m;
	compute(&m, 2);
	assert_false(m.fine_from_span);
	assert_near(m.processor_cpu_time_seconds.value, 7, 0);
	assert_false(m.overhead_cpu_time_seconds.valid);
	assert_false(m.processor_cpu_percent.valid == false);
}

static void json_has_no_nan_and_roastop_block(void **state)
{
	(void)state;
	start(0, "P");
	sample(0, 1, 1, 1);
	chunk(1, "a", 1, 1, 1);
	struct metrics m;
	compute(&m, 1);
	cJSON *j = to_json(&m);
	char *text = cJSON_PrintUnformatted(j);
	assert_null(strstr(text, "nan"));
	assert_null(strstr(text, "inf"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "per_dataset"), "a"));
	cJSON *ro = cJSON_GetObjectItem(j, "roastop");
	assert_string_equal(cJSON_GetObjectItem(ro, "processor")->valuestring, "P");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "tracking_data")));
	cJSON_free(text);
	cJSON_Delete(j);
	struct strbuf sb;
	strbuf_init(&sb);
	cJSON *extra = cJSON_CreateObject();
	cJSON_AddNumberToObject(extra, "replay_lines", 7);
	metrics_write_json(&m, &R, extra, &sb);
	j = cJSON_Parse(sb.data);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "roastop"), "replay_lines")->valueint, 7);
	cJSON_Delete(extra);
	cJSON_Delete(j);
	strbuf_free(&sb);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(nothing_measured_is_all_null),     T(workflow_from_chunks_then_report),
		T(zero_elapsed_gives_null_rates),    T(workers_time_weighted),
		T(single_sample_is_its_own_average), T(failed_chunks_and_datasets),
		T(fine_metrics_split_by_processor),  T(fine_without_processor_counts_all_no_overhead),
		T(json_has_no_nan_and_roastop_block),
	};
	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
