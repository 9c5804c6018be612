#include "roastop/event.h"

#include <math.h>
#include <string.h>

#include "roastop/range.h"

static const char *const type_names[EV__COUNT] = {
	[EV_NONE] = "none",	       [EV_SAMPLE] = "sample",
	[EV_CHUNK] = "chunk",	       [EV_RUN_START] = "run_start",
	[EV_RUN_END] = "run_end",      [EV_REPORT] = "report",
	[EV_FINE] = "fine",	       [EV_STATUS] = "status",
	[EV_CHUNK_START] = "chunk_start", [EV_HEARTBEAT] = "heartbeat",
	[EV_TASK] = "task",	       [EV_LOG] = "log",
	[EV_COUNTERS] = "counters",
};

static const char *const log_kind_names[LOG__COUNT] = {
	[LOG_INFO] = "info",
	[LOG_WARN] = "warn",
	[LOG_ERROR] = "error",
};

static const char *const state_names[SRC__COUNT] = {
	[SRC_CONNECTED] = "connected",
	[SRC_DEGRADED] = "degraded",
	[SRC_LOST] = "lost",
};

static const char *const status_names[RUN_STATUS__COUNT] = {
	[RUN_RUNNING] = "running",	   [RUN_COMPLETED] = "completed", [RUN_FAILED] = "failed",
	[RUN_INCOMPLETE] = "incomplete", [RUN_STOPPED] = "stopped",
};

void event_init(struct event *ev)
{
	memset(ev, 0, sizeof(*ev));
	arena_init(&ev->mem, EVENT_ARENA_LIMIT);
}

void event_reset(struct event *ev)
{
	struct arena keep = ev->mem;
	memset(ev, 0, sizeof(*ev));
	ev->mem = keep;
	arena_reset(&ev->mem);
}

void event_free(struct event *ev)
{
	arena_free(&ev->mem);
	memset(ev, 0, sizeof(*ev));
}

static bool progress_ok(optnum done, optnum total)
{
	return done.valid == total.valid && !(done.valid && done.value > total.value);
}

bool event_sample_progress_ok(const struct ev_sample *s)
{
	return progress_ok(s->tasks_done, s->tasks_total) &&
	       progress_ok(s->tasks_done_cumulative, s->tasks_total_cumulative);
}

/* Not given, or a whole count within range.h's. */
static bool tasks_count_ok(optnum n)
{
	return !n.valid || (range_ok(RANGE_TASKS, n.value) && n.value == floor(n.value));
}

/* Every key given, every value within q (whole when q is RANGE_TASKS). */
static bool kv_ok(const struct kv_num *kv, size_t n, enum range_qty q)
{
	for (size_t i = 0; i < n; i++)
		if (!kv[i].key || !range_ok(q, kv[i].value) ||
		    (q == RANGE_TASKS && kv[i].value != floor(kv[i].value)))
			return false;
	return true;
}

/* Each list only with its left_out count (a measured source), within its
 * bound; compute seconds are summed task durations, bounded as CPU time. */
bool event_sample_tasks_ok(const struct ev_sample *s)
{
	if ((s->n_erred && !s->erred_left_out.valid) || s->n_erred > EVENT_MAX_SECTIONS ||
	    s->erred_left_out.valid != s->erred_since.valid ||
	    (s->erred_since.valid && !range_ok(RANGE_EPOCH, s->erred_since.value)) ||
	    (s->n_running && !s->running_left_out.valid) || s->n_running > EVENT_MAX_RUNNING ||
	    ((s->n_prefix_done || s->n_prefix_compute) && !s->prefixes_left_out.valid) ||
	    s->n_prefix_done > EVENT_MAX_SECTIONS || s->n_prefix_compute > EVENT_MAX_SECTIONS ||
	    !tasks_count_ok(s->erred_left_out) || !tasks_count_ok(s->running_left_out) ||
	    !tasks_count_ok(s->prefixes_left_out))
		return false;
	for (size_t i = 0; i < s->n_running; i++) {
		const struct task_running *r = &s->running[i];
		if (!r->key || !r->prefix || !r->worker || !range_ok(RANGE_TASK_SECONDS, r->seconds))
			return false;
	}
	return kv_ok(s->erred, s->n_erred, RANGE_TASKS) &&
	       kv_ok(s->prefix_done, s->n_prefix_done, RANGE_TASKS) &&
	       kv_ok(s->prefix_compute, s->n_prefix_compute, RANGE_CPU_SECONDS);
}

/* names[i], or "unknown" past the table. */
static const char *name_at(const char *const *names, int n, int i)
{
	return i >= 0 && i < n ? names[i] : "unknown";
}

/* The index in [first, n) of name, or n when it is none. */
static int name_index(const char *const *names, int first, int n, const char *name)
{
	while (first < n && strcmp(names[first], name) != 0)
		first++;
	return first;
}

const char *event_type_name(enum event_type t)
{
	return name_at(type_names, EV__COUNT, (int)t);
}

enum event_type event_type_from_name(const char *name)
{
	int t = name_index(type_names, EV_SAMPLE, EV__COUNT, name);
	return t < EV__COUNT ? (enum event_type)t : EV_NONE;
}

const char *source_state_name(enum source_state s)
{
	return name_at(state_names, SRC__COUNT, (int)s);
}

const char *log_kind_name(enum log_kind k)
{
	return name_at(log_kind_names, LOG__COUNT, (int)k);
}

const char *run_status_name(enum run_status s)
{
	return name_at(status_names, RUN_STATUS__COUNT, (int)s);
}

enum run_status run_status_from_name(const char *name)
{
	return (enum run_status)name_index(status_names, RUN_COMPLETED, RUN_STATUS__COUNT, name);
}

bool event_task_times_ok(const struct ev_task *t)
{
	return t->start.valid && t->stop.valid && range_ok(RANGE_EPOCH, t->start.value) &&
	       range_ok(RANGE_EPOCH, t->stop.value) && t->stop.value >= t->start.value;
}

double event_chunk_duration(const struct ev_chunk *c)
{
	if (c->duration.valid)
		return c->duration.value;
	return c->t_end.value - c->t_start.value;
}
