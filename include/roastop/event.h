/* Everything roastop learns is an event with a receive time; run_apply()
 * alone changes state. Every field is described in docs/recording.md.
 * Strings and arrays live in the event's arena (event_reset() before the
 * next decode); strings are UTF-8, NULL means "not given". */
#ifndef ROASTOP_EVENT_H
#define ROASTOP_EVENT_H

#include "roastop/arena.h"
#include "roastop/common.h"

enum event_type {
	EV_NONE = 0,
	EV_SAMPLE, /* a scheduler poll: workers and their state */
	EV_CHUNK, /* one processed chunk, from the emitter */
	EV_RUN_START,
	EV_RUN_END,
	EV_REPORT, /* coffea's report at the end of Runner.run */
	EV_FINE, /* cumulative Dask fine metrics */
	EV_STATUS, /* a source connected / degraded / lost */
	EV_CHUNK_START, /* a chunk began: u.chunk with the start's fields only */
	EV_HEARTBEAT, /* one analysis process's pulse, from the emitter */
	EV_TASK, /* one startstop of a finished Dask task, from /eventstream */
	EV_LOG, /* a line for the event log: a source's or roastop's own note */
	EV_COUNTERS, /* a source's statistics (metrics.json's roastop.<source>) */
	EV__COUNT,
	/* Internal: roastop's own changes to the session, applied by
	 * session_apply() alone; never recorded, decoded or counted. */
	EV_ROW_FIGURES = EV__COUNT, /* the run list's figures of a run (u.row_figures) */
	EV_ROW_WRITE, /* a run's measurement written, or not (u.row_write) */
	EV_SETTLE, /* the runs ended at least SESSION_SETTLE before t close */
	EV_ADOPT_WATCH, /* at the exit, with no run: the watch becomes the one run */
	EV_CLOSE_ALL, /* at the exit: every run not closed (or changed since) closes */
};

/* One worker in a scheduler sample; id (its address) is required. */
struct worker_sample {
	const char *id;
	const char *name;
	const char *host;
	const char *status;
	optnum nthreads;
	optnum memory_bytes;
	optnum memory_limit;
	optnum cpu_percent; /* 0-100 per worker, as WorkerState.metrics["cpu"] */
	optnum executing;
	optnum processing;
	optnum managed_bytes;
	optnum spilled_bytes;
	optnum pid; /* route only: matches its chunks' pid */
	optnum occupancy; /* route only: seconds of work expected */
};

/* A task executing now, as the collector's route sees it (docs/scheduler.md). */
struct task_running {
	const char *key; /* a string key as it is, a tuple key as its compact JSON */
	const char *prefix; /* dask.utils.key_split(key) */
	const char *worker;
	double seconds; /* running this long at the sample's time */
};

struct kv_num;

struct ev_sample {
	const char *source; /* "state", "identity", "prometheus", ... */
	const char *scheduler_id; /* changes when the scheduler restarts */
	const char *dask_version;
	uint32_t worker_count; /* always set; equals n_workers when detailed */
	optnum total_threads;
	optnum tasks_processing;
	optnum tasks_done, tasks_total; /* the run's span */
	optnum tasks_done_cumulative, tasks_total_cumulative; /* since the scheduler started */
	size_t n_workers; /* 0 when the source has no per-worker detail */
	struct worker_sample *workers;
	/* Each list below comes with its left_out count (entries not listed),
	 * given exactly when the source measured the list. */
	size_t n_erred; /* the route's failed tasks by prefix since erred_since */
	struct kv_num *erred;
	optnum erred_left_out, erred_since;
	size_t n_running; /* the route's tasks executing now, the oldest first */
	struct task_running *running;
	optnum running_left_out;
	/* per-prefix tasks done and compute seconds, from the scheduler's /metrics */
	size_t n_prefix_done, n_prefix_compute;
	struct kv_num *prefix_done, *prefix_compute;
	optnum prefixes_left_out;
};
#define EVENT_MAX_RUNNING 64u /* a sample's running tasks */

struct kv_num {
	const char *key;
	double value;
};

struct file_meta {
	const char *filename;
	optnum compression_ratio;
	optnum total_branches;
	optnum total_tree_bytes;
};

/* roastcoffea 0.1.2's @track_metrics record, plus roastop's own fields. */
struct ev_chunk {
	optnum t_start, t_end, duration;
	optnum mem_before_mb, mem_after_mb, mem_delta_mb;
	optnum bytes_read, timestamp, num_events;
	optnum entry_start, entry_stop;
	optnum num_branches_accessed, accessed_bytes, accessed_uncompressed_bytes;
	optnum branches_read_percent, bytes_read_percent;
	optnum cpu_time; /* thread CPU seconds inside process() */
	optnum cpu_wait; /* seconds runnable but not running (schedstat run delay) */
	optnum pid, seq;
	optnum start_seq; /* the seq of this chunk's chunk_start */
	const char *dataset, *file, *uuid, *worker, *host;
	const char *error; /* exception type when process() raised */
	const char *run_id;
	size_t n_branches;
	const char **accessed_branches;
	size_t n_timing, n_memory, n_bytes; /* track_time / track_memory / track_bytes */
	struct kv_num *timing, *memory, *bytes;
	bool has_file_metadata;
	struct file_meta file_metadata;
	const char *custom_json; /* unknown fields as a compact JSON object, or NULL */
};

struct ev_run_start {
	const char *run_id;
	const char *name;
	const char *processor; /* processor class name: the fine-metrics prefix */
	size_t n_datasets;
	const char **datasets;
	optnum expected_events;
	const char *client_host;
	optnum client_pid;
};

/* How a run ended: completed or failed from the collector; incomplete or
 * stopped decided by roastop. RUN_RUNNING (not ended) is never sent. */
enum run_status {
	RUN_RUNNING = 0,
	RUN_COMPLETED,
	RUN_FAILED,
	RUN_INCOMPLETE,
	RUN_STOPPED,
	RUN_STATUS__COUNT
};

struct ev_run_end {
	const char *run_id;
	const char *status; /* a run_status name; NULL means completed */
	const char *error_type, *error_message;
	const char *reason; /* why incomplete or stopped */
};

struct ev_report {
	optnum bytesread, entries, processtime, chunks;
	const char *run_id;
	size_t n_columns;
	const char **columns;
};

enum fine_scope {
	FINE_CLUSTER = 0, /* since the scheduler started */
	FINE_SPAN = 1, /* the run's span */
};

/* (context, prefix, activity, unit) -> value, cumulative. */
struct fine_row {
	const char *context, *prefix, *activity, *unit;
	double value;
};

struct ev_fine {
	enum fine_scope scope;
	size_t n_rows;
	struct fine_row *rows;
};

enum source_state {
	SRC_CONNECTED = 0,
	SRC_DEGRADED,
	SRC_LOST,
	SRC__COUNT
};

struct ev_status {
	const char *source; /* "scheduler", "udp", "replay" */
	enum source_state state;
	const char *reason;
	optnum gaps_timelines; /* 1: losing this source is a gap in its timelines */
};

/* An analysis process's pulse; host and pid (required) name it. */
struct ev_heartbeat {
	const char *host, *worker;
	optnum pid, seq;
	optnum rss_bytes;
	optnum cpu_time; /* process CPU seconds since it started */
	optnum chunks_in_flight;
	optnum interval; /* seconds between its beats */
};

/* A Dask task's startstop (taskstream.h). */
struct ev_task {
	const char *key; /* a tuple key as its JSON */
	const char *prefix;
	const char *worker;
	const char *action; /* "compute", "transfer", ... */
	const char *status;
	optnum start, stop; /* the worker's clock; both given */
};

enum log_kind { LOG_INFO = 0, LOG_WARN, LOG_ERROR, LOG__COUNT };

/* A line for the newest run's event log, from a source or roastop itself:
 * an event, so that a replay shows the log the live session showed. */
#define EVENT_LOG_TEXT_MAX 512u /* bytes of text */
struct ev_log {
	enum log_kind level;
	const char *text; /* required */
	/* roastop's note about its output or the replay: never recorded, into
	 * the log at once, not counted as applied */
	bool own;
};

/* One counter of a source's statistics, as metrics.json writes it. */
struct source_counter {
	const char *group; /* NULL, or the object in the block it belongs to */
	const char *name;
	uint64_t value;
};

/* A source's statistics as they stand; metrics.json writes each source's
 * latest. */
#define EVENT_COUNTERS_MAX 64u /* counters in one event */
#define EVENT_COUNTER_NAME_MAX 63u /* bytes of a source, group, counter or state key name */
#define EVENT_COUNTER_STATE_MAX 319u /* bytes of the state ("127.0.0.1:9999", ...) */
#define EVENT_COUNTER_VALUE_MAX 9007199254740991.0 /* 2^53 - 1: exact in a double */
struct ev_counters {
	const char *source; /* required: the block's name ("udp", "scheduler") */
	const char *state_key; /* the state's key in the block ("listen") */
	const char *state; /* given exactly when state_key is */
	size_t n_counters;
	const struct source_counter *counters;
};

struct run;

/* EV_ROW_FIGURES: a run's line in the run list (session_figures). */
struct ev_row_figures {
	const struct run *run;
	double t_start; /* wall seconds; NAN when unknown */
	optnum elapsed, chunks, failed, events, event_rate_hz;
};

/* EV_ROW_WRITE: how writing a run's measurement directory went. */
struct ev_row_write {
	const struct run *run;
	const char *dir; /* the directory's name at its first write; NULL: as it is */
	int write_errno; /* the measurement's: 0 when written */
	bool failed; /* it, or the `latest` link: a closed run is written again */
};

struct event {
	enum event_type type;
	double t; /* receive time, seconds since the epoch (roastop's clock) */
	union {
		struct ev_sample sample;
		struct ev_chunk chunk;
		struct ev_run_start run_start;
		struct ev_run_end run_end;
		struct ev_report report;
		struct ev_fine fine;
		struct ev_status status;
		struct ev_heartbeat heartbeat;
		struct ev_task task;
		struct ev_log log;
		struct ev_counters counters;
		struct ev_row_figures row_figures;
		struct ev_row_write row_write;
	} u;
	struct arena mem; /* owns every string and array above */
};

/* Hard bounds every decoder enforces (a bad event is rejected whole). */
#define EVENT_MAX_STRING 4096u
#define EVENT_MAX_LIST 65536u /* workers, branches, columns, fine rows */
#define EVENT_MAX_SECTIONS 256u
#define EVENT_ARENA_LIMIT (64u << 20)

void event_init(struct event *ev);
/* Forget the payload, keep the arena's memory for the next decode. */
void event_reset(struct event *ev);
void event_free(struct event *ev);
/* A sample's task progress pairs: each given both or neither, done <= total. */
bool event_sample_progress_ok(const struct ev_sample *s);
/* A sample's task lists: each with its left_out count, within its bound,
 * every entry in range (range.h). */
bool event_sample_tasks_ok(const struct ev_sample *s);
/* Seconds in process(): duration, else t_end - t_start (the decoders
 * accept a chunk only with one of them). */
double event_chunk_duration(const struct ev_chunk *c);
/* A task's start and stop: both given, within RANGE_EPOCH, in order. */
bool event_task_times_ok(const struct ev_task *t);

/* How every source hands an event on (source.h); ev lives until the call
 * returns. */
typedef void (*event_deliver_fn)(void *ctx, const struct event *ev);

const char *event_type_name(enum event_type t);
enum event_type event_type_from_name(const char *name);
const char *source_state_name(enum source_state s);
const char *log_kind_name(enum log_kind k);
const char *run_status_name(enum run_status s);
/* RUN_STATUS__COUNT when name is none of run_end's statuses. */
enum run_status run_status_from_name(const char *name);

#endif
