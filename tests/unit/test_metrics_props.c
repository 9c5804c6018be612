/* Property test of the metrics' invariants (docs/metrics.md, "Invariants"):
 * random runs fed to run_apply -- events out of order, failed chunks,
 * re-runs (a second run-start), chunks after the run's end, workers joining
 * and leaving, scheduler gaps, reports that fit the run or not -- and every
 * metric checked after every few events. Seeds are fixed: a failure names
 * its seed and step, and is the same on every machine. */
#include "test_util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "roastop/metrics.h"
#include "roastop/metrics_json.h"

#define CASES 3000
#define MAX_STEPS 60

struct field {
	const char *name;
	size_t off;
};

#define F(f) { #f, offsetof(struct metrics, f) }

/* Every optnum of struct metrics. */
static const struct field fields[] = {
	F(rate_window_seconds),
	F(window_events),
	F(window_bytes),
	F(window_cpu_time),
	F(window_chunks),
	F(elapsed_time_seconds),
	F(total_events),
	F(total_cpu_time),
	F(total_bytes_read),
	F(num_chunks),
	F(avg_cpu_time_per_chunk),
	F(data_rate_gbps),
	F(event_rate_elapsed_khz),
	F(event_rate_cpu_total_khz),
	F(avg_workers),
	F(peak_workers),
	F(total_cores),
	F(cores_per_worker),
	F(peak_memory_bytes),
	F(avg_memory_per_worker_bytes),
	F(core_efficiency),
	F(speedup_factor),
	F(event_rate_core_khz),
	F(processor_cpu_time_seconds),
	F(processor_io_wait_time_seconds),
	F(processor_cpu_percent),
	F(processor_io_wait_percent),
	F(overhead_cpu_time_seconds),
	F(overhead_io_wait_time_seconds),
	F(total_bytes_memory_read),
	F(disk_read_bytes),
	F(disk_write_bytes),
	F(compression_time_seconds),
	F(decompression_time_seconds),
	F(total_compression_overhead_seconds),
	F(serialization_time_seconds),
	F(deserialization_time_seconds),
	F(total_serialization_overhead_seconds),
	F(num_successful_chunks),
	F(num_failed_chunks),
	F(chunk_duration_mean),
	F(chunk_duration_min),
	F(chunk_duration_max),
	F(chunk_duration_std),
	F(chunk_mem_delta_mean_mb),
	F(chunk_mem_delta_min_mb),
	F(chunk_mem_delta_max_mb),
	F(chunk_mem_delta_std_mb),
	F(total_events_from_chunks),
	F(chunk_events_mean),
	F(chunk_events_min),
	F(chunk_events_max),
	F(avg_branches_read_percent),
	F(avg_bytes_read_percent),
	F(total_branches_read),
	F(data_rate_mb_per_s),
	F(efficiency_ratio),
	F(io_overhead_pct),
	F(memory_utilization_mean_percent),
	F(memory_utilization_min_percent),
	F(memory_utilization_max_percent),
	F(cpu_utilization_mean_percent),
	F(chunk_duration_p50),
	F(chunk_duration_p90),
	F(chunk_duration_p99),
	F(total_threads_avg),
	F(total_threads_now),
	F(chunks_per_second),
	F(workers_now),
	F(memory_used_now_bytes),
	F(memory_limit_now_bytes),
	F(expected_events),
	F(progress_percent),
	F(eta_seconds),
	F(progress_done),
	F(progress_total),
	F(progress_fraction),
	F(eta_rate),
	F(memory_worst_percent_now),
	F(cpu_percent_now),
	F(tasks_executing_now),
	F(tasks_executing_peak),
	F(tasks_done_now),
	F(tasks_total_now),
	F(tasks_percent_now),
	F(overhead_cpu_percent),
	F(overhead_io_wait_percent),
};

static uint64_t rng_state;

/* splitmix64: deterministic and the same everywhere */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(double lo, double hi)
{
	return lo + (hi - lo) * ((double)(rng() >> 11) / 9007199254740992.0);
}

static bool chance(double p)
{
	return uniform(0, 1) < p;
}

static const char *const worker_ids[6] = { "w0", "w1", "w2", "w3", "w4", "w5" };
static const char *const datasets[3] = { "a", "b", "c" };

static void apply(struct run *r, struct event *ev)
{
	run_apply(r, ev); /* an event may be refused: that is the model's call */
}

/* Workers present: a random subset of the pool, each with 1-4 threads. */
static void gen_sample(struct run *r, double t)
{
	struct worker_sample ws[6];
	size_t n = 0;
	for (size_t i = 0; i < 6; i++) {
		if (!chance(0.5))
			continue;
		ws[n++] = (struct worker_sample){ .id = worker_ids[i],
						  .nthreads = optnum_of((double)(1 + i % 4)),
						  .memory_bytes = optnum_of(uniform(0, 2e9)),
						  .memory_limit = optnum_of(4e9),
						  .cpu_percent = optnum_of(uniform(0, 400)),
						  .executing = optnum_of((double)(rng() % 5)) };
	}
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample = (struct ev_sample){ .worker_count = (uint32_t)n, .n_workers = n,
					  .workers = ws };
	apply(r, &ev);
}

static void gen_chunk(struct run *r, double t)
{
	struct event ev = test_event(EV_CHUNK, t);
	ev.u.chunk.dataset = datasets[rng() % 3];
	ev.u.chunk.duration = optnum_of(chance(0.1) ? uniform(0, 60) : uniform(0, 3));
	if (chance(0.9))
		ev.u.chunk.num_events = optnum_of((double)(rng() % 200000));
	if (chance(0.8))
		ev.u.chunk.bytes_read = optnum_of(uniform(0, 1e8));
	if (chance(0.1))
		ev.u.chunk.error = "ValueError";
	apply(r, &ev);
}

static void gen_report(struct run *r, double t)
{
	struct event ev = test_event(EV_REPORT, t);
	ev.u.report = (struct ev_report){ .bytesread = optnum_of(uniform(0, 1e9)),
					  .entries = optnum_of((double)(rng() % 2000000)),
					  .processtime = optnum_of(uniform(0, 200)),
					  .chunks = optnum_of((double)(rng() % 40)) };
	apply(r, &ev);
}

static void gen_fine(struct run *r, double t, double *cum)
{
	*cum += uniform(0, 20);
	struct fine_row rows[2] = { { "execute", "P", "thread-cpu", "seconds", *cum },
				    { "execute", "P", "thread-noncpu", "seconds", *cum / 3 } };
	struct event ev = test_event(EV_FINE, t);
	ev.u.fine = (struct ev_fine){ chance(0.5) ? FINE_SPAN : FINE_CLUSTER, 2, rows };
	apply(r, &ev);
}

static void gen_marker(struct run *r, double t, enum event_type type)
{
	struct event ev = test_event(type, t);
	if (type == EV_RUN_START) {
		ev.u.run_start.run_id = "r";
		ev.u.run_start.processor = "P";
		ev.u.run_start.expected_events = optnum_of((double)(rng() % 3000000));
	}
	apply(r, &ev);
}

static void gen_status(struct run *r, double t)
{
	struct event ev = test_event(EV_STATUS, t);
	ev.u.status = (struct ev_status){ .source = "scheduler",
					  .state = chance(0.5) ? SRC_LOST : SRC_CONNECTED,
					  .gaps_timelines = { 1, true } };
	apply(r, &ev);
}

/* One random event at a time that mostly moves forward. */
static double gen_event(struct run *r, double t, double *cum)
{
	t += chance(0.05) ? -uniform(0, 5) : uniform(0, 2); /* out of order now and then */
	uint64_t k = rng() % 100;
	if (k < 35)
		gen_sample(r, t);
	else if (k < 75)
		gen_chunk(r, t);
	else if (k < 80)
		gen_marker(r, t, EV_RUN_START);
	else if (k < 85)
		gen_marker(r, t, EV_RUN_END);
	else if (k < 89)
		gen_report(r, t);
	else if (k < 95)
		gen_fine(r, t, cum);
	else
		gen_status(r, t);
	return t;
}

static optnum get(const struct metrics *m, const char *name)
{
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(fields); i++)
		if (strcmp(fields[i].name, name) == 0)
			return *(const optnum *)((const char *)m + fields[i].off);
	fail_msg("no metric %s", name);
	return optnum_none();
}

static const char *where_case;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond))                                                     \
			fail_msg("%s: %s", where_case, #cond);                   \
	} while (0)

static bool in(optnum v, double lo, double hi)
{
	return !v.valid || (v.value >= lo && v.value <= hi);
}

static void check_finite(const struct metrics *m)
{
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(fields); i++) {
		optnum v = *(const optnum *)((const char *)m + fields[i].off);
		if (v.valid && !isfinite(v.value))
			fail_msg("%s: %s = %g", where_case, fields[i].name, v.value);
	}
}

static void check_rates(const struct metrics *m)
{
	static const char *const rates[] = { "data_rate_gbps", "data_rate_mb_per_s",
					     "event_rate_elapsed_khz", "event_rate_cpu_total_khz",
					     "event_rate_core_khz", "chunks_per_second" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(rates); i++)
		if (!in(get(m, rates[i]), 0, INFINITY))
			fail_msg("%s: %s = %g", where_case, rates[i], get(m, rates[i]).value);
}

/* The bounds: efficiency in [0, 1], speedups at most the threads, and a
 * valid efficiency only where the chunk time in the window fits the cores. */
static void check_bounds(const struct metrics *m)
{
	CHECK(in(m->core_efficiency, 0, 1));
	double th = m->total_cores.valid ? m->total_cores.value : INFINITY;
	CHECK(in(m->speedup_factor, 0, th));
	CHECK(in(m->efficiency_ratio, 0, th));
	CHECK(in(m->io_overhead_pct, 0, 100));
	CHECK(in(m->elapsed_time_seconds, 0, INFINITY));
	CHECK(in(m->rate_window_seconds, 0, INFINITY));
	if (m->core_efficiency.valid) {
		double w = m->rate_window_seconds.value;
		CHECK(m->window_cpu_time.value <=
		      th * w * (1 + METRICS_TOL_REL + METRICS_TOL_SECONDS / w) * (1 + 1e-9));
	}
}

/* What the rates divide is part of what was processed; the counts add up. */
static void check_counts(const struct run *r, const struct metrics *m)
{
	if (m->src_events == TOTAL_CHUNKS)
		CHECK(m->window_events.value <= m->total_events.value * (1 + 1e-9) + 1e-6);
	if (m->src_cpu == TOTAL_CHUNKS)
		CHECK(m->window_cpu_time.value <= m->total_cpu_time.value * (1 + 1e-9) + 1e-6);
	if (r->n_chunks) {
		CHECK(m->num_chunks.value == (double)r->n_chunks);
		CHECK(m->num_successful_chunks.value + m->num_failed_chunks.value ==
		      m->num_chunks.value);
		CHECK(in(m->window_chunks, 0, m->num_successful_chunks.value));
	}
	CHECK(m->n_warnings <= METRICS_MAX_WARNINGS);
	for (size_t i = 0; i < m->n_warnings; i++) {
		CHECK(m->warnings[i].key && m->warnings[i].reason[0]);
		CHECK(!get(m, m->warnings[i].key).valid); /* a warning says why a value is null */
	}
}

/* The Datasets view's numbers: finite, rates >= 0, shares of 100 %. */
static void check_datasets(const struct run *r, const struct metrics *m)
{
	struct dataset_metrics d;
	for (size_t i = 0; metrics_dataset(r, m, i, &d); i++) {
		CHECK(in(d.event_rate_khz, 0, INFINITY) &&
		      (!d.event_rate_khz.valid || isfinite(d.event_rate_khz.value)));
		CHECK(in(d.share_of_time_percent, 0, 100 * (1 + 1e-9)));
		CHECK(in(d.mean_duration, 0, INFINITY) && in(d.p99_duration, 0, INFINITY));
	}
}

static void check_json(const struct run *r, const struct metrics *m)
{
	struct strbuf sb;
	strbuf_init(&sb);
	CHECK(metrics_write_json(m, r, NULL, NULL, &sb) == 0);
	CHECK(!has_token(sb.data, "nan") && !has_token(sb.data, "inf"));
	cJSON *j = cJSON_Parse(sb.data);
	CHECK(j != NULL);
	const cJSON *w = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "roastop"), "warnings");
	CHECK(cJSON_GetArraySize(w) == (int)m->n_warnings);
	cJSON_Delete(j);
	strbuf_free(&sb);
}

static void check_all(const struct run *r, double now, bool json)
{
	struct metrics m;
	metrics_compute(r, now, NULL, &m);
	check_finite(&m);
	check_rates(&m);
	check_bounds(&m);
	check_counts(r, &m);
	check_datasets(r, &m);
	if (json)
		check_json(r, &m);
}

static void one_case(uint64_t seed)
{
	struct run r;
	assert_int_equal(run_init(&r), 0);
	rng_state = seed * 0x2545f4914f6cdd1dull + 1;
	double t = 1000, cum = 0;
	int steps = 5 + (int)(rng() % MAX_STEPS);
	char where[64];
	where_case = where;
	for (int s = 0; s < steps; s++) {
		t = gen_event(&r, t, &cum);
		snprintf(where, sizeof(where), "seed %llu step %d", (unsigned long long)seed, s);
		if (s % 4 == 0 || s == steps - 1)
			check_all(&r, t + uniform(-1, 5), s == steps - 1);
	}
	run_destroy(&r);
}

static void invariants_hold_on_random_runs(void **state)
{
	(void)state;
	for (uint64_t seed = 0; seed < CASES; seed++)
		one_case(seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(invariants_hold_on_random_runs),
	};
	return cmocka_run_group_tests_name("metrics_props", tests, NULL, NULL);
}
