/* Every number roastop reports, computed in one place from the run state.
 * Pure: no I/O, no clocks, no globals; `now` is the caller's clock. The
 * screen, summary.txt and metrics.json all read a struct metrics, so they
 * cannot disagree. Formulas and choices: docs/metrics.md. */
#ifndef ROASTOP_METRICS_H
#define ROASTOP_METRICS_H

#include "roastop/run.h"
#include "roastop/task_figures.h"

struct metrics_options {
	/* fnmatch(3) glob for the fine-metrics task prefixes that are processor
	 * work (--processor-prefix); NULL: the run-start's processor name */
	const char *processor_prefix;
};

enum total_source { TOTAL_NONE = 0, TOTAL_REPORT, TOTAL_CHUNKS };

/* What the progress counts: events of the run-start's expected total, else
 * the run's tasks from the scheduler (docs/metrics.md, "Progress and ETA"). */
enum progress_source { PROGRESS_NONE = 0, PROGRESS_EVENTS, PROGRESS_TASKS };

/* The ETA's rate: progress over the last METRICS_ETA_WINDOW seconds,
 * reaching back to the METRICS_ETA_POINTS-th latest arrival when fewer
 * came in that window (docs/metrics.md, "Progress and ETA"). */
#define METRICS_ETA_WINDOW 60.0
#define METRICS_ETA_POINTS 4

/* A chunk in flight is a straggler when older than max(3 x p90, p99) of the
 * run's finished chunks, judged from METRICS_STRAGGLER_MIN_CHUNKS of them
 * (docs/metrics.md, "Chunks in flight"). */
#define METRICS_STRAGGLER_P90_TIMES 3.0
#define METRICS_STRAGGLER_MIN_CHUNKS 10

/* The tolerance of the physical bounds (docs/metrics.md, "Invariants"): a
 * value within bound x (1 + METRICS_TOL_REL + METRICS_TOL_SECONDS / window)
 * is clock granularity and shown clamped to the bound; past it the inputs
 * contradict each other and the value is null, with a warning. */
#define METRICS_TOL_REL 0.02
#define METRICS_TOL_SECONDS 0.1

/* A metric made null because its inputs contradict each other, and why:
 * metrics.json's roastop.warnings, and a line in the event log. */
#define METRICS_MAX_WARNINGS 16
#define METRICS_WARNING_TEXT 160
struct metrics_warning {
	const char *key; /* the metric's name, a static string */
	char reason[METRICS_WARNING_TEXT];
};

struct metrics {
	double t_start, t_end; /* the interval elapsed_time_seconds measures (when valid) */
	/* The run's window the rates divide by: its markers' interval (= elapsed),
	 * else its chunks' span; and what of the successful chunks lies inside it
	 * (the rate numerators; coffea's report counts as inside). */
	double t_window_start, t_window_end;
	optnum rate_window_seconds;
	optnum window_events, window_bytes, window_cpu_time, window_chunks;
	/* workflow (roastcoffea aggregation/workflow.py) */
	optnum elapsed_time_seconds, total_events, total_cpu_time, total_bytes_read;
	optnum num_chunks, avg_cpu_time_per_chunk;
	optnum data_rate_gbps, event_rate_elapsed_khz, event_rate_cpu_total_khz;
	enum total_source src_events, src_cpu, src_bytes, src_chunks;
	/* workers (aggregation/backends/dask.py) */
	optnum avg_workers, peak_workers, total_cores, cores_per_worker;
	optnum peak_memory_bytes, avg_memory_per_worker_bytes;
	/* efficiency (aggregation/efficiency.py) */
	optnum core_efficiency, speedup_factor, event_rate_core_khz;
	/* fine metrics (aggregation/fine_metrics.py) */
	bool has_fine, fine_from_span, processor_known;
	optnum processor_cpu_time_seconds, processor_io_wait_time_seconds;
	optnum processor_cpu_percent, processor_io_wait_percent;
	optnum overhead_cpu_time_seconds, overhead_io_wait_time_seconds;
	optnum total_bytes_memory_read, disk_read_bytes, disk_write_bytes;
	optnum compression_time_seconds, decompression_time_seconds;
	optnum total_compression_overhead_seconds;
	optnum serialization_time_seconds, deserialization_time_seconds;
	optnum total_serialization_overhead_seconds;
	/* chunks (aggregation/chunk.py) */
	optnum num_successful_chunks, num_failed_chunks;
	/* roastop's: failed attempts a later attempt of the same chunk followed,
	 * and the chunks a success recovered (docs/metrics.md, "Retries") */
	optnum chunk_retries, retried_chunks_recovered;
	optnum chunk_duration_mean, chunk_duration_min, chunk_duration_max, chunk_duration_std;
	optnum chunk_mem_delta_mean_mb, chunk_mem_delta_min_mb, chunk_mem_delta_max_mb;
	optnum chunk_mem_delta_std_mb;
	optnum total_events_from_chunks, chunk_events_mean, chunk_events_min, chunk_events_max;
	/* branch coverage (aggregation/branch_coverage.py) */
	optnum avg_branches_read_percent, avg_bytes_read_percent, total_branches_read;
	/* roastop's own (new names) */
	optnum data_rate_mb_per_s, efficiency_ratio, io_overhead_pct;
	optnum memory_utilization_mean_percent, memory_utilization_min_percent;
	optnum memory_utilization_max_percent, cpu_utilization_mean_percent;
	optnum chunk_duration_p50, chunk_duration_p90, chunk_duration_p99;
	optnum total_threads_avg, total_threads_now, chunks_per_second;
	optnum workers_now, memory_used_now_bytes, memory_limit_now_bytes;
	optnum expected_events, progress_percent;
	/* progress: done / total of progress_source; eta = (total - done) / the
	 * recent rate (eta_rate, units of the source per second) */
	enum progress_source progress_source;
	optnum progress_done, progress_total, progress_fraction, eta_rate, eta_seconds;
	/* latest-sample values and the overhead split, for the live screen */
	optnum memory_worst_percent_now, cpu_percent_now, tasks_executing_now, tasks_executing_peak;
	/* the run's task progress from the scheduler (its span's tasks when known) */
	optnum tasks_done_now, tasks_total_now, tasks_percent_now;
	optnum overhead_cpu_percent, overhead_io_wait_percent;
	/* chunks in flight: valid once the run has had a chunk_start; ages count
	 * to inflight_at (the run's end, else now); straggler_after in seconds */
	double inflight_at;
	optnum inflight_running, inflight_oldest_age, inflight_stragglers, inflight_lost;
	optnum straggler_after;
	size_t n_warnings;
	struct metrics_warning warnings[METRICS_MAX_WARNINGS];
	struct task_figures tasks; /* the run's Dask tasks (task_figures.h) */
};

/* Per-dataset numbers, as roastcoffea's per_dataset plus roastop's p99. */
struct dataset_metrics {
	const char *name;
	uint64_t num_chunks, num_failed;
	double total_duration, total_events;
	optnum mean_duration, mean_events_per_chunk, p99_duration, event_rate_khz;
	optnum share_of_time_percent;
};

/* Fills every field of m from r. now: the caller's clock (seconds since the
 * epoch), the end of a live run. opt may be NULL. */
void metrics_compute(const struct run *r, double now, const struct metrics_options *opt,
		     struct metrics *m);
/* A chunk's age in flight: to its loss, else to m->inflight_at. */
double metrics_inflight_age(const struct metrics *m, const struct inflight_chunk *c);
/* Older than m->straggler_after (false while that is not known). */
bool metrics_straggler(const struct metrics *m, const struct inflight_chunk *c);
/* i-th dataset (insertion order), false past the end. */
bool metrics_dataset(const struct run *r, const struct metrics *m, size_t i,
		     struct dataset_metrics *out);
/* events / seconds / 1e3 (kHz of process() time): a dataset's or a file's
 * event_rate_khz; invalid without seconds. */
optnum metrics_event_rate_khz(double events, double seconds);
/* i-th file (insertion order): its name and the event rate of its
 * successful chunks; false past the end. */
bool metrics_file(const struct run *r, size_t i, const char **name, optnum *rate_khz);
/* "coffea_report", "chunks", or NULL for TOTAL_NONE. */
const char *metrics_source_name(enum total_source s);
/* "events", "tasks", or NULL for PROGRESS_NONE. */
const char *metrics_progress_name(enum progress_source s);
/* One number of run A against run B (roastop compare): delta = b - a and
 * percent = 100 x (b - a) / |a|; each invalid unless both are measured,
 * percent also when a is 0. */
void metrics_change(optnum a, optnum b, optnum *delta, optnum *percent);

#endif
