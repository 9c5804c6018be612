/* The loop. Sources hand events to app_deliver(), which records them and
 * applies them to the run; the sources' timeouts pace them, timers drive
 * checkpoints and --duration; a signalfd turns SIGINT/SIGTERM/SIGHUP into
 * a clean stop. */
#include "roastop/clock.h"
#include "roastop/app.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "roastop/auth.h"
#include "roastop/diagnosis.h"
#include "roastop/format.h"
#include "roastop/fsutil.h"
#include "roastop/measurement.h"
#include "roastop/metrics_extra.h"
#include "roastop/metrics.h"
#include "roastop/record.h"
#include "roastop/report_text.h"
#include "roastop/run.h"
#include "roastop/serve.h"
#include "roastop/session.h"
#include "roastop/source.h"
#include "roastop/strbuf.h"
#include "roastop/timer.h"
#include "roastop/ui.h"

/* FD_GRACE: the wait after a run's end (--exit-on-run-end); FD_FRAME: the
 * dashboard's redraw timer; FD_FLUSH: the recording's
 * (RECORDER_FLUSH_INTERVAL); FD_IDLE: live, looks for a run gone silent
 * (--run-idle-timeout); FD_UI: the dashboard's keys (-1 when headless);
 * FD_SERVE: the HTTP server's epoll descriptor (-1 when not serving) */
enum { FD_SIGNAL, FD_CHECKPOINT, FD_DURATION, FD_GRACE, FD_FRAME, FD_FLUSH, FD_IDLE, FD_UI,
       FD_SERVE,
       FD__COUNT };

#define RUN_END_GRACE 1.0 /* live: seconds to wait for late chunks after run end */
#define RUN_END_FLUSH_MAX 15.0 /* and at most this long for the scheduler's last round */
/* --exit-on-run-end with a server: then the run is closed and written, and
 * roastop stays for the collector to fetch it (docs/serve.md) until a
 * measurement has been sent, LINGER_IDLE s pass without a request, or
 * LINGER_MAX s in all. */
#define LINGER_IDLE 3.0
#define LINGER_MAX 30.0
/* How often a live run's silence is looked at: a tenth of the timeout, so a
 * run is marked incomplete at most 10 % late, and at least every second. */
#define RUN_IDLE_CHECKS 10.0
#define RUN_IDLE_CHECK_MAX 1.0
#define APP_SOURCES_MAX 16 /* sources open at once (source.h's registry) */

/* A source open from the registry. */
struct app_source {
	const struct source_ops *ops;
	void *s;
	double counters_at; /* clock_mono() when its statistics were last looked at */
};

struct app {
	const struct app_config *cfg;
	struct session ses;
	double t_latest; /* the latest event time delivered: a recorded session's "now" */
	uint64_t runs_seen; /* ses.runs_total when the metric warnings were last reset */
	bool recorded; /* a source replays recorded events (source_ops.recorded) */
	struct app_source src[APP_SOURCES_MAX];
	size_t n_src;
	struct auth_key key;
	struct recorder *rec;
	struct serve *srv; /* NULL when not serving */
	char serve_error[512]; /* why the server could not start; "" */
	uint64_t serve_failures;
	struct ui *ui; /* NULL when headless */
	bool headless; /* asked for, or no usable terminal */
	bool ending; /* run ended, grace period running */
	bool lingering; /* then waiting for the collector's fetch (LINGER_IDLE) */
	uint64_t linger_sent, linger_requests; /* the server's counts when last looked at */
	double linger_idle_at, linger_end; /* clock_mono() */
	double ending_deadline; /* monotonic: stop by then even if a poll hangs */
	int fds[FD__COUNT];
	bool stop;
	const char *stop_reason;
	char out_dir[PATH_MAX]; /* the root: each run writes a directory under it */
	size_t n_written; /* runs with a measurement directory */
	bool finishing, finish_failed; /* the exit's final writes, and whether one failed */
	/* the output's health: errno of the failing checkpoints (0 while they
	 * succeed) and of the recording's stop (0 while it records), and the
	 * header's alert made of them (ui_frame.out_alert) */
	int checkpoint_errno, record_errno;
	uint64_t checkpoints_failing; /* in a row, up to now */
	char out_alert[128];
	bool alert_shown; /* a source's alert (source_ops.alert) was up at the last look */
	/* chunks that do not come while the scheduler runs tasks (app_note_quiet):
	 * the run looked at, since when (monotonic; NAN: not quiet), the alert */
	const struct run *quiet_run;
	bool quiet_begun;
	double quiet_since;
	char quiet_alert[2][160]; /* the whole text, and one for 80 columns */
	/* the system clock against the session's (clock.h), as last told */
	double clock_offset_told, clock_checked_at; /* seconds; monotonic */
	/* metrics already said null in the event log (their warning's key) */
	const char *warned[METRICS_MAX_WARNINGS];
	size_t n_warned;
	/* the tick (app_tick): the events' clock's next whole second, and
	 * whether the input's end has had its tick */
	double tick_next;
	bool end_ticked;
	double refreshed_at; /* t_latest at the view's last refresh (app_refresh) */
	/* what the frame draws: the shown run's metrics as the tick measured
	 * them, valid while the session's runs are those of frame_key */
	struct metrics frame_m;
	const struct run *frame_run;
	uint64_t frame_key[3];
	/* the shown run's findings (app_diagnose), of findings_run */
	struct findings findings;
	const struct run *findings_run;
};

/* "now" for the metrics: the recorded events' clock when they are
 * replayed, else the session's clock (clock.h), the one live events are
 * stamped with. */
static double app_now(const struct app *a)
{
	if (a->recorded)
		return a->t_latest;
	return clock_session();
}

static int signals_open(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	signal(SIGPIPE, SIG_IGN); /* a dead ssh session must not kill the write */
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* Headless: scheduler state changes go to stderr, for batch logs. */
static void app_note_status(const struct app *a, const struct event *ev)
{
	if (!a->headless || ev->type != EV_STATUS)
		return;
	const struct ev_status *st = &ev->u.status;
	fprintf(stderr, "roastop: %s %s%s%s\n", st->source ? st->source : "?",
		source_state_name(st->state), st->reason ? ": " : "", st->reason ? st->reason : "");
}

/* The sources that react to events (a run's start and end) see each one
 * applied. */
static void app_tell_sources(struct app *a, const struct event *ev)
{
	for (size_t i = 0; i < a->n_src; i++)
		if (a->src[i].ops->on_event)
			a->src[i].ops->on_event(a->src[i].s, ev);
}

/* A source still doing what a run's end asked of it. */
static bool app_sources_busy(const struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++)
		if (a->src[i].ops->busy && a->src[i].ops->busy(a->src[i].s))
			return true;
	return false;
}

/* Said at once, in all three places a user may be looking: stderr (held
 * while the dashboard is up), the event log, the header's alert. About
 * roastop's own output, not its input: not an event (app_log), stamped
 * with the session's "now" (a replay's: the recording's time). */
static void app_tell(struct app *a, enum log_kind kind, const char *text)
{
	fprintf(stderr, "roastop: %s\n", text);
	session_note(&a->ses, app_now(a), kind, text);
}

/* Short enough for an 80-column header: the reasons only; the event log
 * has the file and the directory. */
static void app_alert_update(struct app *a)
{
	char *t = a->out_alert;
	size_t n = sizeof(a->out_alert);
	int ck = a->checkpoint_errno, rec = a->record_errno;
	if (ck && ck == rec)
		snprintf(t, n, "checkpoint failed, recording stopped: %s", strerror(ck));
	else if (ck && rec)
		snprintf(t, n, "checkpoint failed: %s; recording stopped: %s", strerror(ck),
			 strerror(rec));
	else if (ck || rec)
		snprintf(t, n, "%s: %s", ck ? "checkpoint failed" : "recording stopped",
			 strerror(ck ? ck : rec));
	else
		t[0] = '\0';
}

/* The recording ends at its first failure (record.h); the exit status
 * says so too (app_finish). */
static void app_record_failed(struct app *a, int e)
{
	char text[RUN_LOG_TEXT];
	recorder_close(a->rec);
	a->rec = NULL;
	a->record_errno = e;
	snprintf(text, sizeof(text), "recording stopped: %s (%s ends with the last whole line)",
		 strerror(e), a->cfg->record_path);
	app_tell(a, LOG_ERROR, text);
	app_alert_update(a);
}

static void app_record_flush(struct app *a)
{
	if (a->rec && recorder_flush(a->rec) != 0)
		app_record_failed(a, errno);
}

static void app_counters(struct app *a, bool all);

static void app_tick(struct app *a);
static void app_tick_due(struct app *a, double t);

/* An event applied to the session; app_deliver records it first. */
static void app_apply(struct app *a, const struct event *ev)
{
	if (ev->type == EV_TASK) { /* to the runs that ran it; not the metrics' clock */
		session_apply(&a->ses, ev);
		return;
	}
	int rc = session_apply(&a->ses, ev);
	if (isfinite(ev->t))
		a->t_latest = fmax(a->t_latest, ev->t);
	app_tell_sources(a, ev);
	if (!a->cfg->exit_on_run_end || ev->type != EV_RUN_END || rc || a->stop || a->ending)
		return;
	if (a->recorded) { /* nothing more is in flight: what was recorded is all */
		a->stop = true;
		a->stop_reason = "run ended";
		return;
	}
	a->ending = true; /* datagrams of the last chunks may still be in flight */
	a->ending_deadline = clock_mono() + RUN_END_FLUSH_MAX;
	timer_set_periodic(a->fds[FD_GRACE], RUN_END_GRACE, 0);
}

static void app_deliver(struct app *a, const struct event *ev)
{
	/* the tick first, on the state before this event: when it runs depends
	 * on the events alone (app_tick) */
	if (ev->type != EV_TASK && isfinite(ev->t))
		app_tick_due(a, ev->t);
	/* an event whose time closes a run: the sources' counters first, so the
	 * run is written with the counts of what it applied (and a replay,
	 * which reads them from the recording, writes the same) */
	if (ev->type != EV_COUNTERS && isfinite(ev->t) && session_due(&a->ses, ev->t))
		app_counters(a, true);
	app_note_status(a, ev);
	if (a->rec && recorder_write(a->rec, ev) != 0 && errno != EINVAL)
		app_record_failed(a, errno);
	app_apply(a, ev);
}

static void deliver_cb(void *ctx, const struct event *ev)
{
	app_deliver(ctx, ev);
}

/* A note about the input (a source's, the clock's) is an event: recorded,
 * so that a replay shows the log the live session showed. The app's notes
 * about its own output (app_tell) and the warnings it derives from the
 * metrics are not: a replay has its own (docs/recording.md, "log"). */
static void app_log(struct app *a, enum log_kind level, const char *text)
{
	struct event ev = { .type = EV_LOG, .t = app_now(a) };
	ev.u.log = (struct ev_log){ .level = level, .text = text };
	app_deliver(a, &ev);
}

/* Each live source's statistics, when they have changed since the model's
 * copy, as an event: looked at once a second, and at the start and the
 * stop (all: true). So metrics.json's roastop.<source> blocks come from
 * events, and a replay writes them as the live session did. (A source of
 * recorded events describes the replay itself: its block is written from
 * its statistics, app_extra.) */
static void app_counters(struct app *a, bool all)
{
	double now = clock_mono();
	for (size_t i = 0; i < a->n_src; i++) {
		struct app_source *as = &a->src[i];
		if (!as->ops->stats || as->ops->recorded || (!all && now < as->counters_at + 1.0))
			continue;
		as->counters_at = now;
		struct source_stats st = { 0 };
		as->ops->stats(as->s, &st);
		struct event ev = { .type = EV_COUNTERS, .t = clock_session() }, had;
		source_counters_event(as->ops->name, &st, &ev.u.counters);
		if (counters_find(&a->ses.counters, as->ops->name, &had.u.counters) &&
		    counters_same(&had.u.counters, &ev.u.counters))
			continue;
		app_deliver(a, &ev);
	}
}

/* Ended runs close without a next event: the sources' counters first, as
 * app_deliver brings them before an event that closes a run. */
static void app_close_settled(struct app *a)
{
	double now = app_now(a);
	if (session_due(&a->ses, now))
		app_counters(a, true);
	session_tick(&a->ses, now);
}

/* Roastop's own end of the run (incomplete or stopped) goes the way of any
 * event: recorded, so that a replay ends the run the same way. */
static void app_end_run(struct app *a, const struct session_run *row, double t,
			enum run_status st, const char *reason)
{
	/* never earlier than what the run has seen: roastop's own decision is
	 * no time regression (a replay's lines may come out of order) */
	const struct run *r = row->run;
	if (r->any_event && t < r->t_last)
		t = r->t_last;
	struct event ev = { .type = EV_RUN_END, .t = t };
	ev.u.run_end = (struct ev_run_end){ .run_id = row->run_id[0] ? row->run_id : NULL,
					    .status = run_status_name(st), .reason = reason };
	app_deliver(a, &ev);
	if (a->headless)
		fprintf(stderr, "roastop: run %s: %s\n", run_status_name(st), reason);
}

/* A run still going that has a client to wait for (the watch has none). */
static bool app_run_going(const struct session_run *row)
{
	const struct run *r = row->run;
	return r && !r->ended && (r->started || r->begun);
}

/* Silent for the timeout with no chunk in flight: a chunk still running
 * (a stuck one included) is the run going on, not its client gone. */
static bool app_run_idle(const struct session_run *row, double now, double timeout)
{
	return app_run_going(row) && row->run->inflight.n == 0 &&
	       now - row->run->t_last_client >= timeout;
}

/* A run whose client has sent nothing for the idle timeout is incomplete:
 * the client died (a SIGKILL, a lost node) before its run_end; a run with
 * no collector has no run_end and ends so. Live only: a recording has
 * roastop's own decisions in it (a run_end of its own). */
static void app_idle_check(struct app *a, double now)
{
	double timeout = a->cfg->run_idle_timeout;
	for (size_t i = 0; timeout > 0 && i < a->ses.n_rows; i++) {
		const struct session_run *row = &a->ses.rows[i];
		if (!app_run_idle(row, now, timeout))
			continue;
		char reason[RUN_LOG_TEXT];
		if (row->implicit)
			snprintf(reason, sizeof(reason), "no chunk for %g s (--run-idle-timeout) and no "
				 "collector to say how the run ended", timeout);
		else
			snprintf(reason, sizeof(reason), "no datagram from the run for %g s "
				 "(--run-idle-timeout): its client is gone", timeout);
		app_end_run(a, row, now, RUN_INCOMPLETE, reason);
	}
}

/* How the first source whose input has ended ended (source_ops.ended), or
 * NULL. */
static const struct source_end *app_sources_ended(const struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++) {
		const struct source_ops *ops = a->src[i].ops;
		const struct source_end *end = ops->ended ? ops->ended(a->src[i].s) : NULL;
		if (end)
			return end;
	}
	return NULL;
}

/* An input that ended stops a headless session; one that failed stops any. */
static void app_stop_at_end(struct app *a)
{
	const struct source_end *end = app_sources_ended(a);
	if (end && !a->end_ticked) { /* the last figures, for a screen that stays */
		a->end_ticked = true;
		app_tick(a);
	}
	if (end && (end->failed || (a->headless && !a->stop))) {
		a->stop = true;
		a->stop_reason = end->reason;
	}
}

/* At the exit, a run still going is stopped: roastop quit first. Silent for
 * the idle timeout, or when its input has ended, it is incomplete. */
static void app_end_runs_at_exit(struct app *a)
{
	double now = app_now(a);
	const struct source_end *end = app_sources_ended(a);
	if (!a->recorded) /* a recording has roastop's decisions in it already */
		app_idle_check(a, now);
	session_adopt_watch(&a->ses);
	for (size_t i = 0; i < a->ses.n_rows; i++) {
		const struct session_run *row = &a->ses.rows[i];
		if (!row->run || row->run->ended)
			continue;
		char reason[RUN_LOG_TEXT];
		if (end && app_run_going(row)) {
			app_end_run(a, row, now, RUN_INCOMPLETE, end->cut);
			continue;
		}
		snprintf(reason, sizeof(reason), "roastop stopped (%s) while the run was going",
			 a->stop_reason ? a->stop_reason : "done");
		app_end_run(a, row, now, RUN_STOPPED, reason);
	}
}

static void app_measure(const struct app *a, const struct run *r, struct metrics *m)
{
	struct metrics_options opt = { .processor_prefix = a->cfg->processor_prefix };
	metrics_compute(r, app_now(a), &opt, m);
}

static void app_ui_draw(struct app *a);
static const char *app_alert(const struct app *a);
static const char *app_hint(const struct app *a);

/* ---- findings (docs/diagnosis.md): app_diagnose at the tick, and
 * app_frame_findings for a frame that shows another run ---- */

static void app_diagnose_run(struct app *a, const struct run *r, const struct metrics *m)
{
	struct diagnosis_context ctx = { .now = app_now(a), .listening = app_hint(a) != NULL,
					 .key_alert = app_alert(a) != NULL };
	a->findings.n = 0;
	if (r)
		diagnosis_evaluate(r, m, &ctx, &a->findings);
	a->findings_run = r;
}

/* At each tick: the findings of the run the tick measured (live). */
static void app_diagnose(struct app *a)
{
	app_diagnose_run(a, a->frame_run, &a->frame_m);
}

static const struct findings *app_frame_findings(struct app *a, const struct run *shown,
						 const struct metrics *m)
{
	if (shown != a->findings_run)
		app_diagnose_run(a, shown, m);
	return &a->findings;
}

/* The first source's alert (source_ops.alert), or NULL. */
static const char *app_alert(const struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++) {
		const char *t = a->src[i].ops->alert ? a->src[i].ops->alert(a->src[i].s) : NULL;
		if (t)
			return t;
	}
	return NULL;
}

/* The first source's line for its senders (source_ops.hint), or NULL: no
 * source has senders (a replay). */
static const char *app_hint(const struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++) {
		const char *t = a->src[i].ops->hint ? a->src[i].ops->hint(a->src[i].s) : NULL;
		if (t)
			return t;
	}
	return NULL;
}

/* The sources look at what they watch over time; an alert that begins or
 * changes is drawn at once, and headless one line on stderr as it begins. */
static void app_sources_tick(struct app *a)
{
	bool redraw = false;
	for (size_t i = 0; i < a->n_src; i++)
		if (a->src[i].ops->tick && a->src[i].ops->tick(a->src[i].s))
			redraw = true;
	app_counters(a, false);
	const char *alert = app_alert(a);
	if (alert && !a->alert_shown && a->headless)
		fprintf(stderr, "roastop: %s%s\n", alert,
			app_hint(a) ? " (the line to export is above)" : "");
	a->alert_shown = alert != NULL;
	if (redraw && a->ui)
		app_ui_draw(a);
}

/* Nothing arrives while the scheduler shows tasks running: the run shown
 * is going and has had no chunk since it began, the latest scheduler sample (at most
 * QUIET_FRESH seconds old) says tasks execute, and both have held for
 * QUIET_AFTER seconds. The likely cause is a processor not decorated or
 * workers that do not send here; not said while the key alert explains it. */
#define QUIET_AFTER 15.0
#define QUIET_FRESH 10.0
static void app_note_quiet(struct app *a, const struct run *r, const struct metrics *m)
{
	double now = clock_mono();
	optnum busy = m->tasks_executing_now;
	bool fresh = r->tl_executing.has_last && app_now(a) - r->tl_executing.t_last < QUIET_FRESH;
	bool begun = r->started || r->begun;
	bool quiet = app_hint(a) && !app_alert(a) && !r->ended && r->n_chunks == 0 && fresh &&
		     busy.valid && busy.value >= 1;
	if (!quiet || r != a->quiet_run || begun != a->quiet_begun)
		a->quiet_since = NAN;
	a->quiet_run = r;
	a->quiet_begun = begun;
	a->quiet_alert[0][0] = a->quiet_alert[1][0] = '\0';
	if (!quiet)
		return;
	if (isnan(a->quiet_since))
		a->quiet_since = now;
	if (now - a->quiet_since < QUIET_AFTER)
		return;
	char n[FMT_LEN];
	format_num(n, busy, "%.0f");
	snprintf(a->quiet_alert[0], sizeof(a->quiet_alert[0]),
		 "scheduler runs %s tasks, no chunk arrived: is process() decorated and "
		 "ROASTOP_ADDR/KEY exported to this roastop?", n);
	snprintf(a->quiet_alert[1], sizeof(a->quiet_alert[1]),
		 "%s tasks run, no chunk came: process() decorated? ROASTOP_* exported?", n);
}

/* A step of the system clock moves no live time (clock.h): the log says
 * when the session's times part from the system's by a second or more,
 * looked at once a second. */
static void app_note_clock_step(struct app *a)
{
	double now = clock_mono();
	if (a->recorded || now < a->clock_checked_at + 1.0)
		return;
	a->clock_checked_at = now;
	double off = clock_session_offset();
	if (fabs(off - a->clock_offset_told) < 1.0)
		return;
	char text[RUN_LOG_TEXT];
	snprintf(text, sizeof(text), "system clock moved %+.1f s; roastop's times keep counting "
		 "from the session's start (%+.1f s from the system clock now)",
		 off - a->clock_offset_told, -off);
	a->clock_offset_told = off;
	app_log(a, LOG_WARN, text);
	if (a->headless)
		fprintf(stderr, "roastop: %s\n", text);
}

/* Every source's statistics, in the registry's order. */
struct app_stats {
	const char *names[APP_SOURCES_MAX];
	struct source_stats of[APP_SOURCES_MAX];
	struct ui_source ui[APP_SOURCES_MAX];
	size_t n;
};

/* NULL when out of memory (the statistics are ~1 KiB a source). */
static struct app_stats *app_stats(const struct app *a)
{
	struct app_stats *st = calloc(1, sizeof(*st));
	for (size_t i = 0; st && i < a->n_src; i++) {
		if (!a->src[i].ops->stats)
			continue;
		st->names[st->n] = a->src[i].ops->name;
		a->src[i].ops->stats(a->src[i].s, &st->of[st->n++]);
	}
	for (size_t i = 0, k = 0; st && i < a->n_src; i++) {
		if (!a->src[i].ops->stats)
			continue;
		const char *target = a->src[i].ops->target ? a->src[i].ops->target(a->src[i].s) : NULL;
		st->ui[k] = (struct ui_source){ st->names[k], &st->of[k], target };
		k++;
	}
	/* replayed: the recorded sources' counters, as the live header had them */
	for (size_t i = 0; st && a->recorded && i < a->ses.counters.n && st->n < APP_SOURCES_MAX;
	     i++) {
		struct ev_counters c;
		counters_view(&a->ses.counters, i, &c);
		source_stats_of(&c, &st->of[st->n]);
		st->ui[st->n] = (struct ui_source){ c.source, &st->of[st->n], NULL };
		st->names[st->n++] = c.source;
	}
	return st;
}

/* Run r's task model is shown and written when the registry's source of
 * task events has delivered its counters (live, or in the recording
 * replayed: feed is then the model's copy of them) or r has tasks. From
 * events, so a replay shows and writes what the live session did. */
static bool app_tasks_fed(const struct app *a, const struct run *r, struct ev_counters *feed,
			  bool *fed)
{
	*fed = false;
	for (const struct source_ops *const *ops = source_registry; *ops && !*fed; ops++)
		*fed = (*ops)->tasks && counters_find(&a->ses.counters, (*ops)->name, feed);
	return *fed || (r && r->tasks.count);
}

/* metrics.json's roastop block of run r (metrics_extra.h): what the
 * session, the server and the sources of recorded events say. */
static cJSON *app_extra(const struct app *a, const struct run *r)
{
	struct metrics_extra_input *in = calloc(1, sizeof(*in));
	struct source_stats *served = calloc(1, sizeof(*served));
	cJSON *extra = NULL;
	if (!in || !served)
		goto out;
	*in = (struct metrics_extra_input){ .ses = &a->ses, .serve_error = a->serve_error,
					    .serve_failures = a->serve_failures };
	if (a->srv) {
		struct serve_stats st;
		serve_get_stats(a->srv, &st);
		serve_stats_counters(&st, served);
		in->serve_listen = serve_address(a->srv);
		in->serve_counters = served;
	}
	for (size_t i = 0; i < a->n_src && in->n_recorded < METRICS_EXTRA_RECORDED; i++) {
		const struct app_source *as = &a->src[i];
		if (!as->ops->recorded || !as->ops->stats)
			continue;
		in->recorded_names[in->n_recorded] = as->ops->name;
		as->ops->stats(as->s, &in->recorded_stats[in->n_recorded++]);
	}
	struct ev_counters feed;
	bool fed;
	in->tasks = r && app_tasks_fed(a, r, &feed, &fed);
	in->tasks_feed = in->tasks && fed ? &feed : NULL;
	extra = metrics_extra_json(in, r);
out:
	free(served);
	free(in);
	return extra;
}

/* The run list's figures, from the metrics module (session.h). */
static void app_figures(struct session_run *row, const struct metrics *m)
{
	row->fig = (struct session_figures){
		.t_start = m->elapsed_time_seconds.valid ? m->t_start : NAN,
		.elapsed = m->elapsed_time_seconds,
		.chunks = m->num_chunks,
		.failed = m->num_failed_chunks,
		.events = m->total_events,
		.event_rate_hz = m->event_rate_elapsed_khz.valid
					 ? optnum_of(m->event_rate_elapsed_khz.value * 1e3)
					 : optnum_none(),
	};
	row->status = row->run->status;
}

/* Is name taken by another run of the session, or by anything on disk? */
static bool app_dir_taken(const struct app *a, const struct session_run *self, const char *name)
{
	for (size_t i = 0; i < a->ses.n_rows; i++)
		if (&a->ses.rows[i] != self && strcmp(a->ses.rows[i].dir, name) == 0)
			return true;
	char path[PATH_MAX + SESSION_DIR_LEN + 2];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", a->out_dir, name);
	return lstat(path, &st) == 0;
}

/* A run's directory: named at its first write, after its start and name;
 * "-2", "-3"... when that is taken. */
static void app_name_dir(struct app *a, struct session_run *row, const struct metrics *m)
{
	char base[SESSION_DIR_LEN - 8];
	measurement_dir_name(base, sizeof(base), m->elapsed_time_seconds.valid ? m->t_start : NAN,
			     row->run->name);
	snprintf(row->dir, sizeof(row->dir), "%s", base);
	for (unsigned k = 2; app_dir_taken(a, row, row->dir) && k < 1000000; k++)
		snprintf(row->dir, sizeof(row->dir), "%s-%u", base, k);
}

/* latest -> the newest run written. */
static int app_link_latest(struct app *a, const struct session_run *row, char *err, size_t errsz)
{
	for (const struct session_run *r = row + 1; r < a->ses.rows + a->ses.n_rows; r++)
		if (r->dir[0])
			return 0;
	return measurement_link_latest(a->out_dir, row->dir, err, errsz);
}

/* Writes one run's measurement: -1 with the cause in errno and a line in
 * err when it fails. */
static int app_write_run(struct app *a, struct session_run *row, char *err, size_t errsz)
{
	struct metrics m;
	app_measure(a, row->run, &m);
	app_figures(row, &m);
	bool fresh = !row->dir[0];
	if (fresh)
		app_name_dir(a, row, &m);
	char path[PATH_MAX + SESSION_DIR_LEN + 2];
	snprintf(path, sizeof(path), "%s/%s", a->out_dir, row->dir);
	cJSON *extra = app_extra(a, row->run);
	int rc = measurement_write(path, &m, row->run, extra, err, errsz);
	int saved = errno;
	row->write_errno = rc ? saved : 0; /* GET .../metrics.json says it (serve_route.h) */
	cJSON_Delete(extra);
	if (rc == 0 && fresh)
		a->n_written++;
	if (rc == 0 && app_link_latest(a, row, err, errsz) != 0) {
		saved = errno;
		rc = -1;
	}
	errno = saved;
	return rc;
}

/* Every run not closed (and one changed since its close): 0, or the
 * last failure's -1 with errno and err. */
static int app_write_open(struct app *a, char *err, size_t errsz)
{
	int rc = 0, e = 0;
	for (size_t i = 0; i < a->ses.n_rows; i++) {
		struct session_run *row = &a->ses.rows[i];
		if (!row->run || (row->closed && !row->dirty))
			continue;
		if (app_write_run(a, row, err, errsz) != 0) {
			rc = -1;
			e = errno;
		} else if (row->closed) {
			row->dirty = false;
		}
	}
	errno = e;
	return rc;
}

/* A failing checkpoint is told when it starts failing or its reason
 * changes, not every interval; the first write that succeeds after it
 * clears the alert and says so. */
static void app_write_outcome(struct app *a, int rc, int e, const char *err)
{
	char text[RUN_LOG_TEXT];
	if (rc == 0 && a->checkpoint_errno) {
		snprintf(text, sizeof(text), "measurement written again, after %llu failed checkpoint%s",
			 (unsigned long long)a->checkpoints_failing, a->checkpoints_failing == 1 ? "" : "s");
		a->checkpoint_errno = 0;
		a->checkpoints_failing = 0;
		app_tell(a, LOG_INFO, text);
		app_alert_update(a);
	}
	if (rc == 0)
		return;
	a->checkpoints_failing++;
	if (e == a->checkpoint_errno)
		return;
	a->checkpoint_errno = e;
	snprintf(text, sizeof(text), "checkpoint failed: %s", err);
	app_tell(a, LOG_ERROR, text);
	app_alert_update(a);
}

/* Headless runs print one progress line per checkpoint, for batch logs. */
static void app_progress(const struct metrics *m)
{
	char el[FMT_LEN], ch[FMT_LEN], ev[FMT_LEN], wk[FMT_LEN], rate[FMT_LEN];
	fprintf(stderr, "roastop: %s elapsed, %s chunks, %s events (%s), %s workers\n",
		format_duration(el, m->elapsed_time_seconds), format_count(ch, m->num_chunks),
		format_count(ev, m->total_events),
		format_rate(rate, m->event_rate_elapsed_khz, 1e3, "Hz"),
		format_num(wk, m->workers_now, "%.0f"));
}

/* A metric the screen shows as n/a because its inputs contradict each
 * other: why, once per metric, in the event log. */
static void app_note_warnings(struct app *a, const struct metrics *m)
{
	if (a->runs_seen != a->ses.runs_total) { /* a new run: its warnings are news */
		a->runs_seen = a->ses.runs_total;
		a->n_warned = 0;
	}
	for (size_t i = 0; i < m->n_warnings; i++) {
		const struct metrics_warning *w = &m->warnings[i];
		bool seen = false;
		for (size_t k = 0; k < a->n_warned && !seen; k++)
			seen = strcmp(a->warned[k], w->key) == 0;
		if (seen || a->n_warned == METRICS_MAX_WARNINGS)
			continue;
		a->warned[a->n_warned++] = w->key;
		char text[RUN_LOG_TEXT];
		snprintf(text, sizeof(text), "%s n/a: %s", w->key, w->reason);
		fprintf(stderr, "roastop: %s\n", text);
		/* applied as a log event, not recorded: a replay derives it again
		 * from the same events, at the same tick */
		struct event ev = { .type = EV_LOG, .t = app_now(a) };
		ev.u.log = (struct ev_log){ .level = LOG_WARN, .text = text };
		app_apply(a, &ev);
	}
}

/* The run the dashboard shows: the one picked in the run list while it
 * is kept in detail, else the newest. */
static const struct run *app_shown(const struct app *a)
{
	size_t k = a->ui ? ui_picked_run(a->ui, &a->ses) : 0;
	if (k && k <= a->ses.n_rows && a->ses.rows[k - 1].run)
		return a->ses.rows[k - 1].run;
	return session_newest(&a->ses);
}

static void app_checkpoint(struct app *a)
{
	char err[512] = "";
	struct metrics m;
	app_measure(a, session_newest(&a->ses), &m);
	if (a->headless)
		app_progress(&m);
	int rc = app_write_open(a, err, sizeof(err));
	app_write_outcome(a, rc, errno, err);
}

/* A run closes (session.h): its final measurement. */
static void app_run_closed(void *ctx, struct session_run *row)
{
	struct app *a = ctx;
	char err[512] = "";
	int rc = app_write_run(a, row, err, sizeof(err));
	int e = errno;
	row->dirty = rc != 0; /* tried again at the next checkpoint and at the exit */
	if (rc != 0 && a->finishing) {
		a->finish_failed = true;
		fprintf(stderr, "roastop: could not write the measurement: %s\n", err);
	}
	app_write_outcome(a, rc, e, err);
}

static void app_signal(struct app *a)
{
	struct signalfd_siginfo si;
	while (read(a->fds[FD_SIGNAL], &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		a->stop = true;
		a->stop_reason = strsignal((int)si.ssi_signo);
	}
}

/* At the stop: what the sources have queued already is taken in. */
static void app_sources_finish(struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++)
		if (a->src[i].ops->finish)
			a->src[i].ops->finish(a->src[i].s, clock_session());
}

/* Still waiting for the collector to fetch the ended run (LINGER_IDLE)?
 * Closes the runs settled meanwhile, so that there is something to fetch. */
static bool app_linger(struct app *a)
{
	struct serve_stats st;
	serve_get_stats(a->srv, &st);
	double now = clock_mono();
	if (!a->lingering) {
		a->lingering = true;
		a->linger_sent = st.measurements_sent;
		a->linger_end = now + LINGER_MAX;
	}
	if (!a->linger_idle_at || st.requests != a->linger_requests) {
		a->linger_requests = st.requests;
		a->linger_idle_at = now + LINGER_IDLE;
	}
	app_close_settled(a);
	return st.measurements_sent == a->linger_sent && now < a->linger_idle_at &&
	       now < a->linger_end;
}

/* The grace after run end is over: stop, once the scheduler's last round
 * (begun after the run's end) is in, or its deadline has passed, and the
 * collector has had its chance to fetch the run. */
static void app_end_after_flush(struct app *a)
{
	if ((app_sources_busy(a) && clock_mono() < a->ending_deadline) ||
	    (a->srv && app_linger(a))) {
		timer_set_periodic(a->fds[FD_GRACE], 0.1, 0);
		return;
	}
	a->stop = true;
	a->stop_reason = "run ended";
}

/* ---- the tick: what the frames read, once a second of the events' clock ---- */

/* The session's runs are those the frame's metrics were measured among:
 * no run opened, summarised or dropped since (a run's pointer is then
 * still its own). */
static void app_frame_key(const struct app *a, uint64_t key[3])
{
	key[0] = a->ses.runs_total;
	key[1] = a->ses.runs_summarised;
	key[2] = a->ses.rows_dropped;
}

/* The shown run's metrics for the frame; m: newest's, measured already. */
static void app_frame_measure(struct app *a, const struct metrics *newest_m)
{
	const struct run *shown = app_shown(a);
	if (shown == session_newest(&a->ses))
		a->frame_m = *newest_m;
	else
		app_measure(a, shown, &a->frame_m);
	a->frame_run = shown;
	app_frame_key(a, a->frame_key);
}

/* The run list's rows still going get their figures (session.h); newest's
 * metrics (newest_m) are computed already. */
static void app_refresh_figures(struct app *a, const struct metrics *newest_m)
{
	const struct run *newest = session_newest(&a->ses);
	for (size_t i = 0; i < a->ses.n_rows; i++) {
		struct session_run *row = &a->ses.rows[i];
		if (!row->run || row->closed)
			continue;
		struct metrics m;
		if (row->run != newest)
			app_measure(a, row->run, &m);
		app_figures(row, row->run == newest ? newest_m : &m);
	}
}

/* Once a second of the events' clock (app_tick_due) and at the input's end:
 * the newest run's metric warnings into its log, the rows' figures, the
 * shown run's metrics for the frames, the quiet alert. What it writes
 * depends on the events only, never on when frames are drawn, so a replay
 * headless and one drawn in a terminal write the same files. */
static void app_refresh(struct app *a, const struct metrics *newest_m);

static void app_tick(struct app *a)
{
	struct metrics m;
	app_measure(a, session_newest(&a->ses), &m);
	app_note_warnings(a, &m);
	app_refresh(a, &m);
}

/* The view's figures: the rows' going on, the shown run's metrics, the
 * quiet alert. At each tick, and before a frame when events came since
 * the last (a replay waiting for input shows what it has read): what no
 * file reads, so its times do not matter. newest_m: NULL, measured here. */
static void app_refresh(struct app *a, const struct metrics *newest_m)
{
	struct metrics m;
	if (!newest_m) {
		app_measure(a, session_newest(&a->ses), &m);
		newest_m = &m;
	}
	a->refreshed_at = a->t_latest;
	app_refresh_figures(a, newest_m);
	app_frame_measure(a, newest_m);
	bool was = a->quiet_alert[0][0] != '\0';
	app_note_quiet(a, a->frame_run, &a->frame_m);
	if (a->headless && !was && a->quiet_alert[0][0])
		fprintf(stderr, "roastop: %s\n", a->quiet_alert[0]);
	app_diagnose(a);
}

/* The tick is due at each whole second of the events' clock t: called
 * before an event at or past it is applied, and by the loop with "now". */
static void app_tick_due(struct app *a, double t)
{
	if (t < a->tick_next)
		return;
	a->tick_next = floor(fmax(t, a->t_latest)) + 1.0;
	app_tick(a);
}

/* ---- the dashboard: one call each from the loop ---- */

/* A frame between ticks may show another run than the tick measured (a
 * run picked, a run opened): that one's metrics, measured now. Pure: no
 * state of the session changes. */
static const struct metrics *app_frame_metrics(struct app *a)
{
	uint64_t key[3];
	app_frame_key(a, key);
	const struct run *shown = app_shown(a);
	if (shown != a->frame_run || memcmp(key, a->frame_key, sizeof(key)) != 0) {
		app_measure(a, shown, &a->frame_m);
		a->frame_run = shown;
		memcpy(a->frame_key, key, sizeof(key));
	}
	return &a->frame_m;
}

/* Draws what the tick computed; changes nothing of the session. */
static void app_ui_draw(struct app *a)
{
	const struct metrics *m = app_frame_metrics(a);
	const struct run *shown = a->frame_run;
	struct app_stats *st = app_stats(a);
	struct ui_frame f = {
		.run = shown,
		.session = &a->ses,
		.m = m,
		.sources = st ? st->ui : NULL,
		.n_sources = st ? st->n : 0,
		.out_dir = a->out_dir,
		.out_alert = a->out_alert[0] ? a->out_alert : NULL,
		.key_alert = app_alert(a),
		.quiet_alert = { a->quiet_alert[0][0] ? a->quiet_alert[0] : NULL, a->quiet_alert[1] },
		.emitter_hint = app_hint(a),
		.now = app_now(a),
		.findings = app_frame_findings(a, shown, m),
	};
	struct ev_counters feed;
	bool fed;
	if (app_tasks_fed(a, shown, &feed, &fed)) { /* the task view, with its feed's state */
		f.tasks = &shown->tasks;
		f.tasks_state = fed ? feed.state : NULL;
	}
	ui_draw(a->ui, &f);
	free(st);
}

/* The emitter line in a file beside the key (KEY.env, 0600) for a shell
 * to source, where a terminal cannot copy it whole. */
static void app_write_emitter(struct app *a)
{
	char path[PATH_MAX + 16];
	const char *hint = app_hint(a);
	if (!hint) {
		ui_message(a->ui, "no listener in a replay: no emitter line to write");
		return;
	}
	if (a->cfg->no_auth)
		snprintf(path, sizeof(path), "%s/roastop.env", a->out_dir);
	else
		snprintf(path, sizeof(path), "%s.env", a->key.path);
	struct strbuf line;
	strbuf_init(&line);
	strbuf_appendf(&line, "%s\n", hint);
	int rc = line.failed ? -1 : fsutil_write_private(path, line.data);
	strbuf_free(&line);
	if (rc != 0)
		ui_message(a->ui, "could not write %s: %s", path, strerror(errno));
	else
		ui_message(a->ui, "emitter line written to %s; in the analysis's shell: . %s", path, path);
}

static void app_ui_input(struct app *a)
{
	unsigned act = ui_input(a->ui);
	if (act & UI_QUIT) {
		a->stop = true;
		a->stop_reason = "q pressed";
		return;
	}
	if ((act & UI_WRITE_NOW) && a->ses.n_rows == 0)
		ui_message(a->ui, "no run yet: nothing to write (watching only is written at the exit)");
	else if (act & UI_WRITE_NOW) {
		char err[512] = "";
		int rc = app_write_open(a, err, sizeof(err));
		app_write_outcome(a, rc, errno, err);
		if (rc == 0)
			ui_message(a->ui, "measurement written under %s", a->out_dir);
		else
			ui_message(a->ui, "could not write the measurement: %s", err);
	}
	if (act & UI_WRITE_EMITTER)
		app_write_emitter(a);
	if (act & UI_INTERVAL_CHANGED) {
		double iv = ui_interval(a->ui);
		timer_set_periodic(a->fds[FD_FRAME], iv, iv);
	}
	if (act & UI_REDRAW)
		app_ui_draw(a);
}

/* The dashboard, unless headless was asked for or the terminal cannot
 * hold one (then roastop says why and runs headless). */
static void app_open_ui(struct app *a)
{
	const struct app_config *c = a->cfg;
	a->headless = c->headless;
	if (a->headless)
		return;
	struct ui_config uc = { .theme = c->theme, .no_color = c->no_color, .ascii = c->ascii };
	char err[512];
	a->ui = ui_open(&uc, err, sizeof(err));
	if (!a->ui) {
		fprintf(stderr, "roastop: no dashboard: %s; running headless\n", err);
		a->headless = true;
		return;
	}
	a->fds[FD_UI] = ui_fd(a->ui);
	if (app_hint(a)) /* what was printed before the screen opened, again */
		ui_message(a->ui, "emitters: ? shows the export line, w writes it to a file");
	double iv = ui_interval(a->ui);
	timer_set_periodic(a->fds[FD_FRAME], iv, iv);
	app_ui_draw(a);
}

static void app_close_ui(struct app *a)
{
	ui_close(a->ui);
	a->ui = NULL;
	a->fds[FD_UI] = -1; /* closed with the UI */
}

/* Every source's descriptors, one after another in out; n_fds[i] says
 * how many are the i-th source's. Returns the total. */
static size_t app_sources_pollfds(const struct app *a, struct pollfd *out, size_t *n_fds)
{
	size_t total = 0;
	for (size_t i = 0; i < a->n_src; i++) {
		const struct app_source *as = &a->src[i];
		n_fds[i] = as->ops->pollfds ? as->ops->pollfds(as->s, out + total, SOURCE_MAX_FDS) : 0;
		total += n_fds[i];
	}
	return total;
}

/* Seconds until a source wants its dispatch with nothing readable, < 0 none. */
static double app_source_due(const struct app_source *as)
{
	return as->ops->timeout ? as->ops->timeout(as->s) : -1;
}

/* The loop's wait (ms, -1 = none), shortened to the first source's timeout. */
static int app_sources_timeout(const struct app *a, int wait_ms)
{
	for (size_t i = 0; i < a->n_src; i++) {
		double due = app_source_due(&a->src[i]);
		int ms = due < 0 ? -1 : (int)ceil(due * 1000);
		if (ms >= 0 && (wait_ms < 0 || ms < wait_ms))
			wait_ms = ms;
	}
	return wait_ms;
}

/* A source is called back when one of its descriptors is ready or its
 * timeout has come. */
static void app_sources_dispatch(struct app *a, const struct pollfd *pfd, const size_t *n_fds,
				 bool polled)
{
	for (size_t i = 0; polled && i < a->n_src; i++) {
		bool ready = app_source_due(&a->src[i]) == 0;
		for (size_t k = 0; k < n_fds[i] && !ready; k++)
			ready = pfd[k].revents != 0;
		if (ready)
			a->src[i].ops->dispatch(a->src[i].s, pfd, n_fds[i], clock_session());
		pfd += n_fds[i];
	}
}

static void app_loop(struct app *a)
{
	struct pollfd pfd[FD__COUNT + APP_SOURCES_MAX * SOURCE_MAX_FDS];
	size_t n_fds[APP_SOURCES_MAX];
	while (!a->stop) {
		for (int i = 0; i < FD__COUNT; i++)
			pfd[i] = (struct pollfd){ .fd = a->fds[i], .events = POLLIN };
		size_t n_src = app_sources_pollfds(a, pfd + FD__COUNT, n_fds);
		int serve_ms = a->srv ? serve_timeout_ms(a->srv) : -1;
		int n = poll(pfd, FD__COUNT + n_src, app_sources_timeout(a, serve_ms));
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "roastop: poll: %s\n", strerror(errno));
			break;
		}
		if (n > 0 && (pfd[FD_SIGNAL].revents & POLLIN))
			app_signal(a);
		if (n > 0 && (pfd[FD_DURATION].revents & POLLIN)) {
			a->stop = true;
			a->stop_reason = "--duration reached";
		}
		if (n > 0 && (pfd[FD_CHECKPOINT].revents & POLLIN)) {
			timer_drain(a->fds[FD_CHECKPOINT]);
			app_checkpoint(a);
		}
		if (n > 0 && (pfd[FD_GRACE].revents & POLLIN)) {
			timer_drain(a->fds[FD_GRACE]);
			if (a->ending)
				app_end_after_flush(a);
		}
		if (n > 0 && (pfd[FD_FLUSH].revents & POLLIN)) {
			timer_drain(a->fds[FD_FLUSH]);
			app_record_flush(a);
		}
		if (n > 0 && (pfd[FD_IDLE].revents & POLLIN)) {
			timer_drain(a->fds[FD_IDLE]);
			app_idle_check(a, app_now(a));
			app_close_settled(a);
		}
		if (n > 0 && (pfd[FD_FRAME].revents & POLLIN)) {
			timer_drain(a->fds[FD_FRAME]);
			if (a->t_latest != a->refreshed_at)
				app_refresh(a, NULL);
			app_ui_draw(a);
		}
		if (n > 0 && (pfd[FD_UI].revents & (POLLIN | POLLHUP)))
			app_ui_input(a);
		app_sources_dispatch(a, pfd + FD__COUNT, n_fds, n >= 0);
		app_stop_at_end(a);
		if (a->srv && ((n > 0 && pfd[FD_SERVE].revents) || serve_ms == 0 || n == 0))
			serve_run(a->srv);
		app_sources_tick(a);
		app_note_clock_step(a);
		app_tick_due(a, app_now(a));
	}
}

/* The session's key (auth.h), unless --no-auth: the listener checks
 * datagrams with it, the HTTP server takes it as its token. */
static int app_open_key(struct app *a)
{
	const struct app_config *c = a->cfg;
	char err[512];
	if (c->no_auth)
		return 0;
	if (auth_key_setup(&a->key, c->key_file, c->new_key, err, sizeof(err)) != 0) {
		fprintf(stderr, "roastop: %s\n", err);
		return -1;
	}
	if (a->key.note[0])
		fprintf(stderr, "roastop: %s\n", a->key.note);
	else if (c->new_key)
		fprintf(stderr,
			"roastop: new key written to %s; re-export ROASTOP_KEY in your shells\n",
			a->key.path);
	return 0;
}

/* A source's note: an event, recorded, so a replay shows it (app_log); a
 * replay's own notes (its time jumps) are about the replay, not the
 * recording's, and not counted as applied events. */
static void note_cb(void *ctx, const char *text)
{
	struct app *a = ctx;
	if (a->recorded)
		session_note(&a->ses, app_now(a), LOG_WARN, text);
	else
		app_log(a, LOG_WARN, text);
}

static bool stopping_cb(void *ctx)
{
	return ((const struct app *)ctx)->stop;
}

/* Every source of the registry this configuration asks for. */
static int app_open_registry(struct app *a)
{
	struct source_env env = { .cfg = a->cfg, .deliver = deliver_cb, .note = note_cb,
				  .stopping = stopping_cb, .ctx = a,
				  .key = a->cfg->no_auth ? NULL : &a->key };
	for (const struct source_ops *const *ops = source_registry; *ops; ops++) {
		if (!(*ops)->wanted(a->cfg))
			continue;
		char err[512] = "";
		void *s = a->n_src < APP_SOURCES_MAX ? (*ops)->open(&env, err, sizeof(err)) : NULL;
		if (!s) {
			fprintf(stderr, "roastop: %s\n", err[0] ? err : "too many sources");
			return -1;
		}
		a->src[a->n_src++] = (struct app_source){ .ops = *ops, .s = s };
	}
	return 0;
}

static void app_measure_cb(void *ctx, const struct run *r, struct metrics *m)
{
	app_measure(ctx, r, m);
}

/* The first source's listening address (source_ops.address). */
static bool app_listen_address(const struct app *a, struct sockaddr_storage *addr,
			       socklen_t *len)
{
	for (size_t i = 0; i < a->n_src; i++)
		if (a->src[i].ops->address && a->src[i].ops->address(a->src[i].s, addr, len))
			return true;
	return false;
}

/* The listener's statistics for /metrics: the first source with an
 * address. */
static bool app_listener_stats(void *ctx, const char **name, struct source_stats *out)
{
	const struct app *a = ctx;
	struct sockaddr_storage addr;
	socklen_t len;
	for (size_t i = 0; i < a->n_src; i++) {
		const struct source_ops *ops = a->src[i].ops;
		if (ops->address && ops->stats && ops->address(a->src[i].s, &addr, &len)) {
			*name = ops->name;
			ops->stats(a->src[i].s, out);
			return true;
		}
	}
	return false;
}

/* Where to serve: --serve's address, else the listener's (TCP on the UDP
 * host and port: ROASTOP_ADDR alone finds it); replaying recorded events
 * the key is read here, as the listener would have. */
static int app_serve_where(struct app *a, struct serve_config *sc, char *err, size_t errsz)
{
	const struct app_config *c = a->cfg;
	if (a->recorded && !c->no_auth && auth_key_setup(&a->key, c->key_file, false, err, errsz) != 0)
		return -1;
	if (c->serve_host[0])
		return serve_resolve(c->serve_host, c->serve_port, &sc->addr, &sc->addrlen, err, errsz);
	if (app_listen_address(a, &sc->addr, &sc->addrlen))
		return 0;
	snprintf(err, errsz, "no address: %s", strerror(errno));
	return -1;
}

/* The HTTP server (serve.h): live by default, in a replay when --serve is
 * given. Its failure (a port taken) is said and counted, never fatal:
 * the measurement is the main job. */
static void app_open_serve(struct app *a)
{
	const struct app_config *c = a->cfg;
	struct sockaddr_storage addr;
	socklen_t len;
	if (c->serve_off || (!c->serve_host[0] && !app_listen_address(a, &addr, &len)))
		return;
	char err[sizeof(a->serve_error) - 64];
	struct serve_config sc = { .ses = &a->ses, .out_dir = a->out_dir,
				   .metrics_open = c->serve_metrics_open,
				   .listener_stats = app_listener_stats,
				   .measure = app_measure_cb, .ctx = a };
	if (app_serve_where(a, &sc, err, sizeof(err)) == 0) {
		sc.key_hex = c->no_auth ? NULL : a->key.hex;
		a->srv = serve_open(&sc, err, sizeof(err));
	}
	if (!a->srv) {
		a->serve_failures++;
		snprintf(a->serve_error, sizeof(a->serve_error), "not serving HTTP: %s", err);
		fprintf(stderr, "roastop: %s; everything else goes on (--serve off: no server)\n",
			a->serve_error);
		session_note(&a->ses, clock_session(), LOG_WARN, a->serve_error);
		return;
	}
	a->fds[FD_SERVE] = serve_fd(a->srv);
	fprintf(stderr, "roastop: serving runs and metrics on http://%s/ (%s)\n",
		serve_address(a->srv),
		c->no_auth ? "no authentication" : "bearer token: the ROASTOP_KEY value");
}

/* Does the configuration replay recorded events (source_ops.recorded)? */
static bool app_wants_recorded(const struct app_config *c)
{
	for (const struct source_ops *const *ops = source_registry; *ops; ops++)
		if ((*ops)->recorded && (*ops)->wanted(c))
			return true;
	return false;
}

/* How often a live run's silence is looked at (RUN_IDLE_CHECKS). */
static double app_idle_interval(const struct app_config *c)
{
	return c->run_idle_timeout > 0
		       ? fmin(c->run_idle_timeout / RUN_IDLE_CHECKS, RUN_IDLE_CHECK_MAX)
		       : RUN_IDLE_CHECK_MAX;
}

static int app_open_sources(struct app *a)
{
	char err[512];
	a->recorded = app_wants_recorded(a->cfg);
	if (!a->recorded && app_open_key(a) != 0)
		return -1;
	if (app_open_registry(a) != 0)
		return -1;
	/* also when the timeout is off: ended runs close on this timer; never
	 * on recorded events, which have roastop's decisions in them */
	if (!a->recorded)
		timer_set_periodic(a->fds[FD_IDLE], app_idle_interval(a->cfg),
				   app_idle_interval(a->cfg));
	if (a->cfg->record_path) {
		a->rec = recorder_open(a->cfg->record_path, err, sizeof(err));
		if (!a->rec) {
			fprintf(stderr, "roastop: %s\n", err);
			return -1;
		}
	}
	return 0;
}

static int app_open_fds(struct app *a)
{
	const struct app_config *c = a->cfg;
	a->fds[FD_SIGNAL] = signals_open();
	a->fds[FD_CHECKPOINT] = timer_open(c->checkpoint_interval, c->checkpoint_interval);
	a->fds[FD_DURATION] = timer_open(c->duration > 0 ? c->duration : 0, 0);
	a->fds[FD_GRACE] = timer_open(0, 0);
	a->fds[FD_FRAME] = timer_open(0, 0);
	a->fds[FD_FLUSH] = timer_open(c->record_path ? RECORDER_FLUSH_INTERVAL : 0,
				      RECORDER_FLUSH_INTERVAL);
	a->fds[FD_IDLE] = timer_open(0, 0); /* armed by app_open_sources */
	for (int i = 0; i <= FD_IDLE; i++) {
		if (a->fds[i] < 0) {
			fprintf(stderr, "roastop: cannot set up the event loop: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void app_close(struct app *a)
{
	a->fds[FD_SERVE] = -1; /* closed with the server */
	serve_close(a->srv);
	for (size_t i = 0; i < a->n_src; i++)
		a->src[i].ops->close(a->src[i].s);
	if (a->key.session)
		unlink(a->key.path); /* the per-user key outlives us; a session key does not */
	for (int i = 0; i < FD__COUNT; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
	session_destroy(&a->ses);
}

/* The recording's last lines; its failure, now or earlier, fails the exit. */
static int app_finish_recording(struct app *a)
{
	if (a->rec && recorder_close(a->rec) != 0)
		a->record_errno = errno;
	a->rec = NULL;
	if (!a->record_errno)
		return 0;
	fprintf(stderr, "roastop: the recording %s is incomplete (%s): exit status 1\n",
		a->cfg->record_path, strerror(a->record_errno));
	return 1;
}

/* The runs, the newest in full, and the last line, in one write to
 * standard output, whose failure (a full disk, a closed pipe) is an error
 * like any other. */
static int app_print_summary(const struct app *a, const struct metrics *m)
{
	struct strbuf sb;
	strbuf_init(&sb);
	text_runs(&a->ses, &sb);
	strbuf_puts(&sb, "\n");
	const struct run *newest = session_newest(&a->ses);
	cJSON *extra = app_extra(a, newest); /* its summary.txt, Dask tasks included */
	text_run_summary(m, newest, extra, &sb);
	cJSON_Delete(extra);
	const struct session_run *last = a->ses.n_rows ? &a->ses.rows[a->ses.n_rows - 1] : NULL;
	if (a->n_written)
		strbuf_appendf(&sb, "\nroastop: stopped (%s); %zu measurement%s written under %s "
			       "(latest: %s)\n", a->stop_reason ? a->stop_reason : "done", a->n_written,
			       a->n_written == 1 ? "" : "s", a->out_dir, last ? last->dir : "");
	int rc = -1;
	if (sb.failed)
		errno = ENOMEM;
	else if (fflush(stdout) == 0 && fsutil_write_all(STDOUT_FILENO, sb.data, sb.len) == 0)
		rc = 0;
	if (rc != 0)
		fprintf(stderr, "roastop: could not print the summary on standard output: %s%s%s\n",
			strerror(errno), a->n_written ? "; the runs are under " : "",
			a->n_written ? a->out_dir : "");
	strbuf_free(&sb);
	return rc;
}

/* Every run's final write, then the summary on stdout (also when a write
 * failed, so nothing is lost: the exit status says it). */
static int app_finish(struct app *a)
{
	a->finishing = true;
	session_close_all(&a->ses);
	struct metrics m;
	app_measure(a, session_newest(&a->ses), &m);
	app_note_warnings(a, &m);
	int rc = a->finish_failed ? 1 : 0;
	if (app_print_summary(a, &m) != 0)
		rc = 1;
	return app_finish_recording(a) != 0 ? 1 : rc;
}

int app_main(const struct app_config *cfg)
{
	struct app *a = calloc(1, sizeof(*a));
	if (!a || session_init(&a->ses, app_run_closed, a) != 0) {
		fprintf(stderr, "roastop: out of memory\n");
		free(a);
		return 1;
	}
	a->cfg = cfg;
	clock_session(); /* anchored: live times count from here */
	for (int i = 0; i < FD__COUNT; i++)
		a->fds[i] = -1;
	if (cfg->output_dir && cfg->output_dir[0])
		snprintf(a->out_dir, sizeof(a->out_dir), "%s", cfg->output_dir);
	else
		snprintf(a->out_dir, sizeof(a->out_dir), "roastop-measurements");
	char err[512];
	int rc = 1;
	if (measurement_check_dir(a->out_dir, err, sizeof(err)) != 0)
		fprintf(stderr, "roastop: %s\n", err);
	else if (app_open_fds(a) == 0 && app_open_sources(a) == 0) {
		app_counters(a, true);
		if (cfg->headless || a->recorded)
			fprintf(stderr, "roastop: collecting; each run's measurement goes under %s\n",
				a->out_dir);
		app_open_serve(a);
		app_open_ui(a);
		app_loop(a);
		app_sources_finish(a);
		app_counters(a, true);
		app_end_runs_at_exit(a);
		app_close_ui(a);
		rc = app_finish(a);
		const struct source_end *end = app_sources_ended(a);
		if (end && end->failed)
			rc = 1;
	}
	app_close(a);
	free(a);
	return rc;
}
