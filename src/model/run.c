/* The run model. run_apply() is the only entry point that changes state;
 * each event kind has one apply function: chunks in run_chunk.c, scheduler
 * samples in run_sample.c, fine metrics in run_fine.c, the run's markers,
 * reports and statuses here. Everything is bounded: maps have caps
 * (overflow is counted), timelines have fixed capacity. */
#include "roastop/run.h"
#include "runpriv.h"
#include "roastop/beats.h"
#include "roastop/strutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void run_log(struct run *r, double t, enum log_kind kind, const char *fmt, ...)
{
	struct log_line *l = &r->log[r->log_count % RUN_LOG_LINES];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->text, sizeof(l->text), fmt, ap);
	va_end(ap);
	l->t = t;
	l->kind = kind;
	r->log_count++;
}

const struct log_line *run_log_get(const struct run *r, size_t i)
{
	if (i >= r->log_count || i >= RUN_LOG_LINES)
		return NULL;
	return &r->log[(r->log_count - 1 - i) % RUN_LOG_LINES];
}

#define KEY_HASH_LEN 17 /* "~" and 16 hex digits */

/* name as a table key of at most max bytes: a longer one becomes its first
 * bytes (cut on a UTF-8 boundary), "~" and its 64-bit hash, so that distinct
 * long names stay distinct keys and each costs a bounded amount. buf holds
 * max + 1 bytes. */
const char *run_key(struct run *r, double t, const char *name, size_t max, char *buf)
{
	if (!name || strnlen(name, max + 1) <= max)
		return name;
	strutil_copy(buf, max - KEY_HASH_LEN + 1, name);
	size_t n = strlen(buf);
	snprintf(buf + n, max + 1 - n, "~%016llx",
		 (unsigned long long)strmap_hash(name, strlen(name)));
	if (r->keys_shortened++ == 0)
		run_log(r, t, LOG_WARN, "a name over %zu bytes kept as its prefix and hash "
			"(counted in roastop.keys_shortened)", max);
	return buf;
}

/* A table at its cap: counted, and said once in the log. */
void run_overflow(struct run *r, double t, uint64_t *count, const char *what, size_t cap)
{
	if ((*count)++ == 0)
		run_log(r, t, LOG_WARN, "%s table full at %zu: more are counted in "
			"roastop.overflow.%s", what, cap, what);
}

/* The chunks' timelines, then the scheduler samples' [SAMPLE_TL_FIRST,
 * SAMPLE_TL_END), then the tasks done. */
static const size_t timeline_offsets[] = {
	offsetof(struct run, tl_events),	offsetof(struct run, tl_bytes),
	offsetof(struct run, tl_workers),	offsetof(struct run, tl_threads),
	offsetof(struct run, tl_mem_used),	offsetof(struct run, tl_mem_limit),
	offsetof(struct run, tl_mem_worst_pct), offsetof(struct run, tl_cpu),
	offsetof(struct run, tl_executing),	offsetof(struct run, tl_tasks_done),
};
#define SAMPLE_TL_FIRST 2
#define SAMPLE_TL_END 9

static struct timeline *timeline_at(struct run *r, size_t i)
{
	return (struct timeline *)((char *)r + timeline_offsets[i]);
}

int run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	struct stats *st[] = { &r->chunk_duration, &r->chunk_events, &r->chunk_mem_delta,
			       &r->chunk_bytes_read, &r->worker_mem_bytes, &r->worker_mem_pct,
			       &r->worker_cpu_pct };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(st); i++)
		stats_init(st[i]);
	hist_init(&r->duration_hist);
	hist_init(&r->events_hist);
	topk_init(&r->slowest);
	inflight_init(&r->inflight);
	rawchunks_init(&r->raw);
	tasks_init(&r->tasks);
	retries_init(&r->retries);
	strmap_init(&r->datasets, sizeof(struct dataset_agg), RUN_MAX_DATASETS);
	strmap_init(&r->files, sizeof(struct file_agg), RUN_MAX_FILES);
	strmap_init(&r->sec_time, sizeof(struct section_agg), RUN_MAX_SECTIONS);
	strmap_init(&r->sec_mem, sizeof(struct section_agg), RUN_MAX_SECTIONS);
	strmap_init(&r->sec_bytes, sizeof(struct section_agg), RUN_MAX_SECTIONS);
	strmap_init(&r->branches, 1, RUN_MAX_BRANCHES);
	strmap_init(&r->errors, sizeof(uint64_t), RUN_MAX_SECTIONS + 1); /* + "(other)" */
	strmap_init(&r->workers, sizeof(struct worker_agg), RUN_MAX_WORKERS);
	strmap_init(&r->fine_cluster, sizeof(struct fine_agg), RUN_MAX_FINE_ROWS);
	strmap_init(&r->fine_span, sizeof(struct fine_agg), RUN_MAX_FINE_ROWS);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(timeline_offsets); i++) {
		if (timeline_init(timeline_at(r, i), RUN_TIMELINE_POINTS) != 0) {
			run_destroy(r);
			return -1;
		}
	}
	return 0;
}

void run_set_pool(struct run *r, struct strmap_pool *pool)
{
	struct strmap *plain[] = { &r->files,	 &r->sec_time, &r->sec_mem,	 &r->sec_bytes,
				   &r->branches, &r->errors,   &r->fine_cluster, &r->fine_span };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(plain); i++)
		strmap_set_pool(plain[i], pool, 0);
	strmap_set_pool(&r->datasets, pool, sizeof(struct hist));
	strmap_set_pool(&r->workers, pool, 0); /* the history is inside the value */
	inflight_set_pool(&r->inflight, pool);
	rawchunks_set_pool(&r->raw, pool);
	tasks_set_pool(&r->tasks, pool);
	retries_set_pool(&r->retries, pool);
}

void run_destroy(struct run *r)
{
	inflight_free(&r->inflight);
	rawchunks_free(&r->raw);
	tasks_free(&r->tasks);
	retries_free(&r->retries);
	for (size_t i = 0; i < r->datasets.count; i++) {
		struct dataset_agg *d = strmap_val_at(&r->datasets, i);
		free(d->duration_hist);
	}
	struct strmap *maps[] = { &r->datasets, &r->files,	 &r->sec_time,	   &r->sec_mem,
				  &r->sec_bytes, &r->branches,	 &r->errors,	   &r->workers,
				  &r->fine_cluster, &r->fine_span };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(maps); i++)
		strmap_free(maps[i]);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(timeline_offsets); i++)
		timeline_free(timeline_at(r, i));
}

/* roastcoffea samples the cluster from the collector's start to its end:
 * worker totals cover the run, not the time roastop waited before it. The
 * trapezoids are cut at the start (and at the end, sample_totals_freeze),
 * interpolated between the polls on either side: starting at the last
 * poll before the start and stopping at the last one before the end made
 * avg_workers 2.025 where the run's own window gives 2.117. */
static void sample_totals_restart(struct run *r, double from)
{
	for (size_t i = SAMPLE_TL_FIRST; i < SAMPLE_TL_END; i++)
		timeline_restart_totals(timeline_at(r, i), from);
	for (size_t i = 0; i < r->workers.count; i++) {
		struct worker_agg *w = strmap_val_at(&r->workers, i);
		w->mem_samples = 0;
		w->mem_integral = w->mem_covered = w->mem_peak = 0;
	}
	r->departed.mem_avg_sum = 0;
	r->departed.n_mem = 0;
	stats_init(&r->worker_mem_bytes);
	stats_init(&r->worker_mem_pct);
	stats_init(&r->worker_cpu_pct);
}

static void sample_totals_freeze(struct run *r, bool frozen)
{
	for (size_t i = SAMPLE_TL_FIRST; i < SAMPLE_TL_END; i++)
		if (frozen)
			timeline_freeze(timeline_at(r, i), r->t_run_end);
		else
			timeline_thaw(timeline_at(r, i));
}

/* A late start (run_apply) restarts no totals: the samples before it in
 * the file are later than it in time, so inside the run. */
static void apply_run_start(struct run *r, double t, const struct ev_run_start *s, bool late)
{
	if (r->started) {
		run_log(r, t, LOG_WARN, "another run started (%s): its numbers add to this session's",
			s->run_id ? s->run_id : "?");
		r->ended = false;
		if (!late)
			run_progress_restart(r); /* its tasks, not the first run's */
	} else {
		r->started = true;
		r->t_run_start = t;
		/* a run_start read late (a recording out of order) restarts no
		 * totals, and the chunks applied before it are taken as inside */
		if (!late) {
			sample_totals_restart(r, t);
			run_chunk_window_open(r);
			run_progress_restart(r);
			tasks_clear(&r->tasks); /* the watch's tasks ran before the run */
		}
	}
	r->status = RUN_RUNNING;
	r->status_reason[0] = '\0';
	r->t_last_client = t;
	if (!r->ended)
		sample_totals_freeze(r, false);
	strutil_copy(r->run_id, sizeof(r->run_id), s->run_id);
	if (s->name)
		strutil_copy(r->name, sizeof(r->name), s->name);
	if (s->processor)
		strutil_copy(r->processor, sizeof(r->processor), s->processor);
	r->expected_events = s->expected_events;
	run_log(r, t, LOG_INFO, "run started: %s (%s)", r->name[0] ? r->name : r->run_id,
		r->processor[0] ? r->processor : "processor unknown");
}

/* "Type: message" of a failed run, else the reason given (either cut on a
 * UTF-8 boundary). */
static void run_end_reason(struct run *r, const struct ev_run_end *e)
{
	char *out = r->status_reason;
	size_t size = sizeof(r->status_reason);
	if (r->status != RUN_FAILED || !e->error_type) {
		strutil_copy(out, size, r->status == RUN_FAILED ? e->error_message : e->reason);
		return;
	}
	strutil_copy(out, size, e->error_type);
	size_t n = strlen(out);
	if (!e->error_message || !e->error_message[0] || n + 3 >= size)
		return;
	memcpy(out + n, ": ", 3);
	strutil_copy(out + n + 2, size - n - 2, e->error_message);
}

static enum log_kind run_end_log_kind(enum run_status s)
{
	return s == RUN_COMPLETED ? LOG_INFO : (s == RUN_FAILED ? LOG_ERROR : LOG_WARN);
}

/* The collector's run_end (without a status from an old emitter: completed)
 * or roastop's own. Roastop's is a guess made without word from the client:
 * it never overrides a run that has ended already. An incomplete run ends
 * at its client's last datagram, not when roastop gave up waiting. */
static int apply_run_end(struct run *r, double t, const struct ev_run_end *e)
{
	enum run_status st = e->status ? run_status_from_name(e->status) : RUN_COMPLETED;
	if (st == RUN_STATUS__COUNT || st == RUN_RUNNING)
		return 1; /* the decoders reject it; a hand-built event is ignored */
	bool own = st == RUN_INCOMPLETE || st == RUN_STOPPED;
	if (own && r->ended)
		return 1;
	if (!own)
		r->t_last_client = t;
	r->ended = true;
	r->status = st;
	r->t_run_end = st == RUN_INCOMPLETE && (r->started || r->begun) ? r->t_last_client : t;
	run_end_reason(r, e);
	sample_totals_freeze(r, true);
	run_log(r, t, run_end_log_kind(st), "run %s%s%s", run_status_name(st),
		r->status_reason[0] ? ": " : "", r->status_reason);
	return 0;
}

void run_begin(struct run *r, double t, bool restart)
{
	r->changes++;
	r->begun = true;
	r->t_begin = t;
	r->t_last_client = t;
	if (!restart)
		return;
	sample_totals_restart(r, t);
	run_chunk_window_open(r);
	run_progress_restart(r);
}

/* A datagram of a run marked incomplete: the client was slow, not gone. */
static void run_client_seen(struct run *r, double t)
{
	r->t_last_client = fmax(r->t_last_client, t);
	if (r->status != RUN_INCOMPLETE)
		return;
	r->ended = false;
	r->status = RUN_RUNNING;
	r->status_reason[0] = '\0';
	sample_totals_freeze(r, false);
	run_log(r, t, LOG_WARN, "the run sends again after it was marked incomplete: running");
}

/* A start after the run's end is refused (nothing runs in an ended run;
 * one marked incomplete runs again: run_client_seen), unless the chunk
 * began before the end: it came late, by a slower path (the scheduler's,
 * polled after the client's run_end came by UDP), and its chunk follows. */
static int apply_chunk_start(struct run *r, double t, const struct ev_chunk *c)
{
	bool began_before = c->t_start.valid && c->t_start.value <= r->t_run_end;
	if (r->ended && r->status != RUN_INCOMPLETE && !began_before)
		return 1;
	run_client_seen(r, t);
	return inflight_start(&r->inflight, t, c);
}

static void report_add(optnum *into, optnum v)
{
	if (!v.valid)
		return;
	*into = optnum_of((into->valid ? into->value : 0.0) + v.value);
}

/* Two reports in one session (two Runner.run calls) add up. */
static void apply_report(struct run *r, double t, const struct ev_report *rep)
{
	struct report_agg *a = &r->report;
	if (a->present)
		run_log(r, t, LOG_INFO, "another coffea report: totals add up");
	a->present = true;
	report_add(&a->bytesread, rep->bytesread);
	report_add(&a->entries, rep->entries);
	report_add(&a->processtime, rep->processtime);
	report_add(&a->chunks, rep->chunks);
	a->n_columns += rep->n_columns;
}

static struct source_info *source_find(struct run *r, const char *name)
{
	for (size_t i = 0; i < r->n_sources; i++)
		if (strcmp(r->sources[i].name, name) == 0)
			return &r->sources[i];
	if (r->n_sources == ROASTOP_ARRAY_LEN(r->sources))
		return NULL;
	struct source_info *s = &r->sources[r->n_sources++];
	strutil_copy(s->name, sizeof(s->name), name);
	s->state = SRC__COUNT; /* so the first status counts as a change */
	return s;
}

/* A source feeding the timelines was lost: no line is drawn and no
 * trapezoid spans the gap. */
static void scheduler_gap(struct run *r)
{
	r->scheduler_gaps++;
	for (size_t i = SAMPLE_TL_FIRST; i <= SAMPLE_TL_END; i++) /* and the tasks done */
		timeline_gap(timeline_at(r, i));
	tasks_route_lost(&r->tasks); /* the tasks in flight are no longer known */
	for (size_t i = 0; i < r->workers.count; i++) {
		struct worker_agg *w = strmap_val_at(&r->workers, i);
		w->mem_t_last = -1;
	}
}

static int apply_status(struct run *r, double t, const struct ev_status *st)
{
	struct source_info *s = source_find(r, st->source ? st->source : "?");
	if (!s)
		return 1;
	strutil_copy(s->reason, sizeof(s->reason), st->reason);
	if (s->state == st->state)
		return 0;
	bool first = s->state == SRC__COUNT;
	s->state = st->state;
	s->since = t;
	s->transitions++;
	if (st->state == SRC_LOST && st->gaps_timelines.valid && st->gaps_timelines.value != 0)
		scheduler_gap(r);
	if (!first || st->state != SRC_CONNECTED)
		run_log(r, t, st->state == SRC_CONNECTED ? LOG_INFO : LOG_WARN, "%s %s%s%s",
			s->name, source_state_name(st->state), s->reason[0] ? ": " : "",
			s->reason);
	return 0;
}

#define RUN_REGRESSIONS_TOLD 5 /* in the log; the rest only counted */

static void run_time_regression(struct run *r, const struct event *ev)
{
	if (r->time_regressions++ >= RUN_REGRESSIONS_TOLD)
		return;
	run_log(r, r->t_last, LOG_WARN, "time goes back %.3f s at a %s event: applied without "
		"a time-series point (time_regression)%s", r->t_last - ev->t,
		event_type_name(ev->type),
		r->time_regressions == RUN_REGRESSIONS_TOLD ? "; further ones only counted" : "");
}

static void run_clock(struct run *r, double t)
{
	if (!r->any_event) {
		r->any_event = true;
		r->t_first = t;
		r->t_last = t;
	}
	if (t > r->t_last)
		r->t_last = t;
}

/* A task the model cannot read is ignored; one it holds in its totals
 * only (a prefix past the cap or refused by the pool) is applied and
 * counted there. */
static int run_apply_task(struct run *r, const struct ev_task *t)
{
	int rc = t->action && event_task_times_ok(t) ? 0 : 1;
	if (rc == 0)
		tasks_apply(&r->tasks, t, 0);
	if (rc)
		r->ignored++;
	else
		r->applied[EV_TASK]++;
	return rc;
}

/* A sample counts as the emitter's heartbeats' when they made it; it feeds
 * the cluster's state and the task model's view of the route. */
static void run_apply_sample_event(struct run *r, const struct event *ev, bool late)
{
	if (ev->u.sample.source && strcmp(ev->u.sample.source, BEATS_SAMPLE_SOURCE) == 0)
		r->n_beat_samples++;
	if (late) {
		run_apply_sample_late(r, ev->t, &ev->u.sample);
		return;
	}
	run_apply_sample(r, ev->t, &ev->u.sample);
	/* the route's failed and running tasks; once the run ended, only
	 * its own install's (not the next run's) */
	if (!r->ended || tasks_route_own(&r->tasks, &ev->u.sample))
		tasks_apply_sample(&r->tasks, &ev->u.sample);
}

/* The event kinds on the run's clock, each to its apply function; non-zero:
 * ignored. */
static int run_apply_kind(struct run *r, const struct event *ev, bool late)
{
	switch (ev->type) {
	case EV_SAMPLE: run_apply_sample_event(r, ev, late); return 0;
	case EV_CHUNK:
		run_client_seen(r, ev->t);
		run_apply_chunk(r, ev->t, &ev->u.chunk, late);
		return 0;
	case EV_RUN_START: apply_run_start(r, ev->t, &ev->u.run_start, late); return 0;
	case EV_RUN_END: return apply_run_end(r, ev->t, &ev->u.run_end);
	case EV_REPORT:
		run_client_seen(r, ev->t);
		apply_report(r, ev->t, &ev->u.report);
		return 0;
	case EV_FINE: run_apply_fine(r, ev->t, &ev->u.fine); return 0;
	case EV_CHUNK_START: return apply_chunk_start(r, ev->t, &ev->u.chunk);
	case EV_STATUS: return apply_status(r, ev->t, &ev->u.status);
	case EV_HEARTBEAT: return 0; /* counted: the session's beats table draws them */
	default: return 1;
	}
}

int run_apply(struct run *r, const struct event *ev)
{
	if (ev->type <= EV_NONE || ev->type >= EV__COUNT || !isfinite(ev->t)) {
		r->ignored++;
		r->changes++;
		return 1;
	}
	if (ev->type == EV_LOG) { /* a note: the run's clock and figures are not its business */
		run_log(r, ev->t, ev->u.log.level, "%s", ev->u.log.text ? ev->u.log.text : "");
		r->applied[EV_LOG] += !ev->u.log.own;
		return 0;
	}
	r->changes++;
	if (ev->type == EV_TASK) /* the task model's own times; not the run's clock */
		return run_apply_task(r, &ev->u.task);
	/* the run's clock never goes back: an earlier time is a regression */
	bool late = r->any_event && ev->t < r->t_last;
	if (late)
		run_time_regression(r, ev);
	run_clock(r, ev->t);
	int rc = run_apply_kind(r, ev, late);
	if (rc)
		r->ignored++;
	else
		r->applied[ev->type]++;
	return rc;
}
