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

/* The per-prefix totals: as the lists below, compute seconds within
 * range.h's CPU seconds (summed task durations, as CPU time is). */
static bool event_sample_totals_ok(const struct ev_sample *s)
{
	if (((s->n_prefix_done || s->n_prefix_compute) && !s->prefixes_left_out.valid) ||
	    s->n_prefix_done > EVENT_MAX_SECTIONS || s->n_prefix_compute > EVENT_MAX_SECTIONS ||
	    !tasks_count_ok(s->prefixes_left_out))
		return false;
	for (size_t i = 0; i < s->n_prefix_done; i++)
		if (!s->prefix_done[i].key || !tasks_count_ok(optnum_of(s->prefix_done[i].value)))
			return false;
	for (size_t i = 0; i < s->n_prefix_compute; i++)
		if (!s->prefix_compute[i].key ||
		    !range_ok(RANGE_CPU_SECONDS, s->prefix_compute[i].value))
			return false;
	return true;
}

/* Lists given only with their left_out count (a measured source); counts
 * whole, seconds within range.h, every string there. */
bool event_sample_tasks_ok(const struct ev_sample *s)
{
	if ((s->n_erred && !s->erred_left_out.valid) || s->n_erred > EVENT_MAX_SECTIONS ||
	    s->erred_left_out.valid != s->erred_since.valid ||
	    (s->erred_since.valid && !range_ok(RANGE_EPOCH, s->erred_since.value)) ||
	    (s->n_running && !s->running_left_out.valid) || s->n_running > EVENT_MAX_RUNNING ||
	    !tasks_count_ok(s->erred_left_out) || !tasks_count_ok(s->running_left_out))
		return false;
	for (size_t i = 0; i < s->n_erred; i++)
		if (!s->erred[i].key || !tasks_count_ok(optnum_of(s->erred[i].value)))
			return false;
	for (size_t i = 0; i < s->n_running; i++) {
		const struct task_running *r = &s->running[i];
		if (!r->key || !r->prefix || !r->worker || !range_ok(RANGE_TASK_SECONDS, r->seconds))
			return false;
	}
	return event_sample_totals_ok(s);
}

const char *event_type_name(enum event_type t)
{
	return (t >= 0 && t < EV__COUNT) ? type_names[t] : "unknown";
}

enum event_type event_type_from_name(const char *name)
{
	for (int t = EV_SAMPLE; t < EV__COUNT; t++)
		if (strcmp(type_names[t], name) == 0)
			return (enum event_type)t;
	return EV_NONE;
}

const char *source_state_name(enum source_state s)
{
	return (s >= 0 && s < SRC__COUNT) ? state_names[s] : "unknown";
}

const char *log_kind_name(enum log_kind k)
{
	return (k >= 0 && k < LOG__COUNT) ? log_kind_names[k] : "unknown";
}

enum log_kind log_kind_from_name(const char *name)
{
	for (int k = 0; k < LOG__COUNT; k++)
		if (strcmp(log_kind_names[k], name) == 0)
			return (enum log_kind)k;
	return LOG__COUNT;
}

const char *run_status_name(enum run_status s)
{
	return (s >= 0 && s < RUN_STATUS__COUNT) ? status_names[s] : "unknown";
}

enum run_status run_status_from_name(const char *name)
{
	for (int s = RUN_COMPLETED; s < RUN_STATUS__COUNT; s++)
		if (strcmp(status_names[s], name) == 0)
			return (enum run_status)s;
	return RUN_STATUS__COUNT;
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
