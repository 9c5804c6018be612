/* Everything roastop learns is an event with a receive time. Sources only
 * produce events; run_apply() is the only thing that changes state.
 *
 * Every string and array of an event lives in the event's arena, so an
 * event is reused without malloc: event_reset() before decoding the next one.
 * Strings are NUL-terminated UTF-8; NULL means "not given". */
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
	/* Internal kinds: roastop's own changes to a run's row in the session
	 * (session.h), which session_apply() alone applies, at once (no clock,
	 * no settling). Never recorded, decoded or counted: a run's applied[]
	 * and the codecs' tables stop at EV__COUNT, and run_apply() ignores
	 * them. */
	EV_ROW_FIGURES = EV__COUNT, /* the run list's figures of a run (u.row_figures) */
	EV_ROW_WRITE, /* a run's measurement written, or not (u.row_write) */
};

/* One worker in a scheduler sample. id (the worker address) is required. */
struct worker_sample {
	const char *id;
	const char *name;
	const char *host;
	const char *status; /* "running", "paused", ... */
	optnum nthreads;
	optnum memory_bytes; /* process memory as the scheduler sees it */
	optnum memory_limit;
	optnum cpu_percent; /* 0-100 per worker, as WorkerState.metrics["cpu"] */
	optnum executing; /* tasks executing now */
	optnum processing; /* tasks assigned (processing set) */
	optnum managed_bytes;
	optnum spilled_bytes;
	optnum pid; /* the worker's process id: its chunks' pid (route only) */
	optnum occupancy; /* WorkerState.occupancy, seconds of work expected (route only) */
};

/* A task executing now, as the collector's route sees it (docs/scheduler.md). */
struct task_running {
	const char *key; /* a string key as it is, a tuple key as its compact JSON */
	const char *prefix; /* dask.utils.key_split(key) */
	const char *worker; /* the worker's address */
	double seconds; /* running this long at the sample's time */
};

struct kv_num;

struct ev_sample {
	const char *source; /* "state", "identity", "prometheus", ... */
	const char *scheduler_id; /* changes when the scheduler restarts */
	const char *dask_version;
	uint32_t worker_count; /* always set; equals n_workers when detailed */
	optnum total_threads; /* set when known even without per-worker rows */
	optnum tasks_processing; /* cluster-wide, when the source gives it */
	/* task progress of the run's span: done of total */
	optnum tasks_done, tasks_total;
	/* the scheduler's tasks finished and submitted since it started (never
	 * decreasing): a run's progress is their growth since it began */
	optnum tasks_done_cumulative, tasks_total_cumulative;
	size_t n_workers; /* 0 when the source has no per-worker detail */
	struct worker_sample *workers;
	/* The route's (version 4) failed tasks: prefix -> tasks gone into
	 * "erred" since erred_since (the scheduler's time at the route's
	 * install, the collector's run start), the prefixes with some;
	 * erred_left_out (prefixes not listed) and erred_since are given
	 * exactly when the source measured them. Other sources leave all out. */
	size_t n_erred;
	struct kv_num *erred;
	optnum erred_left_out, erred_since;
	/* The route's tasks executing now, the oldest first (at most
	 * EVENT_MAX_RUNNING); running_left_out (executing, not listed) is
	 * given exactly when the source measured them. */
	size_t n_running;
	struct task_running *running;
	optnum running_left_out;
	/* The scheduler's own per-prefix totals, from its Prometheus /metrics
	 * (a watch without the route or --task-stream): prefix -> its tasks
	 * gone into "memory" (prefix_done) and their compute seconds
	 * (prefix_compute) since the scheduler started, never decreasing;
	 * prefixes_left_out (past EVENT_MAX_SECTIONS) is given exactly when
	 * the source measured them. */
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

/* Field names are roastcoffea 0.1.2's @track_metrics record, plus roastop's
 * own (cpu_time, worker, host, pid, seq, error, custom). */
struct ev_chunk {
	optnum t_start, t_end, duration;
	optnum mem_before_mb, mem_after_mb, mem_delta_mb;
	optnum bytes_read, timestamp, num_events;
	optnum entry_start, entry_stop;
	optnum num_branches_accessed, accessed_bytes, accessed_uncompressed_bytes;
	optnum branches_read_percent, bytes_read_percent;
	optnum cpu_time; /* thread CPU seconds inside process() */
	/* seconds process()'s thread was runnable and not running: waiting
	 * for a CPU (Linux schedstat's run delay) */
	optnum cpu_wait;
	optnum pid, seq;
	optnum start_seq; /* the seq of this chunk's chunk_start, from the same sender */
	const char *dataset, *file, *uuid, *worker, *host;
	const char *error; /* exception type when process() raised; else NULL */
	const char *run_id; /* the collector's run, or NULL */
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

/* How a run ended. The collector sends completed or failed; roastop itself
 * decides incomplete (no word from the run for --run-idle-timeout) and
 * stopped (roastop quit while the run was going), and records them as a
 * run_end of its own. RUN_RUNNING is never sent: a run not ended yet. */
enum run_status {
	RUN_RUNNING = 0,
	RUN_COMPLETED,
	RUN_FAILED,
	RUN_INCOMPLETE,
	RUN_STOPPED,
	RUN_STATUS__COUNT
};

/* status NULL (an emitter older than the field) means completed. */
struct ev_run_end {
	const char *run_id;
	const char *status; /* a run_status name other than "running" */
	const char *error_type, *error_message; /* failed: the exception */
	const char *reason; /* roastop's own: why incomplete or stopped */
};

struct ev_report {
	optnum bytesread, entries, processtime, chunks;
	const char *run_id; /* the collector's run, or NULL */
	size_t n_columns;
	const char **columns;
};

enum fine_scope {
	FINE_CLUSTER = 0, /* Scheduler.cumulative_worker_metrics: since scheduler start */
	FINE_SPAN = 1, /* the run's span: already scoped to the run */
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
	const char *reason; /* human text, may be NULL */
	/* 1: losing this source breaks the timelines it feeds (a gap, no
	 * average across it); absent in a recording older than the field:
	 * the decoder says 1 for "scheduler", else 0 (docs/recording.md) */
	optnum gaps_timelines;
};

/* An analysis process, once a second (docs/protocol.md, "heartbeat"):
 * host and pid (required) name it. */
struct ev_heartbeat {
	const char *host, *worker; /* worker: the Dask worker's name, if any */
	optnum pid, seq; /* seq: the sender's number, as a chunk's */
	optnum rss_bytes; /* resident memory */
	optnum cpu_time; /* process CPU seconds since it started, all threads */
	optnum chunks_in_flight;
	optnum interval; /* seconds between its beats */
};

/* A Dask task's startstop (include/roastop/taskstream.h). */
struct ev_task {
	const char *key; /* the task key as text (a tuple key: its JSON) */
	const char *prefix; /* dask.utils.key_split(key) */
	const char *worker; /* the worker that ran it, or NULL */
	const char *action; /* "compute", "transfer", "disk-read", "disk-write", ... */
	const char *status; /* "OK", "error", or NULL */
	optnum start, stop; /* seconds since the epoch, the worker's clock; both given */
};

/* How bad a log line is (the event log's level). */
enum log_kind { LOG_INFO = 0, LOG_WARN, LOG_ERROR, LOG__COUNT };

/* A note for the event log (docs/recording.md, "log"): what a source
 * noticed (datagrams lost or rejected) or roastop itself (its clock
 * stepped). An event, so that a replay shows the log the live session
 * showed. The model puts it into the newest run's log. */
#define EVENT_LOG_TEXT_MAX 512u /* bytes of text */
struct ev_log {
	enum log_kind level;
	const char *text; /* required */
	/* roastop's own note about its output or a replay itself (a checkpoint
	 * failed, a replay's time jump): never recorded nor decoded; into the
	 * log only, at once, not counted as applied, marking no closed run to
	 * be written again */
	bool own;
};

/* A source's statistics: one counter, as metrics.json writes it. */
struct source_counter {
	/* NULL, or the object in the block this counter belongs to (e.g.
	 * "rejected": by reason); a member is written only when non-zero,
	 * except "total", and a group appears even when all its members are 0 */
	const char *group;
	const char *name;
	uint64_t value;
};

/* A source's statistics as they stand (docs/recording.md, "counters"):
 * delivered when they change, at most once a second, and at the stop; the
 * model keeps the latest of each source, which metrics.json writes. */
#define EVENT_COUNTERS_MAX 64u /* counters in one event */
#define EVENT_COUNTER_NAME_MAX 63u /* bytes of a source, group, counter or state key name */
#define EVENT_COUNTER_STATE_MAX 319u /* bytes of the state ("127.0.0.1:9999", ...) */
#define EVENT_COUNTER_VALUE_MAX 9007199254740991.0 /* 2^53 - 1: exact in a double */
struct ev_counters {
	const char *source; /* required: the block's name ("udp", "scheduler") */
	const char *state_key; /* the state's key in the block ("listen"), or NULL */
	const char *state; /* given exactly when state_key is */
	size_t n_counters;
	const struct source_counter *counters;
};

struct run;

/* EV_ROW_FIGURES: a run's line in the run list (session_figures), from
 * its metrics; the row takes the run's status with them. */
struct ev_row_figures {
	const struct run *run; /* the row's run */
	double t_start; /* wall seconds; NAN when unknown */
	optnum elapsed, chunks, failed, events, event_rate_hz;
};

/* EV_ROW_WRITE: how writing a run's measurement directory went. */
struct ev_row_write {
	const struct run *run; /* the row's run */
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
		struct ev_row_figures row_figures; /* internal */
		struct ev_row_write row_write; /* internal */
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
/* A sample's failed and running tasks: each list only with its left_out
 * count, within its bound, every entry whole and in range (range.h). */
bool event_sample_tasks_ok(const struct ev_sample *s);
/* Seconds in process(): duration, else t_end - t_start (the decoders
 * accept a chunk only with one of them). */
double event_chunk_duration(const struct ev_chunk *c);
/* A task's start and stop: both given, times a recording can hold
 * (RANGE_EPOCH: 0 to 1e11 s), in order. */
bool event_task_times_ok(const struct ev_task *t);

/* How every source hands an event on (source.h): the app records it and
 * applies it to the run. ev and what it points to live until the call
 * returns. */
typedef void (*event_deliver_fn)(void *ctx, const struct event *ev);

const char *event_type_name(enum event_type t);
enum event_type event_type_from_name(const char *name);
const char *source_state_name(enum source_state s);
const char *log_kind_name(enum log_kind k);
/* LOG__COUNT when name is none of "info", "warn", "error". */
enum log_kind log_kind_from_name(const char *name);
const char *run_status_name(enum run_status s);
/* RUN_STATUS__COUNT when name is none of run_end's statuses. */
enum run_status run_status_from_name(const char *name);

#endif
