/* The field tables of every event type (docs/recording.md has them as
 * prose). A scheduler quantity's bounds come from range.h. */
#include "roastop/event_field.h"

#include <pthread.h>
#include <stddef.h>

#include "roastop/range.h"

#define NAME(f) #f, sizeof(#f) - 1
/* The _W forms take the field's datagram id: the one place it is written
 * (test_wire_table.py checks the emitter's copy). */
#define NUM_W(w, s, f, l, h) { NAME(f), FK_NUM, offsetof(struct s, f), 0, l, h, w }
#define INT_W(w, s, f, l, h) { NAME(f), FK_INT, offsetof(struct s, f), 0, l, h, w }
#define STR_W(w, s, f) { NAME(f), FK_STR, offsetof(struct s, f), 0, 0, 0, w }
#define LIST_W(w, s, f, n, k) { NAME(f), k, offsetof(struct s, f), offsetof(struct s, n), 0, 0, w }
#define OTHER_W(w, s, f, k, flag) { NAME(f), k, offsetof(struct s, f), flag, 0, 0, w }
#define NUM(s, f, l, h) NUM_W(0, s, f, l, h)
#define INT(s, f, l, h) INT_W(0, s, f, l, h)
#define STR(s, f) STR_W(0, s, f)
#define LIST(s, f, n, k) LIST_W(0, s, f, n, k)
#define OTHER(s, f, k, flag) OTHER_W(0, s, f, k, flag)

/* Each table is sorted by name: the encoder writes fields in this order. */
static const struct event_field chunk_fields[] = {
	LIST_W(1, ev_chunk, accessed_branches, n_branches, FK_STRLIST),
	NUM_W(2, ev_chunk, accessed_bytes, 0, EVENT_BIG),
	NUM_W(3, ev_chunk, accessed_uncompressed_bytes, 0, EVENT_BIG),
	NUM_W(4, ev_chunk, branches_read_percent, 0, 100.001),
	LIST_W(5, ev_chunk, bytes, n_bytes, FK_KV),
	NUM_W(6, ev_chunk, bytes_read, 0, EVENT_BIG),
	NUM_W(7, ev_chunk, bytes_read_percent, 0, 100.001),
	NUM_W(8, ev_chunk, cpu_time, 0, EVENT_BIG_SECONDS),
	NUM_W(72, ev_chunk, cpu_wait, 0, EVENT_BIG_SECONDS),
	STR_W(9, ev_chunk, dataset),
	NUM_W(10, ev_chunk, duration, 0, EVENT_BIG_SECONDS),
	INT_W(11, ev_chunk, entry_start, 0, EVENT_BIG),
	INT_W(12, ev_chunk, entry_stop, 0, EVENT_BIG),
	STR_W(13, ev_chunk, error),
	STR_W(14, ev_chunk, file),
	OTHER_W(15, ev_chunk, file_metadata, FK_FILEMETA,
		offsetof(struct ev_chunk, has_file_metadata)),
	STR_W(16, ev_chunk, host),
	NUM_W(17, ev_chunk, mem_after_mb, 0, 1e9),
	NUM_W(18, ev_chunk, mem_before_mb, 0, 1e9),
	NUM_W(19, ev_chunk, mem_delta_mb, -1e9, 1e9),
	LIST_W(20, ev_chunk, memory, n_memory, FK_KV),
	INT_W(21, ev_chunk, num_branches_accessed, 0, 1e7),
	INT_W(22, ev_chunk, num_events, 0, EVENT_BIG),
	INT_W(23, ev_chunk, pid, 0, 1e9),
	STR_W(64, ev_chunk, run_id),
	INT_W(24, ev_chunk, seq, 0, 9007199254740991.0),
	INT_W(67, ev_chunk, start_seq, 0, 9007199254740991.0),
	NUM_W(25, ev_chunk, t_end, 0, EVENT_T_MAX),
	NUM_W(26, ev_chunk, t_start, 0, EVENT_T_MAX),
	NUM_W(27, ev_chunk, timestamp, 0, EVENT_T_MAX),
	LIST_W(28, ev_chunk, timing, n_timing, FK_KV),
	STR_W(29, ev_chunk, uuid),
	STR_W(30, ev_chunk, worker),
};

/* A chunk_start: the chunk's fields known when it begins. */
static const struct event_field chunk_start_fields[] = {
	STR_W(9, ev_chunk, dataset),
	INT_W(11, ev_chunk, entry_start, 0, EVENT_BIG),
	INT_W(12, ev_chunk, entry_stop, 0, EVENT_BIG),
	STR_W(14, ev_chunk, file),
	STR_W(16, ev_chunk, host),
	INT_W(23, ev_chunk, pid, 0, 1e9),
	STR_W(64, ev_chunk, run_id),
	INT_W(24, ev_chunk, seq, 0, 9007199254740991.0),
	NUM_W(26, ev_chunk, t_start, 0, EVENT_T_MAX),
	STR_W(29, ev_chunk, uuid),
	STR_W(30, ev_chunk, worker),
};

static const struct event_field worker_fields[] = {
	NUM(worker_sample, cpu_percent, 0, RANGE_CPU_PERCENT_MAX),
	NUM(worker_sample, executing, 0, RANGE_TASKS_MAX),
	STR(worker_sample, host),
	STR(worker_sample, id),
	NUM(worker_sample, managed_bytes, 0, RANGE_BYTES_MAX),
	NUM(worker_sample, memory_bytes, 0, RANGE_BYTES_MAX),
	NUM(worker_sample, memory_limit, 0, RANGE_BYTES_MAX),
	STR(worker_sample, name),
	NUM(worker_sample, nthreads, 0, RANGE_NTHREADS_MAX),
	NUM(worker_sample, occupancy, 0, RANGE_OCCUPANCY_MAX),
	INT(worker_sample, pid, 0, RANGE_PID_MAX),
	NUM(worker_sample, processing, 0, RANGE_TASKS_MAX),
	NUM(worker_sample, spilled_bytes, 0, RANGE_BYTES_MAX),
	STR(worker_sample, status),
};

static const struct event_field sample_fields[] = {
	STR(ev_sample, dask_version),
	LIST(ev_sample, erred, n_erred, FK_KV),
	NUM(ev_sample, erred_left_out, 0, RANGE_TASKS_MAX),
	NUM(ev_sample, erred_since, 0, RANGE_EPOCH_MAX),
	LIST(ev_sample, prefix_compute, n_prefix_compute, FK_KV),
	LIST(ev_sample, prefix_done, n_prefix_done, FK_KV),
	NUM(ev_sample, prefixes_left_out, 0, RANGE_TASKS_MAX),
	LIST(ev_sample, running, n_running, FK_RUNNING),
	NUM(ev_sample, running_left_out, 0, RANGE_TASKS_MAX),
	STR(ev_sample, scheduler_id),
	STR(ev_sample, source),
	NUM(ev_sample, tasks_done, 0, RANGE_TASKS_MAX),
	NUM(ev_sample, tasks_done_cumulative, 0, RANGE_TASKS_MAX),
	NUM(ev_sample, tasks_processing, 0, RANGE_TASKS_MAX),
	NUM(ev_sample, tasks_total, 0, RANGE_TASKS_MAX),
	NUM(ev_sample, tasks_total_cumulative, 0, RANGE_TASKS_MAX),
	NUM(ev_sample, total_threads, 0, RANGE_TOTAL_THREADS_MAX),
	{ NAME(worker_count), FK_U32, offsetof(struct ev_sample, worker_count), 0, 0,
	  RANGE_WORKERS_MAX, 0 },
	LIST(ev_sample, workers, n_workers, FK_WORKERS),
};

static const struct event_field run_start_fields[] = {
	STR_W(1, ev_run_start, client_host),
	INT_W(2, ev_run_start, client_pid, 0, 1e9),
	LIST_W(3, ev_run_start, datasets, n_datasets, FK_STRLIST),
	INT_W(4, ev_run_start, expected_events, 0, EVENT_BIG),
	STR_W(5, ev_run_start, name),
	STR_W(6, ev_run_start, processor),
	STR_W(64, ev_run_start, run_id),
};

static const struct event_field run_end_fields[] = {
	STR_W(1, ev_run_end, error_message),
	STR_W(2, ev_run_end, error_type),
	STR_W(3, ev_run_end, reason),
	STR_W(64, ev_run_end, run_id),
	STR_W(4, ev_run_end, status),
};

static const struct event_field report_fields[] = {
	NUM_W(1, ev_report, bytesread, 0, EVENT_BIG),
	INT_W(2, ev_report, chunks, 0, EVENT_BIG),
	LIST_W(3, ev_report, columns, n_columns, FK_STRLIST),
	INT_W(4, ev_report, entries, 0, EVENT_BIG),
	NUM_W(5, ev_report, processtime, 0, EVENT_BIG),
	STR_W(64, ev_report, run_id),
};

static const struct event_field fine_fields[] = {
	LIST(ev_fine, rows, n_rows, FK_ROWS),
	OTHER(ev_fine, scope, FK_SCOPE, 0),
};

static const struct event_field status_fields[] = {
	INT(ev_status, gaps_timelines, 0, 1),
	STR(ev_status, reason),
	STR(ev_status, source),
	OTHER(ev_status, state, FK_STATE, 0),
};

static const struct event_field heartbeat_fields[] = {
	INT_W(32, ev_heartbeat, chunks_in_flight, 0, 1e6),
	NUM_W(8, ev_heartbeat, cpu_time, 0, EVENT_BIG_SECONDS),
	STR_W(16, ev_heartbeat, host),
	NUM_W(33, ev_heartbeat, interval, 0.01, 3600),
	INT_W(23, ev_heartbeat, pid, 0, 1e9),
	NUM_W(31, ev_heartbeat, rss_bytes, 0, EVENT_BIG),
	INT_W(24, ev_heartbeat, seq, 0, 9007199254740991.0),
	STR_W(30, ev_heartbeat, worker),
};

static const struct event_field task_fields[] = {
	STR(ev_task, action),
	STR(ev_task, key),
	STR(ev_task, prefix),
	NUM(ev_task, start, 0, EVENT_T_MAX),
	STR(ev_task, status),
	NUM(ev_task, stop, 0, EVENT_T_MAX),
	STR(ev_task, worker),
};

static const struct event_field log_fields[] = {
	OTHER(ev_log, level, FK_LEVEL, 0),
	STR(ev_log, text),
};

static const struct event_field counters_fields[] = {
	LIST(ev_counters, counters, n_counters, FK_COUNTERS),
	STR(ev_counters, source),
	STR(ev_counters, state),
	STR(ev_counters, state_key),
};

static const struct event_field filemeta_fields[] = {
	NUM_W(1, file_meta, compression_ratio, 0, 1e6),
	STR_W(2, file_meta, filename),
	INT_W(3, file_meta, total_branches, 0, 1e7),
	NUM_W(4, file_meta, total_tree_bytes, 0, EVENT_BIG),
};

/* Every table: the event types' (EV_NONE's is empty), a worker's, file_metadata's. */
#define T_WORKERS EV__COUNT
#define T_FILEMETA (EV__COUNT + 1)
#define N_TABLES (EV__COUNT + 2)

static uint8_t field_slots[N_TABLES][FIELD_SLOTS]; /* entry index + 1; 0 = empty */

#define TABLE(i, a) [i] = { a, ROASTOP_ARRAY_LEN(a), field_slots[i] }

static const struct field_table tables[N_TABLES] = {
	TABLE(EV_SAMPLE, sample_fields),	       TABLE(EV_CHUNK, chunk_fields),
	TABLE(EV_RUN_START, run_start_fields),     TABLE(EV_RUN_END, run_end_fields),
	TABLE(EV_REPORT, report_fields),	       TABLE(EV_FINE, fine_fields),
	TABLE(EV_STATUS, status_fields),	       TABLE(EV_CHUNK_START, chunk_start_fields),
	TABLE(EV_HEARTBEAT, heartbeat_fields),     TABLE(EV_TASK, task_fields),
	TABLE(EV_LOG, log_fields),		       TABLE(EV_COUNTERS, counters_fields),
	TABLE(T_WORKERS, worker_fields),	       TABLE(T_FILEMETA, filemeta_fields),
};

static pthread_once_t field_slots_once = PTHREAD_ONCE_INIT;

static void field_index_all(void)
{
	for (size_t k = 0; k < N_TABLES; k++) {
		const struct field_table *t = &tables[k];
		for (size_t i = 0; i < t->n; i++) {
			unsigned h = field_hash(t->f[i].name, t->f[i].len);
			while (t->slots[h])
				h = (h + 1) & (FIELD_SLOTS - 1);
			t->slots[h] = (uint8_t)(i + 1);
		}
	}
}

void event_field_init(void)
{
	pthread_once(&field_slots_once, field_index_all);
}

const struct field_table *event_field_table(enum event_type t)
{
	return (unsigned)t < EV__COUNT ? &tables[t] : NULL;
}

const struct field_table *event_field_workers(void)
{
	return &tables[T_WORKERS];
}

const struct field_table *event_field_filemeta(void)
{
	return &tables[T_FILEMETA];
}

#define AT(s, f) offsetof(struct s, f)

static const struct field_tuple tuples[] = {
	[FK_ROWS] = { sizeof(struct fine_row), 4,
		      { AT(fine_row, context), AT(fine_row, prefix), AT(fine_row, activity),
			AT(fine_row, unit) },
		      AT(fine_row, value) },
	[FK_COUNTERS] = { sizeof(struct source_counter), 2,
			  { AT(source_counter, group), AT(source_counter, name) },
			  AT(source_counter, value) },
	[FK_RUNNING] = { sizeof(struct task_running), 3,
			 { AT(task_running, key), AT(task_running, prefix), AT(task_running, worker) },
			 AT(task_running, seconds) },
};

const struct field_tuple *event_field_tuple(enum field_kind k)
{
	return k == FK_ROWS || k == FK_COUNTERS || k == FK_RUNNING ? &tuples[k] : NULL;
}

const char *event_field_encoding(const struct event_field *f)
{
	switch (f->kind) {
	case FK_NUM: return "num";
	case FK_INT: return "int"; /* a num on the wire, checked whole */
	case FK_STR: return "str";
	case FK_STRLIST: return "strlist";
	case FK_KV: return "kv";
	case FK_FILEMETA: return "meta";
	default: return NULL; /* no datagram form */
	}
}

bool event_field_present(const struct event_field *f, const void *base)
{
	const char *b = base;
	const void *p = b + f->off;
	switch (f->kind) {
	case FK_NUM:
	case FK_INT: return ((const optnum *)p)->valid;
	case FK_STR: return *(const char *const *)p != NULL;
	case FK_STRLIST: return *(const char *const *const *)p != NULL;
	case FK_FILEMETA: return *(const bool *)(b + f->off2);
	case FK_KV:
	case FK_RUNNING:
	case FK_WORKERS: return *(const size_t *)(b + f->off2) > 0;
	case FK_COUNTERS: return *(const void *const *)p != NULL;
	default: return true; /* FK_U32, FK_ROWS, FK_SCOPE, FK_STATE, FK_LEVEL */
	}
}

/* A chunk_start's: entry_start <= entry_stop. */
static enum decode_error check_start(const struct ev_chunk *c)
{
	if (c->entry_start.valid && c->entry_stop.valid &&
	    c->entry_stop.value < c->entry_start.value)
		return DEC_INCONSISTENT;
	return DEC_OK;
}

/* A chunk's, once all its fields are read: without a duration, t_end -
 * t_start is it, bounded like a given one so that the event encodes to a
 * line that decodes again; entry_start <= entry_stop; a non-empty error. */
static enum decode_error check_chunk(struct ev_chunk *c)
{
	if (!c->duration.valid) {
		if (!(c->t_start.valid && c->t_end.valid))
			return DEC_MISSING_FIELD;
		double d = c->t_end.value - c->t_start.value;
		if (!(d >= 0 && d <= EVENT_BIG_SECONDS))
			return DEC_OUT_OF_RANGE;
		c->duration = optnum_of(d);
	}
	enum decode_error e = check_start(c); /* the entry range, as a start's */
	if (e)
		return e;
	if (c->error && !c->error[0])
		return DEC_OUT_OF_RANGE;
	return DEC_OK;
}

static enum decode_error check_sample(struct ev_sample *s, bool count_given)
{
	if (!count_given && !s->workers)
		return DEC_MISSING_FIELD;
	if (!count_given)
		s->worker_count = (uint32_t)s->n_workers;
	else if (s->workers && s->worker_count != s->n_workers)
		return DEC_INCONSISTENT;
	if (!event_sample_progress_ok(s))
		return DEC_INCONSISTENT; /* progress comes as a pair, done <= total */
	return event_sample_tasks_ok(s) ? DEC_OK : DEC_OUT_OF_RANGE;
}

/* A status roastop does not know would leave the run's end unexplained:
 * rejected whole, like any other value out of range. */
static enum decode_error check_run_end(const struct ev_run_end *e)
{
	if (!e->status)
		return DEC_OK;
	enum run_status s = run_status_from_name(e->status);
	return s == RUN_STATUS__COUNT ? DEC_OUT_OF_RANGE : DEC_OK;
}

/* A recording older than gaps_timelines: only the scheduler's loss made a
 * gap then. */
static enum decode_error check_status(struct ev_status *st, bool saw_state)
{
	if (!st->source || !saw_state)
		return DEC_MISSING_FIELD;
	if (!st->gaps_timelines.valid)
		st->gaps_timelines = (optnum){ strcmp(st->source, "scheduler") == 0, true };
	return DEC_OK;
}

/* A name: absent is an error only when required; given, 1 to max bytes. */
static enum decode_error check_name(const char *s, size_t max, bool required)
{
	if (!s)
		return required ? DEC_MISSING_FIELD : DEC_OK;
	size_t n = strlen(s);
	if (n == 0)
		return DEC_OUT_OF_RANGE;
	return n > max ? DEC_STRING_TOO_LONG : DEC_OK;
}

static bool same_group(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* A name given twice in one group: it would be a JSON object's key twice. */
static bool counters_repeat(const struct ev_counters *c)
{
	for (size_t i = 0; i < c->n_counters; i++)
		for (size_t k = 0; k < i; k++)
			if (same_group(c->counters[i].group, c->counters[k].group) &&
			    strcmp(c->counters[i].name, c->counters[k].name) == 0)
				return true;
	return false;
}

/* Names bounded and once each per group, the state with its key. */
static enum decode_error check_counters(const struct ev_counters *c)
{
	enum decode_error e = check_name(c->source, EVENT_COUNTER_NAME_MAX, true);
	if (!e)
		e = check_name(c->state_key, EVENT_COUNTER_NAME_MAX, false);
	if (!e && c->state && strlen(c->state) > EVENT_COUNTER_STATE_MAX)
		e = DEC_STRING_TOO_LONG;
	if (!e && !c->state_key != !c->state)
		e = DEC_INCONSISTENT;
	for (size_t i = 0; !e && i < c->n_counters; i++) {
		e = check_name(c->counters[i].group, EVENT_COUNTER_NAME_MAX, false);
		if (!e)
			e = check_name(c->counters[i].name, EVENT_COUNTER_NAME_MAX, true);
	}
	return !e && counters_repeat(c) ? DEC_INCONSISTENT : e;
}

enum decode_error event_field_check(struct event *ev, const struct field_seen *seen)
{
	switch (ev->type) {
	case EV_CHUNK: return check_chunk(&ev->u.chunk);
	case EV_CHUNK_START: return check_start(&ev->u.chunk);
	case EV_SAMPLE: return check_sample(&ev->u.sample, seen->count);
	case EV_RUN_START: return ev->u.run_start.run_id ? DEC_OK : DEC_MISSING_FIELD;
	case EV_RUN_END: return check_run_end(&ev->u.run_end);
	case EV_FINE: return seen->rows ? DEC_OK : DEC_MISSING_FIELD;
	case EV_STATUS: return check_status(&ev->u.status, seen->state);
	case EV_HEARTBEAT:
		return ev->u.heartbeat.host && ev->u.heartbeat.pid.valid ? DEC_OK : DEC_MISSING_FIELD;
	case EV_TASK:
		if (!ev->u.task.key || !ev->u.task.prefix || !ev->u.task.action)
			return DEC_MISSING_FIELD;
		if (!ev->u.task.start.valid || !ev->u.task.stop.valid)
			return DEC_MISSING_FIELD;
		return event_task_times_ok(&ev->u.task) ? DEC_OK : DEC_OUT_OF_RANGE;
	case EV_LOG:
		if (!ev->u.log.text)
			return DEC_MISSING_FIELD;
		return strlen(ev->u.log.text) > EVENT_LOG_TEXT_MAX ? DEC_STRING_TOO_LONG : DEC_OK;
	case EV_COUNTERS: return check_counters(&ev->u.counters);
	default: return DEC_OK;
	}
}
