/* The loop. Sources hand events to app_deliver(), which records them and
 * applies them to the session; timers drive checkpoints and --duration; a
 * signalfd turns SIGINT/SIGTERM/SIGHUP into a clean stop. */
#include "roastop/clock.h"
#include "apppriv.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "roastop/record.h"
#include "roastop/serve.h"
#include "roastop/timer.h"

#define RUN_END_GRACE 1.0 /* live: seconds to wait for late chunks after run end */
#define RUN_END_FLUSH_MAX 15.0 /* and at most this long for the scheduler's last round */
/* --exit-on-run-end with a server: roastop stays for the collector to
 * fetch the run (docs/serve.md) until a measurement has been sent,
 * LINGER_IDLE s pass without a request, or LINGER_MAX s in all. */
#define LINGER_IDLE 3.0
#define LINGER_MAX 30.0
/* How often a live run's silence is looked at: a tenth of the timeout, so a
 * run is marked incomplete at most 10 % late, and at least every second. */
#define RUN_IDLE_CHECKS 10.0
#define RUN_IDLE_CHECK_MAX 1.0

/* "now" for the metrics: the recorded events' clock in a replay, else the
 * session's clock (clock.h), which stamps live events. */
double app_now(const struct app *a)
{
	if (a->src.recorded)
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

static void app_tick_due(struct app *a, double t);
static void app_apply(struct app *a, const struct event *ev);
static void app_deliver(struct app *a, const struct event *ev);

void app_stop(struct app *a, const char *reason)
{
	a->stop = true;
	a->stop_reason = reason;
}

/* How a line goes into the event log (docs/recording.md, "log"). */
enum app_note_how {
	APP_NOTE_RECORDED, /* about the input: recorded; a replay shows it */
	APP_NOTE_DERIVED, /* derived from the events: applied, not recorded */
	APP_NOTE_OWN, /* about roastop's output or the replay: ev_log.own, not counted */
};

/* A line into the newest run's log, as an EV_LOG. t: app_now, or the
 * session's clock before any event. */
static void app_note(struct app *a, double t, enum log_kind kind, const char *text,
		     enum app_note_how how)
{
	struct event ev = { .type = EV_LOG, .t = t };
	ev.u.log = (struct ev_log){ .level = kind, .text = text, .own = how == APP_NOTE_OWN };
	if (how == APP_NOTE_RECORDED)
		app_deliver(a, &ev);
	else if (how == APP_NOTE_DERIVED)
		app_apply(a, &ev);
	else
		session_apply(&a->ses, &ev);
}

/* About roastop's own output: on stderr (held while the dashboard is up)
 * and in the event log, not recorded. */
static void app_tell(struct app *a, enum log_kind kind, const char *text)
{
	fprintf(stderr, "roastop: %s\n", text);
	app_note(a, app_now(a), kind, text, APP_NOTE_OWN);
}

void app_write_outcome(struct app *a, int rc, int e, const char *err)
{
	char text[RUN_LOG_TEXT];
	enum log_kind kind;
	if (app_alerts_write_outcome(&a->alerts, rc, e, err, text, &kind))
		app_tell(a, kind, text);
}

/* Why a metric is n/a (its inputs contradict each other), once per metric;
 * a replay derives it again from the same events, at the same tick. */
static void app_note_warnings(struct app *a, const struct metrics *m)
{
	for (size_t i = 0; i < m->n_warnings; i++) {
		const struct metrics_warning *w = &m->warnings[i];
		if (!app_alerts_warning(&a->alerts, a->ses.runs_total, w))
			continue;
		char text[RUN_LOG_TEXT];
		snprintf(text, sizeof(text), "%s n/a: %s", w->key, w->reason);
		fprintf(stderr, "roastop: %s\n", text);
		app_note(a, app_now(a), LOG_WARN, text, APP_NOTE_DERIVED);
	}
}

/* Once a second of the events' clock (app_tick_due) and at the input's end:
 * the newest run's metric warnings, then app_refresh. It depends on the
 * events only, never on frames, so a replay headless and one drawn write
 * the same files. */
static void app_tick(struct app *a)
{
	struct metrics m = app_snap_take(a, session_newest(&a->ses))->m; /* the notes may measure */
	app_note_warnings(a, &m);
	app_refresh(a);
}

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
	app_sources_tell(&a->src, ev);
	if (!a->cfg->exit_on_run_end || ev->type != EV_RUN_END || rc || a->stop || a->ending)
		return;
	if (a->src.recorded) { /* nothing more is in flight: what was recorded is all */
		app_stop(a, "run ended");
		return;
	}
	a->ending = true; /* datagrams of the last chunks may still be in flight */
	a->ending_deadline = clock_mono() + RUN_END_FLUSH_MAX;
	timer_set_periodic(a->fds[FD_GRACE], RUN_END_GRACE, 0);
}

/* The recording ends at its first failure (record.h), which fails the exit. */
static void app_record_failed(struct app *a, int e)
{
	char text[RUN_LOG_TEXT];
	recorder_close(a->rec);
	a->rec = NULL;
	app_alerts_record_failed(&a->alerts, e, a->cfg->record_path, text);
	app_tell(a, LOG_ERROR, text);
}

static void app_deliver(struct app *a, const struct event *ev)
{
	/* the tick first, on the state before this event (app_tick) */
	if (ev->type != EV_TASK && isfinite(ev->t))
		app_tick_due(a, ev->t);
	/* an event whose time closes a run: the sources' counters first, so the
	 * run is written with the counts of what it applied (a replay too) */
	if (ev->type != EV_COUNTERS && isfinite(ev->t) && session_due(&a->ses, ev->t))
		app_sources_counters(&a->src, &a->ses.counters, true);
	app_note_status(a, ev);
	if (a->rec && recorder_write(a->rec, ev) != 0 && errno != EINVAL)
		app_record_failed(a, errno);
	app_apply(a, ev);
}

static void deliver_cb(void *ctx, const struct event *ev)
{
	app_deliver(ctx, ev);
}

/* Ended runs close without a next event (the counters first, as in
 * app_deliver). */
static void app_close_settled(struct app *a)
{
	struct event ev = { .type = EV_SETTLE, .t = app_now(a) };
	if (session_due(&a->ses, ev.t))
		app_sources_counters(&a->src, &a->ses.counters, true);
	session_apply(&a->ses, &ev);
}

/* Roastop's own end of a run: recorded, so a replay ends it the same way. */
static void app_end_run(struct app *a, const struct session_run *row, double t,
			enum run_status st, const char *reason)
{
	/* never earlier than what the run has seen: no time regression */
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
 * its client died, or has no collector to send a run_end. */
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

/* An input that ended stops a headless session; one that failed stops any. */
static void app_stop_at_end(struct app *a)
{
	const struct source_end *end = app_sources_ended(&a->src);
	if (end && !a->end_ticked) { /* the last figures, for a screen that stays */
		a->end_ticked = true;
		app_tick(a);
	}
	if (end && (end->failed || (a->headless && !a->stop)))
		app_stop(a, end->reason);
}

/* At the exit, a run still going is stopped; silent for the idle timeout,
 * or when its input has ended, incomplete. */
static void app_end_runs_at_exit(struct app *a)
{
	double now = app_now(a);
	const struct source_end *end = app_sources_ended(&a->src);
	if (!a->src.recorded) /* a recording has roastop's decisions in it already */
		app_idle_check(a, now);
	session_apply(&a->ses, &(struct event){ .type = EV_ADOPT_WATCH, .t = now });
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

/* An alert that begins or changes is drawn at once; headless, said on
 * stderr as it begins. */
static void app_sources_tick(struct app *a)
{
	bool redraw = app_sources_ticked(&a->src);
	app_sources_counters(&a->src, &a->ses.counters, false);
	const char *alert = app_sources_alert(&a->src);
	if (alert && !a->alert_shown && a->headless)
		fprintf(stderr, "roastop: %s%s\n", alert,
			app_sources_hint(&a->src) ? " (the line to export is above)" : "");
	a->alert_shown = alert != NULL;
	if (redraw && a->ui)
		app_ui_draw(a);
}

static void app_signal(struct app *a)
{
	struct signalfd_siginfo si;
	while (read(a->fds[FD_SIGNAL], &si, sizeof(si)) == (ssize_t)sizeof(si))
		app_stop(a, strsignal((int)si.ssi_signo));
}

/* Still waiting for the collector to fetch the ended run? The runs settled
 * meanwhile close, so that there is something to fetch. */
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

/* The grace after run end is over: stop once the scheduler's last round is
 * in (or its deadline passed) and the collector has had its chance. */
static void app_end_after_flush(struct app *a)
{
	if ((app_sources_busy(&a->src) && clock_mono() < a->ending_deadline) ||
	    (a->srv && app_linger(a))) {
		timer_set_periodic(a->fds[FD_GRACE], 0.1, 0);
		return;
	}
	app_stop(a, "run ended");
}

/* Due at each whole second of the events' clock t. */
static void app_tick_due(struct app *a, double t)
{
	if (t < a->tick_next)
		return;
	a->tick_next = floor(fmax(t, a->t_latest)) + 1.0;
	app_tick(a);
}

static void app_record_flush(struct app *a)
{
	if (a->rec && recorder_flush(a->rec) != 0)
		app_record_failed(a, errno);
}

static void app_checkpoint(struct app *a)
{
	char err[512] = "";
	if (a->headless)
		app_output_progress(&app_snap(a, session_newest(&a->ses), false)->m);
	app_write_open(a, err, sizeof(err));
}

/* A note about the input: recorded. */
static void app_note_clock_step(struct app *a)
{
	char text[RUN_LOG_TEXT];
	if (a->src.recorded || !app_alerts_clock_step(&a->alerts, text))
		return;
	app_note(a, app_now(a), LOG_WARN, text, APP_NOTE_RECORDED);
	if (a->headless)
		fprintf(stderr, "roastop: %s\n", text);
}


static void app_ready(struct app *a, const struct pollfd *pfd)
{
	for (int i = FD_CHECKPOINT; i <= FD_IDLE; i++) /* the timers */
		if (pfd[i].revents & POLLIN)
			timer_drain(a->fds[i]);
	if (pfd[FD_SIGNAL].revents & POLLIN)
		app_signal(a);
	if (pfd[FD_DURATION].revents & POLLIN)
		app_stop(a, "--duration reached");
	if (pfd[FD_CHECKPOINT].revents & POLLIN)
		app_checkpoint(a);
	if ((pfd[FD_GRACE].revents & POLLIN) && a->ending)
		app_end_after_flush(a);
	if (pfd[FD_FLUSH].revents & POLLIN)
		app_record_flush(a);
	if (pfd[FD_IDLE].revents & POLLIN) {
		app_idle_check(a, app_now(a));
		app_close_settled(a);
	}
	if (pfd[FD_FRAME].revents & POLLIN) {
		if (a->src.recorded && a->t_latest != a->refreshed_at)
			app_refresh(a);
		app_ui_draw(a);
	}
	if (pfd[FD_UI].revents & (POLLIN | POLLHUP))
		app_ui_input(a);
}

static void app_loop(struct app *a)
{
	struct pollfd pfd[FD__COUNT + APP_SOURCES_MAX * SOURCE_MAX_FDS];
	size_t n_fds[APP_SOURCES_MAX];
	while (!a->stop) {
		for (int i = 0; i < FD__COUNT; i++)
			pfd[i] = (struct pollfd){ .fd = a->fds[i], .events = POLLIN };
		size_t n_src = app_sources_pollfds(&a->src, pfd + FD__COUNT, n_fds);
		int serve_ms = a->srv ? serve_timeout_ms(a->srv) : -1;
		int n = poll(pfd, FD__COUNT + n_src, app_sources_timeout(&a->src, serve_ms));
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "roastop: poll: %s\n", strerror(errno));
			break;
		}
		if (n > 0)
			app_ready(a, pfd);
		app_sources_dispatch(&a->src, pfd + FD__COUNT, n_fds, n >= 0);
		if (!a->src.recorded)
			app_previous_tick(&a->prev, &a->ses);
		app_stop_at_end(a);
		if (a->srv) /* at each wake: a connection freed at the limit lets a
			     * waiting one in without the epoll descriptor turning ready */
			serve_run(a->srv);
		app_sources_tick(a);
		app_note_clock_step(a);
		app_tick_due(a, app_now(a));
	}
}

/* The session's key (auth.h): datagrams' and the HTTP server's. */
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

/* A source's note is about the input; a replay's, about the replay. */
static void note_cb(void *ctx, const char *text)
{
	struct app *a = ctx;
	app_note(a, app_now(a), LOG_WARN, text, a->src.recorded ? APP_NOTE_OWN : APP_NOTE_RECORDED);
}

static bool stopping_cb(void *ctx)
{
	return ((const struct app *)ctx)->stop;
}

static bool datagram_cb(void *ctx, const char *buf, size_t len, int port, double now)
{
	return app_sources_take(&((struct app *)ctx)->src, buf, len, port, now);
}

/* /metrics: run r's snapshot, the listener's counters as they are now (a
 * client waits on them), the app's own counts. */
static void app_measure_cb(void *ctx, const struct run *r, struct openmetrics_input *in)
{
	struct app *a = ctx;
	app_sources_stats(&a->src, &a->ses.counters);
	in->ticks = &a->n_ticks;
	in->diagnoses = &a->n_diagnoses;
	in->listener = a->src.stats.listener;
	in->listener_name = a->src.stats.listener_name;
	if (!r)
		return;
	const struct app_snap *s = app_snap(a, r, true);
	in->m = &s->m;
	in->findings = &s->record;
}

/* The HTTP server (serve.h): live by default, in a replay with --serve; on
 * --serve's address, else the listener's (ROASTOP_ADDR alone finds it).
 * Its failure is said and counted, never fatal. */
static void app_open_serve(struct app *a)
{
	const struct app_config *c = a->cfg;
	char err[sizeof(a->serve_error) - 64];
	struct serve_config sc = { .ses = &a->ses, .out_dir = a->out.root,
				   .metrics_open = c->serve_metrics_open,
				   .measure = app_measure_cb, .ctx = a };
	if (c->serve_off || (!c->serve_host[0] && !app_sources_address(&a->src, &sc.addr,
									&sc.addrlen)))
		return;
	/* in a replay the key is read here, as the listener would have */
	bool ok = !a->src.recorded || c->no_auth ||
		  auth_key_setup(&a->key, c->key_file, false, err, sizeof(err)) == 0;
	if (ok && c->serve_host[0])
		ok = serve_resolve(c->serve_host, c->serve_port, &sc.addr, &sc.addrlen, err,
				   sizeof(err)) == 0;
	if (ok) {
		sc.key_hex = c->no_auth ? NULL : a->key.hex;
		a->srv = serve_open(&sc, err, sizeof(err));
	}
	if (!a->srv) {
		a->serve_failures++;
		snprintf(a->serve_error, sizeof(a->serve_error), "not serving HTTP: %s", err);
		fprintf(stderr, "roastop: %s; everything else goes on (--serve off: no server)\n",
			a->serve_error);
		app_note(a, clock_session(), LOG_WARN, a->serve_error, APP_NOTE_OWN);
		return;
	}
	a->fds[FD_SERVE] = serve_fd(a->srv);
	fprintf(stderr, "roastop: serving runs and metrics on http://%s/ (%s)\n",
		serve_address(a->srv),
		c->no_auth ? "no authentication" : "bearer token: the ROASTOP_KEY value");
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
	if (!app_sources_recorded(a->cfg) && app_open_key(a) != 0)
		return -1;
	struct source_env env = { .cfg = a->cfg, .deliver = deliver_cb, .note = note_cb,
				  .stopping = stopping_cb, .datagram = datagram_cb, .ctx = a,
				  .key = a->cfg->no_auth ? NULL : &a->key };
	if (app_sources_open(&a->src, &env) != 0)
		return -1;
	/* also when the timeout is off: ended runs close on this timer */
	if (!a->src.recorded)
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
	app_sources_close(&a->src);
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
		a->alerts.record_errno = errno;
	a->rec = NULL;
	if (!a->alerts.record_errno)
		return 0;
	fprintf(stderr, "roastop: the recording %s is incomplete (%s): exit status 1\n",
		a->cfg->record_path, strerror(a->alerts.record_errno));
	return 1;
}

/* Every run's final write, then the summary on stdout (also when a write
 * failed: the exit status says it). */
static int app_finish(struct app *a)
{
	a->finishing = true;
	session_apply(&a->ses, &(struct event){ .type = EV_CLOSE_ALL, .t = app_now(a) });
	struct metrics m = app_snap(a, session_newest(&a->ses), false)->m; /* the notes may measure */
	app_note_warnings(a, &m);
	int rc = a->finish_failed ? 1 : 0;
	if (app_print_summary(a) != 0)
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
	a->prev.root = a->out.root;
	char err[512];
	int rc = 1;
	if (app_output_open(&a->out, cfg->output_dir, err, sizeof(err)) != 0)
		fprintf(stderr, "roastop: %s\n", err);
	else if (app_open_fds(a) == 0 && app_open_sources(a) == 0) {
		app_sources_counters(&a->src, &a->ses.counters, true);
		if (cfg->headless || a->src.recorded)
			fprintf(stderr, "roastop: collecting; each run's measurement goes under %s\n",
				a->out.root);
		app_open_serve(a);
		app_open_ui(a);
		app_loop(a);
		app_sources_finish(&a->src);
		app_sources_counters(&a->src, &a->ses.counters, true);
		app_end_runs_at_exit(a);
		app_close_ui(a);
		rc = app_finish(a);
		const struct source_end *end = app_sources_ended(&a->src);
		if (end && end->failed)
			rc = 1;
	}
	app_previous_free(&a->prev);
	app_close(a);
	free(a);
	return rc;
}
