/* The run model: everything roastop knows about one analysis run, in
 * bounded memory. run_apply() is the only way it changes. Metrics, views and
 * exporters read it (const) and never write it. */
#ifndef ROASTOP_RUN_H
#define ROASTOP_RUN_H

#include "roastop/common.h"
#include "roastop/event.h"
#include "roastop/hist.h"
#include "roastop/failed.h"
#include "roastop/inflight.h"
#include "roastop/rawchunks.h"
#include "roastop/retries.h"
#include "roastop/stats.h"
#include "roastop/strmap.h"
#include "roastop/tasks.h"
#include "roastop/timeline.h"
#include "roastop/topk.h"

/* The caps below come from one memory budget: 256 MiB peak RSS for the
 * whole process under hostile input (docs/architecture.md, "Memory budget",
 * has the bytes per entry and the sum). A table that reaches its cap counts
 * what it could not take under roastop.overflow and says so in the log. */
#define RUN_TIMELINE_POINTS 2048
/* Points of one worker's history, inside struct worker_agg (32 x 16 bytes). */
#define RUN_WORKER_HISTORY 32
/* Live workers. Past it, workers absent from the latest sample are evicted
 * (their history stays in the totals) before a new one is refused. */
#define RUN_MAX_WORKERS 32768
#define RUN_MAX_DATASETS 512
#define RUN_MAX_FILES 16384
#define RUN_MAX_SECTIONS 256
#define RUN_MAX_BRANCHES 16384
#define RUN_MAX_FINE_ROWS 4096
/* Bytes of a table key: a longer name is kept as its first bytes, "~" and
 * the 16 hex digits of its 64-bit hash (still distinct, counted). */
#define RUN_KEY_MAX 256
/* Bytes of each of a fine row's four key parts, shortened likewise. */
#define RUN_FINE_PART_MAX 96
#define RUN_LOG_LINES 256
#define RUN_LOG_TEXT 160
#define RUN_NAME_LEN 128
/* An exception's type and message: the collector sends at most 200 + 1,000 characters. */
#define RUN_REASON_LEN 1024

/* A point of a worker's history: the highest of the samples it covers
 * (memory peaks are what kills a worker). */
struct worker_point {
	float t; /* seconds from the history's t0 to the point's first sample */
	float mem; /* bytes; NaN: not measured */
	uint16_t cpu; /* percent, at most 65,534; WORKER_NA: not measured */
	uint16_t exec; /* tasks executing, likewise */
	uint16_t proc; /* tasks processing (assigned), likewise; 2 bytes of padding follow */
	float occ; /* WorkerState.occupancy, seconds; NaN: not measured */
};
#define WORKER_NA 0xFFFF

/* One worker's history over its whole life in a fixed size: when the
 * points are all used, neighbours merge in pairs and each point from then
 * on covers twice as many samples (as struct timeline does). */
struct worker_hist {
	double t0;
	uint32_t len, per_point, in_last; /* in_last: samples in the newest point */
	struct worker_point pts[RUN_WORKER_HISTORY];
};

/* Per worker ever seen (keyed by address). Last-sample values plus exact
 * accumulators for the worker's time-weighted memory average. */
struct worker_agg {
	char name[RUN_NAME_LEN];
	char host[64];
	char status[16];
	optnum nthreads, memory_bytes, memory_limit, cpu_percent;
	optnum executing, processing, managed_bytes, spilled_bytes;
	optnum pid; /* its process: which chunks in flight are its own */
	double t_first_seen, t_last_seen;
	bool present; /* in the latest detailed sample */
	bool was_present; /* in the one before: joins and departures */
	double mem_peak;
	uint64_t mem_samples;
	double mem_integral, mem_covered; /* trapezoid over this worker's samples */
	double mem_first, mem_t_last, mem_v_last;
	struct worker_hist hist; /* for views */
};

/* Adds a worker's sample at time t (in time order) to the history. */
void run_worker_hist_add(struct worker_hist *h, double t, const struct worker_sample *s);

/* What the per-worker metrics need from workers evicted from the table. */
struct departed_agg {
	double nthreads_sum; /* their last nthreads */
	uint64_t n_nthreads;
	double mem_avg_sum; /* their time-weighted memory averages, bytes */
	uint64_t n_mem;
};

struct dataset_agg {
	uint64_t n_chunks; /* successful */
	uint64_t n_failed;
	double total_duration; /* seconds, successful chunks */
	double total_events; /* successful chunks with num_events */
	double total_bytes_read;
	struct stats duration;
	struct hist *duration_hist; /* allocated on first chunk */
};

/* Per file: counts, plus the first chunk's per-file read metrics and the
 * file metadata (deduplicated: the first one seen wins, as roastcoffea). */
struct file_agg {
	uint64_t n_chunks;
	double total_events, total_duration;
	bool has_meta;
	optnum compression_ratio, total_branches, total_tree_bytes;
	bool has_first;
	optnum accessed_bytes, bytes_read_percent, num_branches_accessed, branches_read_percent;
	char dataset[RUN_NAME_LEN];
};

struct section_agg {
	struct stats s; /* seconds, MB or bytes depending on the map */
};

/* One (context, prefix, activity, unit) counter. Cumulative counters reset
 * when the scheduler restarts; `carried` keeps what earlier segments added. */
struct fine_agg {
	double base; /* first value seen in this segment (cluster scope) */
	double last;
	double carried;
	bool span; /* from a span snapshot: base is 0 */
};

struct report_agg {
	bool present;
	optnum bytesread, entries, processtime, chunks;
	uint64_t n_columns;
};

struct source_info {
	char name[32];
	enum source_state state;
	char reason[RUN_LOG_TEXT];
	double since;
	uint64_t transitions;
};

struct log_line {
	double t;
	enum log_kind kind;
	char text[RUN_LOG_TEXT];
};

#define RUN_SECTION_HINTS 8

struct run {
	/* run markers */
	char run_id[64];
	char name[RUN_NAME_LEN];
	char processor[RUN_NAME_LEN];
	optnum expected_events;
	bool started, ended;
	double t_run_start, t_run_end;
	/* An implicit run (no run_start: no collector) begins at its first
	 * chunk's start (run_begin); its elapsed time counts from there. */
	bool begun;
	double t_begin;
	enum run_status status; /* RUN_RUNNING until a run_end */
	char status_reason[RUN_REASON_LEN]; /* failed: "Type: message"; else roastop's why */
	/* the run's latest datagram from its client (run_start, chunk, report,
	 * the collector's run_end): the idle timeout counts from it */
	double t_last_client;
	double t_first, t_last; /* first and latest event receive time */
	bool any_event;
	uint64_t applied[EV__COUNT];
	/* every run_apply but a log line's, and run_begin: the metrics read no
	 * log, so the app keeps a run's metrics while this stays (app_metrics) */
	uint64_t changes;
	uint64_t ignored; /* events that were valid but not applicable */
	/* events timed before t_last, applied in part (docs/recording.md,
	 * "Time going back") */
	uint64_t time_regressions;

	/* chunks, not attempts: a chunk's retries (retries.h) count once,
	 * failed while its latest attempt is */
	uint64_t n_chunks; /* every chunk, failed included */
	uint64_t n_failed;
	struct retries retries; /* which failed chunks a later attempt retried */
	struct stats chunk_duration; /* successful chunks, seconds */
	struct stats chunk_events; /* successful chunks with num_events */
	struct stats chunk_mem_delta; /* successful chunks with mem_delta_mb, MB */
	struct stats chunk_bytes_read; /* chunks with bytes_read */
	struct hist duration_hist;
	struct hist events_hist; /* events per chunk */
	struct topk slowest;
	struct strmap datasets; /* -> struct dataset_agg */
	struct strmap files; /* -> struct file_agg */
	struct strmap sec_time; /* track_time: seconds */
	struct strmap sec_mem; /* track_memory: MB */
	struct strmap sec_bytes; /* track_bytes: bytes */
	struct strmap branches; /* set of accessed branch names */
	struct strmap errors; /* error type -> uint64_t count */
	uint64_t overflow_datasets, overflow_files, overflow_sections, overflow_branches;
	uint64_t overflow_errors;
	uint64_t keys_shortened; /* names longer than RUN_KEY_MAX, kept as prefix + hash */
	uint64_t chunks_with_custom;
	uint64_t branch_lists_seen[8]; /* fingerprints of branch lists already merged */
	uint64_t branch_lists_next;
	/* strmap_upsert_hint's hints: the last dataset, and the sections by
	 * their place in a chunk's list (time, memory, bytes) */
	size_t hint_dataset, hint_sections[3][RUN_SECTION_HINTS];
	/* The successful chunks outside the run window (docs/metrics.md,
	 * "Invariants"): received before the run-start or after the run-end
	 * marker, and chunk time outside [start, end]. */
	uint64_t n_outside;
	double outside_events, outside_bytes, outside_time;
	double t_chunk_first, t_chunk_last; /* the chunks' span: an unmarked run's window */
	struct inflight inflight; /* chunks begun, not ended (chunk_start) */
	struct failed failed; /* the latest failed chunks */
	struct rawchunks raw; /* successful chunks' records, a sample past the cap */
	struct timeline tl_events; /* cumulative events at each chunk arrival */
	struct timeline tl_bytes; /* cumulative bytes_read at each chunk arrival */

	/* scheduler samples */
	uint64_t n_samples;
	uint64_t n_beat_samples; /* of them, made from heartbeats (beats.h) */
	char scheduler_id[96];
	char dask_version[32];
	/* The run's task progress (docs/scheduler.md, "Task progress"): its
	 * span's, or the growth of the scheduler's cumulative counters since the
	 * run began (base: their value then), never all-time counts. */
	optnum tasks_done, tasks_total;
	optnum tasks_cum_done, tasks_cum_total; /* the latest cumulative counters */
	double tasks_base_done, tasks_base_total;
	bool tasks_base_set;
	uint64_t scheduler_restarts;
	uint64_t scheduler_gaps; /* times the scheduler was lost: gaps in the timelines */
	struct strmap workers; /* address -> struct worker_agg, live table */
	uint64_t overflow_workers;
	uint64_t workers_evicted; /* departed workers folded into `departed` */
	struct departed_agg departed;
	uint32_t workers_now;
	struct timeline tl_workers; /* worker count */
	struct timeline tl_threads; /* total threads */
	struct timeline tl_mem_used; /* sum of worker memory, bytes */
	struct timeline tl_mem_limit; /* sum of memory limits, bytes */
	struct timeline tl_mem_worst_pct; /* highest worker memory %, per sample */
	struct timeline tl_cpu; /* mean worker CPU % per sample */
	struct timeline tl_executing; /* tasks executing, cluster-wide */
	/* tasks_done at each sample: the ETA's recent task rate. Broken (a
	 * gap) where the progress restarts its count or the scheduler is lost. */
	struct timeline tl_tasks_done;
	struct stats worker_mem_bytes; /* every worker sample: peak = max */
	struct stats worker_mem_pct; /* every worker sample with a limit */
	struct stats worker_cpu_pct; /* every worker sample */

	/* fine metrics: "context\x1fprefix\x1factivity\x1funit" -> struct
	 * fine_agg. Metrics use the span rows when there are any (scoped to the
	 * run), else the cluster rows' growth since roastop first saw them. */
	struct strmap fine_cluster;
	struct strmap fine_span;
	uint64_t n_fine_cluster, n_fine_span; /* snapshots applied */
	uint64_t overflow_fine;

	/* Dask tasks from the task stream: those that ran during the run
	 * (session.c routes them; docs/metrics.md, "Dask tasks") */
	struct tasks tasks;

	/* coffea report */
	struct report_agg report;

	/* sources and event log */
	struct source_info sources[4];
	size_t n_sources;
	struct log_line log[RUN_LOG_LINES]; /* ring */
	uint64_t log_count; /* total lines ever; newest at (log_count-1) % RUN_LOG_LINES */
};

/* 0 on success, -1 when out of memory. */
int run_init(struct run *r);
void run_destroy(struct run *r);
/* Charges the run's tables to pool (a session's runs share one, session.h). */
void run_set_pool(struct run *r, struct strmap_pool *pool);
/* An implicit run begins at t: totals count from there, as from a
 * run_start (unless !restart: a recording out of order, whose earlier lines
 * may be later in time), and its client is the chunks' senders (the idle
 * timeout). */
void run_begin(struct run *r, double t, bool restart);
/* Applies one event. Returns 0 when applied, 1 when ignored as not
 * applicable (counted in r->ignored). Never half-applies. */
int run_apply(struct run *r, const struct event *ev);
/* The fine-metrics key for a row, written into buf (NUL-terminated). */
size_t run_fine_key(char *buf, size_t size, const char *context, const char *prefix,
		    const char *activity, const char *unit);
/* Splits a fine key back into its 4 parts (pointers into buf, which is modified). */
bool run_fine_split(char *buf, const char *parts[4]);
/* Cumulative value of a fine row over the run (carried + last - base). */
double run_fine_value(const struct fine_agg *f);
/* Mean over workers ever seen (live and evicted) of their last nthreads,
 * and of their time-weighted memory averages; invalid with none. */
optnum run_cores_per_worker(const struct run *r);
optnum run_avg_memory_per_worker(const struct run *r);
/* 100 x bytes / limit; invalid unless both are known and the limit is
 * positive. The one formula for the run's totals and the workers table. */
optnum run_memory_percent(optnum bytes, optnum limit);
/* The i-th newest log line (0 = newest), or NULL. */
const struct log_line *run_log_get(const struct run *r, size_t i);

#endif
