/* The session's runs and the routing of events to them (session.h). */
#include "roastop/session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/strutil.h"

static struct run *session_run_new(struct session *s)
{
	struct run *r = malloc(sizeof(*r));
	if (!r || run_init(r) != 0) {
		free(r);
		return NULL;
	}
	run_set_pool(r, &s->pool);
	return r;
}

/* A run or watch made after others: it measures the route's failed tasks
 * against the newest run's last list, so a failure before its first poll
 * is its own (a run that starts while the one before settles). */
static struct run *session_run_next(struct session *s)
{
	struct run *r = session_run_new(s);
	const struct run *newest = s->n_rows ? s->rows[s->n_rows - 1].run : NULL;
	if (r && newest)
		tasks_route_inherit(&r->tasks, &newest->tasks);
	return r;
}

static void session_run_free(struct run *r)
{
	if (!r)
		return;
	run_destroy(r);
	free(r);
}

int session_init(struct session *s, session_close_fn on_close, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->pool.cap = SESSION_TABLE_BYTES;
	beats_init(&s->beats);
	beats_set_pool(&s->beats, &s->pool);
	s->on_close = on_close;
	s->ctx = ctx;
	s->rows = calloc(SESSION_MAX_RUNS, sizeof(*s->rows));
	s->watch = s->rows ? session_run_new(s) : NULL;
	if (!s->watch) {
		free(s->rows);
		beats_free(&s->beats);
		return -1;
	}
	return 0;
}

void session_destroy(struct session *s)
{
	for (size_t i = 0; i < s->n_rows; i++)
		session_run_free(s->rows[i].run);
	session_run_free(s->watch);
	free(s->rows);
	beats_free(&s->beats);
	counters_free(&s->counters);
	memset(s, 0, sizeof(*s));
}

const struct run *session_newest(const struct session *s)
{
	if (s->n_rows && s->rows[s->n_rows - 1].run)
		return s->rows[s->n_rows - 1].run;
	return s->watch;
}

const char *session_run_label(const struct session_run *row)
{
	return row->name[0] ? row->name : row->run_id;
}

/* The row of run r, or NULL (the watch has none). */
static struct session_run *session_row_of(struct session *s, const struct run *r)
{
	for (size_t i = s->n_rows; r && i-- > 0;)
		if (s->rows[i].run == r)
			return &s->rows[i];
	return NULL;
}

/* ---- room for a new run --------------------------------------------- */

static size_t session_detailed(const struct session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_rows; i++)
		n += s->rows[i].run != NULL;
	return n;
}

/* The oldest closed run in detail, never the newest row; NULL if none. */
static struct session_run *session_oldest_closed(struct session *s)
{
	for (size_t i = 0; i + 1 < s->n_rows; i++)
		if (s->rows[i].run && s->rows[i].closed && !s->rows[i].dirty)
			return &s->rows[i];
	return NULL;
}

/* Keeps the runs going at least half the pool and a detail slot: the
 * oldest closed runs keep their rows only. */
static void session_summarise_old(struct session *s)
{
	while (session_detailed(s) >= SESSION_DETAIL_RUNS || s->pool.used > s->pool.cap / 2) {
		struct session_run *old = session_oldest_closed(s);
		if (!old)
			return;
		session_run_free(old->run);
		old->run = NULL;
		s->runs_summarised++;
	}
}

/* A new run: room in the pool and a detail slot, and a row. */
static void session_make_room(struct session *s)
{
	session_summarise_old(s);
	if (s->n_rows < SESSION_MAX_RUNS || s->rows[0].run)
		return;
	memmove(s->rows, s->rows + 1, (s->n_rows - 1) * sizeof(*s->rows));
	s->n_rows--;
	s->rows_dropped++;
}

/* A new run, in a new row: the watch when there is one (the scheduler's
 * history goes with it), else a fresh run. NULL when it cannot be had. */
static struct session_run *session_open(struct session *s, const char *run_id, bool implicit)
{
	session_make_room(s);
	if (s->n_rows == SESSION_MAX_RUNS || session_detailed(s) >= SESSION_DETAIL_RUNS) {
		s->runs_refused++;
		return NULL;
	}
	struct run *r = s->watch ? s->watch : session_run_next(s);
	if (!r)
		return NULL;
	s->watch = NULL;
	struct session_run *row = &s->rows[s->n_rows++];
	memset(row, 0, sizeof(*row));
	s->runs_total++;
	/* a run without an id of its own gets roastop's, so that roastop's own
	 * run_end (and a replay of it) finds exactly this run */
	row->own_id = !(run_id && run_id[0]);
	if (row->own_id)
		snprintf(row->run_id, sizeof(row->run_id), "implicit-%llu",
			 (unsigned long long)s->runs_total);
	else
		strutil_copy(row->run_id, sizeof(row->run_id), run_id);
	strutil_copy(r->run_id, sizeof(r->run_id), row->run_id);
	row->implicit = implicit;
	row->run = r;
	row->fig.t_start = NAN;
	return row;
}

/* ---- routing ---------------------------------------------------------- */

static struct session_run *session_find(struct session *s, const char *run_id)
{
	for (size_t i = s->n_rows; run_id && run_id[0] && i-- > 0;)
		if (strcmp(s->rows[i].run_id, run_id) == 0)
			return &s->rows[i];
	return NULL;
}

/* The newest run still going (not ended), or NULL. */
static struct session_run *session_going(struct session *s)
{
	for (size_t i = s->n_rows; i-- > 0;)
		if (s->rows[i].run && !s->rows[i].run->ended)
			return &s->rows[i];
	return NULL;
}

static bool session_taking(const struct session_run *row)
{
	return row->run && !row->closed;
}

/* The run's own window, [its start, its end + slack]: is t inside it? */
static bool session_within(const struct run *r, double t, double slack)
{
	double from = r->started ? r->t_run_start : (r->begun ? r->t_begin : r->t_first);
	return r->ended && t >= from && t <= r->t_run_end + slack;
}

/* The newest run kept in detail that has ended and whose window holds t. */
static struct session_run *session_window_of(struct session *s, double t)
{
	for (size_t i = s->n_rows; i-- > 0;)
		if (s->rows[i].run && session_within(s->rows[i].run, t, 0))
			return &s->rows[i];
	return NULL;
}

/* A chunk's or report's run: its run_id's (a new run when unseen); else
 * the run going on; else the ended run it began in (a straggler, or a line
 * of a recording out of order); else a new implicit run. from: when the
 * chunk began. NULL: nowhere to apply it. */
static struct session_run *session_client_run(struct session *s, const char *run_id, double from,
					      bool *lost)
{
	struct session_run *row = session_find(s, run_id);
	*lost = row && !row->run;
	if (*lost) {
		row->late_lost++;
		s->late_lost++;
		return NULL;
	}
	if (row)
		return row;
	if (!(run_id && run_id[0]) && (row = session_going(s)) != NULL)
		return row;
	if (!(run_id && run_id[0]) && (row = session_window_of(s, from)) != NULL)
		return row;
	return session_open(s, run_id, true);
}

static double chunk_start(const struct ev_chunk *c, double t)
{
	double d = event_chunk_duration(c);
	return isfinite(d) && d > 0 ? t - d : t;
}

static int session_client_event(struct session *s, const struct event *ev, const char *run_id)
{
	bool lost = false;
	double from = ev->type == EV_CHUNK ? chunk_start(&ev->u.chunk, ev->t) : ev->t;
	struct session_run *row = session_client_run(s, run_id, from, &lost);
	if (!row) {
		if (!lost)
			s->unrouted++;
		return 1;
	}
	struct run *r = row->run;
	/* lines out of time order (this one, or the watch's before it): what
	 * came before says nothing of what is before the run in time */
	bool ordered = !r->time_regressions && !(r->any_event && ev->t < r->t_last);
	if (!r->started && !r->begun)
		run_begin(r, from, ordered);
	int rc = run_apply(r, ev);
	row->dirty |= row->closed;
	return rc;
}

/* A run_start timed before the going implicit run began is that run's
 * own marker, read late (a recording out of order): it takes the run. */
static struct session_run *session_marker_late(struct session *s, double t)
{
	struct session_run *row = session_going(s);
	if (row && row->own_id && row->run->begun && t <= row->run->t_begin)
		return row;
	return NULL;
}

static int session_run_start(struct session *s, const struct event *ev)
{
	const char *id = ev->u.run_start.run_id;
	struct session_run *row = session_find(s, id);
	if (row && !row->run) {
		s->unrouted++;
		return 1;
	}
	if (!row)
		row = session_marker_late(s, ev->t);
	if (!row) {
		row = session_open(s, id, false);
	} else if (row->own_id) {
		strutil_copy(row->run_id, sizeof(row->run_id), id);
		row->own_id = false;
	}
	if (!row) {
		s->unrouted++;
		return 1;
	}
	row->implicit = false;
	int rc = run_apply(row->run, ev);
	strutil_copy(row->name, sizeof(row->name), row->run->name);
	return rc;
}

/* By its run_id; without one (roastop's own end of an implicit run), the
 * newest run going on. */
static int session_run_end(struct session *s, const struct event *ev)
{
	const char *id = ev->u.run_end.run_id;
	struct session_run *row = id && id[0] ? session_find(s, id) : session_going(s);
	if (!row || !row->run) {
		s->unrouted++;
		return 1;
	}
	int rc = run_apply(row->run, ev);
	row->status = row->run->status;
	row->dirty |= row->closed;
	return rc;
}

/* Scheduler data: every run not closed, and the watch; a sample timed
 * inside a closed run's window (or its settle after the end, as it would
 * have come live) too: read late, in a recording out of order. */
static int session_scheduler_event(struct session *s, const struct event *ev)
{
	int rc = 1;
	for (size_t i = 0; i < s->n_rows; i++) {
		struct session_run *row = &s->rows[i];
		bool late = !session_taking(row) && row->run && ev->type == EV_SAMPLE &&
			    session_within(row->run, ev->t, SESSION_SETTLE);
		if (!session_taking(row) && !late)
			continue;
		if (run_apply(row->run, ev) == 0)
			rc = 0;
		row->dirty |= late;
	}
	if (s->watch && run_apply(s->watch, ev) == 0)
		rc = 0;
	return rc;
}

/* When a task began, on roastop's clock: its receive time less its
 * duration (the worker's clock may be skewed; its durations are not). */
static double session_task_begin(const struct event *ev)
{
	const struct ev_task *t = &ev->u.task;
	double d = event_task_times_ok(t) ? t->stop.value - t->start.value : 0;
	return ev->t - d;
}

/* A task's receive time is later than its stop by its delivery (the
 * worker's report, the scheduler's write, roastop reading a burst after a
 * datagram of the same poll), so a run's last tasks may read as begun up to
 * this long after its end. */
#define SESSION_TASK_LAG 0.25

/* Whether the run of row holds a task begun at `begin`: an explicit run
 * holds those begun since its run_start (an implicit one keeps its
 * watch's), an ended run (settling, or closed and kept in detail: a
 * recording out of order) those begun before its end (+ lag). */
static bool session_task_takes(const struct session_run *row, double begin, double lag)
{
	const struct run *r = row->run;
	if (!r || (r->started && begin < r->t_run_start))
		return false;
	return r->ended ? begin <= r->t_run_end + lag : !row->closed && lag == 0;
}

/* Applies the task to every run that takes it; whether one did. */
static bool session_task_to(struct session *s, const struct event *ev, double begin, double lag,
			    int *rc)
{
	bool taken = false;
	for (size_t i = 0; i < s->n_rows; i++) {
		struct session_run *row = &s->rows[i];
		if (!session_task_takes(row, begin, lag))
			continue;
		taken = true;
		if (run_apply(row->run, ev) == 0)
			*rc = 0;
		row->dirty |= row->closed;
	}
	return taken;
}

/* A Dask task: to every run that ran it (two runs open at once on one
 * scheduler both take it: the stream carries no run id); one no run held
 * by its time alone to an ended run it began within SESSION_TASK_LAG of
 * the end of (a run begun since has the first claim); else the watch. One
 * begun after a run's end while nothing watches (the run settles) is
 * counted unrouted. */
static int session_task(struct session *s, const struct event *ev)
{
	double begin = session_task_begin(ev);
	int rc = 1;
	if (session_task_to(s, ev, begin, 0, &rc) ||
	    session_task_to(s, ev, begin, SESSION_TASK_LAG, &rc))
		return rc;
	if (!s->watch) {
		s->unrouted++;
		return 1;
	}
	return run_apply(s->watch, ev) == 0 ? 0 : 1;
}

/* A source's state: also to the newest run when it is closed, for the
 * header of the dashboard that shows it. */
static int session_status_event(struct session *s, const struct event *ev)
{
	int rc = session_scheduler_event(s, ev);
	struct session_run *newest = s->n_rows ? &s->rows[s->n_rows - 1] : NULL;
	if (newest && newest->run && newest->closed && run_apply(newest->run, ev) == 0)
		rc = 0;
	return rc;
}

/* Heartbeats become samples applied as a scheduler's (beats.h); any
 * event's time may see a silent process depart. A sample from elsewhere
 * tells the table that a scheduler is there. */
static int session_beats(struct session *s, const struct event *ev)
{
	if (ev->type == EV_SAMPLE)
		beats_saw_scheduler(&s->beats, ev->t);
	const struct ev_heartbeat *hb = ev->type == EV_HEARTBEAT ? &ev->u.heartbeat : NULL;
	const struct event *sample = beats_apply(&s->beats, hb, ev->t);
	if (sample)
		session_scheduler_event(s, sample);
	return hb ? session_scheduler_event(s, ev) : 0; /* each run counts its beats */
}

/* A note: where the notes have always gone, the newest run (a closed one
 * is written again, its log is in its metrics.json, unless the note is
 * roastop's own: ev_log.own); no clock, no heartbeat. */
static int session_log(struct session *s, const struct event *ev)
{
	struct session_run *row = s->n_rows && s->rows[s->n_rows - 1].run ? &s->rows[s->n_rows - 1]
									  : NULL;
	struct run *newest = row ? row->run : s->watch;
	if (row && row->closed && !ev->u.log.own)
		row->dirty = true;
	return newest ? run_apply(newest, ev) : 1;
}

/* ---- closing ---------------------------------------------------------- */

static void session_close_row(struct session *s, struct session_run *row)
{
	row->status = row->run->status;
	strutil_copy(row->name, sizeof(row->name), row->run->name);
	row->closed = true;
	row->dirty = false; /* the callback may set it again: its write failed */
	if (s->on_close)
		s->on_close(s->ctx, row);
}

/* No run takes the scheduler's data any more: a new watch does. */
static void session_rewatch(struct session *s)
{
	for (size_t i = 0; i < s->n_rows; i++)
		if (session_taking(&s->rows[i]))
			return;
	if (!s->watch)
		s->watch = session_run_next(s); /* out of memory: the data waits for a run */
}

static bool session_settled(const struct session_run *row, double now)
{
	return session_taking(row) && row->run->ended && now >= row->run->t_run_end + SESSION_SETTLE;
}

bool session_due(const struct session *s, double now)
{
	for (size_t i = 0; i < s->n_rows; i++)
		if (session_settled(&s->rows[i], now))
			return true;
	return false;
}

static void session_tick(struct session *s, double now)
{
	bool closed = false;
	for (size_t i = 0; i < s->n_rows; i++) {
		struct session_run *row = &s->rows[i];
		if (!session_settled(row, now))
			continue;
		session_close_row(s, row);
		closed = true;
	}
	if (closed) {
		session_summarise_old(s);
		session_rewatch(s);
	}
}

static void session_close_all(struct session *s)
{
	for (size_t i = 0; i < s->n_rows; i++) {
		struct session_run *row = &s->rows[i];
		if (row->run && (!row->closed || row->dirty))
			session_close_row(s, row);
	}
}

/* The app's figures of a run, for its line in the run list. */
static int session_row_figures(struct session *s, const struct ev_row_figures *f)
{
	struct session_run *row = session_row_of(s, f->run);
	if (!row)
		return 1;
	row->fig = (struct session_figures){ .t_start = f->t_start, .elapsed = f->elapsed,
					     .chunks = f->chunks, .failed = f->failed,
					     .events = f->events, .event_rate_hz = f->event_rate_hz };
	row->status = row->run->status;
	return 0;
}

/* How the app's write of a run went: its directory's name, its errno, and
 * whether a closed run is to be written again. */
static int session_row_write(struct session *s, const struct ev_row_write *w)
{
	struct session_run *row = session_row_of(s, w->run);
	if (!row)
		return 1;
	if (w->dir)
		strutil_copy(row->dir, sizeof(row->dir), w->dir);
	row->write_errno = w->write_errno;
	if (row->closed)
		row->dirty = w->failed;
	return 0;
}

/* Roastop's own changes (event.h's internal kinds, its own notes) apply at
 * once: no clock, no settling (they come from the close callback too).
 * Whether ev is one. */
static bool session_own(struct session *s, const struct event *ev, int *rc)
{
	*rc = 0;
	switch (ev->type) {
	case EV_ROW_FIGURES: *rc = session_row_figures(s, &ev->u.row_figures); return true;
	case EV_ROW_WRITE: *rc = session_row_write(s, &ev->u.row_write); return true;
	case EV_SETTLE: session_tick(s, ev->t); return true;
	case EV_CLOSE_ALL: session_close_all(s); return true;
	case EV_ADOPT_WATCH:
		if (s->n_rows == 0 && s->watch) /* the watch becomes the one run */
			session_open(s, NULL, true);
		return true;
	case EV_LOG:
		if (!ev->u.log.own)
			return false;
		*rc = session_log(s, ev);
		return true;
	default: return false;
	}
}

int session_apply(struct session *s, const struct event *ev)
{
	/* a source's counters are the session's, and precede the event whose
	 * time closes a run (the app sends them then, session_due): the closed
	 * run is written with the counts of what it applied */
	if (ev->type == EV_COUNTERS)
		return counters_apply(&s->counters, &ev->u.counters);
	int rc;
	if (session_own(s, ev, &rc))
		return rc;
	/* first: a run that has settled closes before a next run_start, which
	 * then takes the watch, as live */
	if (isfinite(ev->t))
		session_tick(s, ev->t);
	switch (ev->type) {
	case EV_CHUNK:
	case EV_CHUNK_START: rc = session_client_event(s, ev, ev->u.chunk.run_id); break;
	case EV_REPORT: rc = session_client_event(s, ev, ev->u.report.run_id); break;
	case EV_RUN_START: rc = session_run_start(s, ev); break;
	case EV_RUN_END: rc = session_run_end(s, ev); break;
	case EV_STATUS: rc = session_status_event(s, ev); break;
	case EV_HEARTBEAT: return session_beats(s, ev);
	case EV_LOG: return session_log(s, ev);
	case EV_TASK: return session_task(s, ev);
	default: rc = session_scheduler_event(s, ev); break;
	}
	session_beats(s, ev);
	return rc;
}
