/* The loop. Sources hand events to app_deliver(), which records them and
 * applies them to the run; timers drive replay pacing, checkpoints and
 * --duration; a signalfd turns SIGINT/SIGTERM/SIGHUP into a clean stop. */
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
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "roastop/dask.h"
#include "roastop/format.h"
#include "roastop/measurement.h"
#include "roastop/metrics.h"
#include "roastop/record.h"
#include "roastop/replay.h"
#include "roastop/report_text.h"
#include "roastop/run.h"
#include "roastop/strbuf.h"
#include "roastop/udp.h"
#include "roastop/ui.h"

#define REPLAY_BATCH 8192 /* events between two looks at the signal fd */
/* A paced replay delivers every event due within this many wall seconds in
 * one wake-up: a run of 300 chunks/s then wakes roastop at most 50 times a
 * second instead of 300, each wake-up costing more than the events
 * (process CPU 2.4-2.8 % -> 0.9 % at 1,000 workers). Events keep their
 * recorded times; the dashboard redraws at most every 0.1 s anyway. */
#define REPLAY_SLACK 0.02

/* FD_FRAME: the dashboard's redraw timer; FD_UI: its keys (-1 when headless) */
enum { FD_SIGNAL, FD_CHECKPOINT, FD_DURATION, FD_PACE, FD_FRAME, FD_UDP, FD_UI, FD__COUNT };

#define RUN_END_GRACE 1.0 /* live: seconds to wait for late chunks after run end */
#define RUN_END_FLUSH_MAX 15.0 /* and at most this long for the scheduler's last round */

struct app {
	const struct app_config *cfg;
	double udp_nap_until; /* monotonic: the socket is left unpolled until then */
	struct run run;
	struct event ev; /* reused for every decoded event */
	struct replay *replay;
	struct udp *udp;
	struct dask *dask;
	struct auth_key key;
	struct recorder *rec;
	struct ui *ui; /* NULL when headless */
	bool headless; /* asked for, or no usable terminal */
	char emitter_hint[PATH_MAX + 128]; /* what the emitters need, for the screen */
	bool ending; /* run ended, grace period running */
	double ending_deadline; /* monotonic: stop by then even if a poll hangs */
	int fds[FD__COUNT];
	bool stop;
	const char *stop_reason;
	char out_dir[PATH_MAX];
	/* replay pacing: recording time rec_t0 plays at monotonic wall_t0 */
	bool pending; /* ev holds an event waiting for its time */
	bool paced;
	double rec_t0, wall_t0;
	bool replay_done;
	uint64_t checkpoints, checkpoint_errors;
	/* the listener's losses as last written to the event log */
	uint64_t lost_noted, rejected_noted;
	double loss_noted_at; /* monotonic */
};

/* "now" for the metrics: the recording's clock in a replay, else the wall. */
static double app_now(const struct app *a)
{
	if (a->cfg->replay_path)
		return a->run.any_event ? a->run.t_last : 0.0;
	return clock_real();
}

static struct itimerspec itimer_of(double first, double period)
{
	struct itimerspec it = { 0 };
	it.it_value.tv_sec = (time_t)first;
	it.it_value.tv_nsec = (long)((first - floor(first)) * 1e9);
	if (it.it_value.tv_sec == 0 && it.it_value.tv_nsec == 0)
		it.it_value.tv_nsec = 1; /* 0 would disarm */
	it.it_interval.tv_sec = (time_t)period;
	it.it_interval.tv_nsec = (long)((period - floor(period)) * 1e9);
	return it;
}

static int timer_open(double first, double period)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (first > 0) {
		struct itimerspec it = itimer_of(first, period);
		timerfd_settime(fd, 0, &it, NULL);
	}
	return fd;
}

static void timer_drain(int fd)
{
	uint64_t n;
	while (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		;
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

static void default_out_dir(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &tm);
	snprintf(buf, size, "roastop-measurements/%s", stamp);
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

/* A run's start and end from its collector: the poller looks for the route
 * the collector has just installed, and takes the scheduler's last word. */
static void app_tell_poller(struct app *a, const struct event *ev)
{
	if (a->dask && ev->type == EV_RUN_START)
		dask_wake(a->dask);
	else if (a->dask && ev->type == EV_RUN_END)
		dask_flush(a->dask);
}

static void app_deliver(struct app *a, const struct event *ev)
{
	app_note_status(a, ev);
	if (a->rec && recorder_write(a->rec, ev) != 0) {
		fprintf(stderr, "roastop: recording stopped: %s\n", strerror(errno));
		recorder_close(a->rec);
		a->rec = NULL;
	}
	run_apply(&a->run, ev);
	app_tell_poller(a, ev);
	if (!a->cfg->exit_on_run_end || !a->run.ended || a->stop || a->ending)
		return;
	if (a->replay) {
		a->stop = true;
		a->stop_reason = "run ended";
		return;
	}
	a->ending = true; /* datagrams of the last chunks may still be in flight */
	a->ending_deadline = clock_mono() + RUN_END_FLUSH_MAX;
	struct itimerspec it = itimer_of(RUN_END_GRACE, 0);
	timerfd_settime(a->fds[FD_PACE], 0, &it, NULL);
}

static void deliver_cb(void *ctx, const struct event *ev)
{
	app_deliver(ctx, ev);
}

static void pace_arm(struct app *a, double due_mono)
{
	double wait = due_mono - clock_mono();
	struct itimerspec it = itimer_of(wait > 0 ? wait : 0, 0);
	timerfd_settime(a->fds[FD_PACE], 0, &it, NULL);
}

/* Is the pending event due (within REPLAY_SLACK)? Arms the pace timer when
 * it is not. */
static bool replay_due(struct app *a)
{
	if (a->cfg->speed <= 0)
		return true;
	if (!a->paced) {
		a->paced = true;
		a->rec_t0 = a->ev.t;
		a->wall_t0 = clock_mono();
	}
	double due = a->wall_t0 + (a->ev.t - a->rec_t0) / a->cfg->speed;
	if (due <= clock_mono() + REPLAY_SLACK)
		return true;
	pace_arm(a, due);
	return false;
}

static void replay_finish(struct app *a)
{
	a->replay_done = true;
	if (a->headless && !a->stop) {
		a->stop = true;
		a->stop_reason = "end of recording";
	}
}

/* Delivers due events, at most a batch, so signals are looked at often. */
static void replay_step(struct app *a)
{
	for (int i = 0; i < REPLAY_BATCH && !a->stop; i++) {
		if (!a->pending) {
			int rc = replay_next(a->replay, &a->ev);
			if (rc < 0)
				fprintf(stderr, "roastop: replay: %s\n", strerror(errno));
			if (rc <= 0) {
				replay_finish(a);
				return;
			}
			a->pending = true;
		}
		if (!replay_due(a))
			return;
		a->pending = false;
		app_deliver(a, &a->ev);
	}
}

static void app_measure(const struct app *a, struct metrics *m)
{
	struct metrics_options opt = { .processor_prefix = a->cfg->processor_prefix };
	metrics_compute(&a->run, app_now(a), &opt, m);
}

struct counter {
	const char *name;
	uint64_t value;
};

static void add_counters(cJSON *o, const struct counter *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cJSON_AddNumberToObject(o, c[i].name, (double)c[i].value);
}

static uint64_t udp_rejected_total(const struct udp_stats *st)
{
	uint64_t total = st->json.total;
	for (int r = 0; r < UDP__COUNT; r++)
		total += st->rejected[r];
	return total;
}

static void udp_rejects(cJSON *o, const struct udp_stats *st)
{
	cJSON *rej = cJSON_AddObjectToObject(o, "rejected");
	if (!rej)
		return;
	uint64_t total = udp_rejected_total(st);
	for (int r = 0; r < UDP__COUNT; r++)
		if (st->rejected[r])
			cJSON_AddNumberToObject(rej, udp_reason_name(r), (double)st->rejected[r]);
	for (int e = DEC_OK + 1; e < DEC__COUNT; e++)
		if (st->json.by_reason[e])
			cJSON_AddNumberToObject(rej, decode_error_name(e), (double)st->json.by_reason[e]);
	cJSON_AddNumberToObject(rej, "total", (double)total);
}

/* Loss never passes silently: when the listener's lost or rejected counts
 * have grown, a line in the event log, at most once a second. */
static void app_note_loss(struct app *a)
{
	double now = clock_mono();
	if (!a->udp || now < a->loss_noted_at + 1.0)
		return;
	struct udp_stats st;
	udp_get_stats(a->udp, &st);
	uint64_t lost = st.missing + st.kernel_drops, bad = udp_rejected_total(&st);
	char text[RUN_LOG_TEXT];
	if (lost > a->lost_noted) {
		snprintf(text, sizeof(text),
			 "datagrams lost: %llu more, %llu in all (%llu sequence gaps, %llu kernel drops)",
			 (unsigned long long)(lost - a->lost_noted), (unsigned long long)lost,
			 (unsigned long long)st.missing, (unsigned long long)st.kernel_drops);
		run_note(&a->run, clock_real(), LOG_WARN, text);
	}
	if (bad > a->rejected_noted) {
		snprintf(text, sizeof(text), "datagrams rejected: %llu more, %llu in all (reasons in metrics.json)",
			 (unsigned long long)(bad - a->rejected_noted), (unsigned long long)bad);
		run_note(&a->run, clock_real(), LOG_WARN, text);
	}
	if (lost != a->lost_noted || bad != a->rejected_noted)
		a->loss_noted_at = now;
	a->lost_noted = lost;
	a->rejected_noted = bad;
}

/* Source-level counters that are not run state: written under "roastop". */
static void udp_extra(cJSON *extra, const struct udp *u)
{
	struct udp_stats st;
	udp_get_stats(u, &st);
	cJSON *o = cJSON_AddObjectToObject(extra, "udp");
	if (!o)
		return;
	cJSON_AddStringToObject(o, "listen", udp_address(u));
	const struct counter c[] = {
		{ "datagrams", st.datagrams },	       { "applied", st.applied },
		{ "bytes", st.bytes },		       { "senders", st.senders },
		{ "missing", st.missing },	       { "out_of_order", st.out_of_order },
		{ "kernel_drops", st.kernel_drops }, { "reports_incomplete", st.reports_incomplete },
	};
	add_counters(o, c, ROASTOP_ARRAY_LEN(c));
	udp_rejects(o, &st);
}

static void dask_extra(cJSON *extra, const struct dask *d)
{
	struct dask_stats st;
	dask_get_stats(d, &st);
	cJSON *o = cJSON_AddObjectToObject(extra, "scheduler");
	if (!o)
		return;
	cJSON_AddStringToObject(o, "mode", st.mode);
	const struct counter c[] = {
		{ "rounds", st.rounds },     { "overruns", st.overruns },
		{ "requests", st.requests }, { "failures", st.failures },
		{ "identity_500", st.http_500 }, { "rejected", st.rejected },
		{ "too_large", st.too_large }, { "bytes", st.bytes },
		{ "redirects", st.redirects }, { "redirects_refused", st.redirects_refused },
	};
	add_counters(o, c, ROASTOP_ARRAY_LEN(c));
	cJSON *by = cJSON_AddObjectToObject(o, "rejected_by");
	for (int e = DASK_OK + 1; by && e < DASK__COUNT; e++)
		if (st.rejected_by[e])
			cJSON_AddNumberToObject(by, dask_error_name(e), (double)st.rejected_by[e]);
}

static cJSON *app_extra(const struct app *a)
{
	cJSON *extra = cJSON_CreateObject();
	if (extra && a->udp)
		udp_extra(extra, a->udp);
	if (extra && a->dask)
		dask_extra(extra, a->dask);
	if (!extra || !a->replay)
		return extra;
	const struct reject_counts *rc = replay_rejects(a->replay);
	cJSON *rej = cJSON_AddObjectToObject(extra, "replay_rejected");
	if (!rej)
		return extra;
	cJSON_AddNumberToObject(rej, "total", (double)rc->total);
	for (int e = DEC_OK + 1; e < DEC__COUNT; e++)
		if (rc->by_reason[e])
			cJSON_AddNumberToObject(rej, decode_error_name(e), (double)rc->by_reason[e]);
	cJSON_AddNumberToObject(extra, "replay_lines", (double)replay_lines(a->replay));
	return extra;
}

static int app_write(struct app *a, const struct metrics *m, char *err, size_t errsz)
{
	cJSON *extra = app_extra(a);
	int rc = measurement_write(a->out_dir, m, &a->run, extra, err, errsz);
	cJSON_Delete(extra);
	return rc;
}

/* Headless runs print one progress line per checkpoint, for batch logs. */
static void app_progress(const struct metrics *m)
{
	char el[FMT_LEN], ch[FMT_LEN], ev[FMT_LEN], wk[FMT_LEN], rate[FMT_LEN];
	fprintf(stderr, "roastop: %s elapsed, %s chunks, %s events (%s), %s workers\n",
		format_duration(el, m->elapsed_time_seconds), format_count(ch, m->num_chunks),
		format_count(ev, m->total_events), format_num(rate, m->event_rate_elapsed_khz, "%.1f kHz"),
		format_num(wk, m->workers_now, "%.0f"));
}

static void app_checkpoint(struct app *a)
{
	char err[512];
	struct metrics m;
	app_measure(a, &m);
	if (a->headless)
		app_progress(&m);
	if (app_write(a, &m, err, sizeof(err)) == 0) {
		a->checkpoints++;
		return;
	}
	if (a->checkpoint_errors++ == 0)
		fprintf(stderr, "roastop: checkpoint failed: %s\n", err);
}

static void app_signal(struct app *a)
{
	struct signalfd_siginfo si;
	while (read(a->fds[FD_SIGNAL], &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		a->stop = true;
		a->stop_reason = strsignal((int)si.ssi_signo);
	}
}

/* nap: seconds the listener stays unpolled (<= 0: it is polled). */
static int poll_timeout(const struct app *a, double nap)
{
	if (a->replay && !a->replay_done && (!a->pending || a->cfg->speed <= 0))
		return 0; /* more to read now */
	return nap > 0 ? (int)ceil(nap * 1000) : -1;
}

/* Drains the listener; after a small drain, leaves it a while (udp.h). */
static int app_udp_drain(struct app *a)
{
	int n = udp_drain(a->udp, clock_real(), deliver_cb, a);
	double nap = n < 0 ? 0 : udp_drain_nap(a->udp, n);
	if (n < 0)
		fprintf(stderr, "roastop: udp: %s\n", strerror(errno));
	else if (nap > 0)
		a->udp_nap_until = clock_mono() + nap;
	return n;
}

/* At the stop: what is queued already is applied (the loop may have been
 * napping), in a few drains at most, so that a flood cannot hold the exit. */
static void app_udp_last_drain(struct app *a)
{
	for (int i = 0; a->udp && i < 8; i++)
		if (app_udp_drain(a) < UDP_DRAIN_MAX)
			return;
}

/* The grace after run end is over: stop, once the scheduler's last round
 * (begun after the run's end) is in, or its deadline has passed. */
static void app_end_after_flush(struct app *a)
{
	if (a->dask && dask_flushing(a->dask) && clock_mono() < a->ending_deadline) {
		struct itimerspec it = itimer_of(0.1, 0);
		timerfd_settime(a->fds[FD_PACE], 0, &it, NULL);
		return;
	}
	a->stop = true;
	a->stop_reason = "run ended";
}

/* ---- the dashboard: one call each from the loop ---- */

static void app_ui_draw(struct app *a)
{
	struct metrics m;
	struct udp_stats st;
	app_measure(a, &m);
	if (a->udp)
		udp_get_stats(a->udp, &st);
	struct ui_frame f = {
		.run = &a->run,
		.m = &m,
		.scheduler_url = a->cfg->replay_path ? NULL : a->cfg->scheduler_url,
		.udp_address = a->udp ? udp_address(a->udp) : NULL,
		.udp = a->udp ? &st : NULL,
		.replay_path = a->cfg->replay_path,
		.replay_done = a->replay_done,
		.out_dir = a->out_dir,
		.emitter_hint = a->udp ? a->emitter_hint : NULL,
		.now = app_now(a),
	};
	ui_draw(a->ui, &f);
}

static void app_ui_input(struct app *a)
{
	unsigned act = ui_input(a->ui);
	if (act & UI_QUIT) {
		a->stop = true;
		a->stop_reason = "q pressed";
		return;
	}
	if (act & UI_WRITE_NOW) {
		char err[512];
		struct metrics m;
		app_measure(a, &m);
		if (app_write(a, &m, err, sizeof(err)) == 0)
			ui_message(a->ui, "measurement written to %s", a->out_dir);
		else
			ui_message(a->ui, "could not write the measurement: %s", err);
	}
	if (act & UI_INTERVAL_CHANGED) {
		double iv = ui_interval(a->ui);
		struct itimerspec it = itimer_of(iv, iv);
		timerfd_settime(a->fds[FD_FRAME], 0, &it, NULL);
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
	if (a->udp) /* what was printed before the screen opened, again */
		ui_message(a->ui, "emitters: %s  (also under ?)", a->emitter_hint);
	double iv = ui_interval(a->ui);
	struct itimerspec it = itimer_of(iv, iv);
	timerfd_settime(a->fds[FD_FRAME], 0, &it, NULL);
	app_ui_draw(a);
}

static void app_close_ui(struct app *a)
{
	ui_close(a->ui);
	a->ui = NULL;
	a->fds[FD_UI] = -1; /* closed with the UI */
}

static void app_loop(struct app *a)
{
	struct pollfd pfd[FD__COUNT + DASK_MAX_FDS];
	while (!a->stop) {
		for (int i = 0; i < FD__COUNT; i++)
			pfd[i] = (struct pollfd){ .fd = a->fds[i], .events = POLLIN };
		double nap = a->udp_nap_until - clock_mono();
		if (nap > 0)
			pfd[FD_UDP].fd = -1; /* poll skips it */
		size_t n_dask = a->dask ? dask_pollfds(a->dask, pfd + FD__COUNT, DASK_MAX_FDS) : 0;
		int n = poll(pfd, FD__COUNT + n_dask, poll_timeout(a, nap));
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
		if (n > 0 && (pfd[FD_PACE].revents & POLLIN)) {
			timer_drain(a->fds[FD_PACE]);
			if (a->ending)
				app_end_after_flush(a);
		}
		if (n > 0 && (pfd[FD_FRAME].revents & POLLIN)) {
			timer_drain(a->fds[FD_FRAME]);
			app_ui_draw(a);
		}
		if (n > 0 && (pfd[FD_UI].revents & (POLLIN | POLLHUP)))
			app_ui_input(a);
		if (n > 0 && (pfd[FD_UDP].revents & POLLIN))
			app_udp_drain(a);
		if (n > 0 && n_dask)
			dask_dispatch(a->dask, pfd + FD__COUNT, n_dask, clock_real());
		app_note_loss(a);
		if (a->replay && !a->replay_done && !a->stop)
			replay_step(a);
	}
}

/* The listener and its key; prints what an emitter needs. */
static int app_open_udp(struct app *a)
{
	const struct app_config *c = a->cfg;
	char err[512];
	if (!c->no_auth && auth_key_setup(&a->key, c->key_file, err, sizeof(err)) != 0) {
		fprintf(stderr, "roastop: %s\n", err);
		return -1;
	}
	a->udp = udp_open(c->listen_host ? c->listen_host : "127.0.0.1", c->listen_port,
			  c->no_auth ? NULL : &a->key, c->rcvbuf, err, sizeof(err));
	if (!a->udp) {
		fprintf(stderr, "roastop: %s\n", err);
		return -1;
	}
	a->fds[FD_UDP] = udp_fd(a->udp);
	fprintf(stderr, "roastop: listening for chunk datagrams on udp %s%s\n", udp_address(a->udp),
		c->no_auth ? " (no authentication)" : "");
	if (c->no_auth)
		snprintf(a->emitter_hint, sizeof(a->emitter_hint), "export ROASTOP_ADDR=%s",
			 udp_address(a->udp));
	else
		snprintf(a->emitter_hint, sizeof(a->emitter_hint),
			 "export ROASTOP_ADDR=%s ROASTOP_KEY=$(cat %s)", udp_address(a->udp), a->key.path);
	fprintf(stderr, "roastop: emitters: %s\n", a->emitter_hint);
	return 0;
}

static int app_open_dask(struct app *a)
{
	const struct app_config *c = a->cfg;
	if (!c->scheduler_url)
		return 0;
	char err[256];
	struct dask_config dc = { .url = c->scheduler_url, .prefix = c->dashboard_prefix,
				  .interval = c->interval, .cacert = c->cacert,
				  .insecure = c->insecure, .headers = c->headers,
				  .n_headers = c->n_headers };
	a->dask = dask_open(&dc, deliver_cb, a, err, sizeof(err));
	if (!a->dask) {
		fprintf(stderr, "roastop: %s\n", err);
		return -1;
	}
	fprintf(stderr, "roastop: polling the Dask scheduler at %s every %gs\n", c->scheduler_url,
		c->interval);
	return 0;
}

static int app_open_sources(struct app *a)
{
	char err[512];
	if (a->cfg->replay_path) {
		a->replay = replay_open(a->cfg->replay_path, err, sizeof(err));
		if (!a->replay) {
			fprintf(stderr, "roastop: %s\n", err);
			return -1;
		}
	} else if (app_open_udp(a) != 0 || app_open_dask(a) != 0) {
		return -1;
	}
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
	a->fds[FD_PACE] = timer_open(0, 0);
	a->fds[FD_FRAME] = timer_open(0, 0);
	for (int i = 0; i < FD_UDP; i++) {
		if (a->fds[i] < 0) {
			fprintf(stderr, "roastop: cannot set up the event loop: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void app_close(struct app *a)
{
	if (a->rec && recorder_close(a->rec) != 0)
		fprintf(stderr, "roastop: recording incomplete: %s\n", strerror(errno));
	a->rec = NULL;
	if (a->replay)
		replay_close(a->replay);
	a->fds[FD_UDP] = -1; /* closed with the listener */
	udp_close(a->udp);
	dask_close(a->dask);
	if (a->key.path[0] && !a->cfg->key_file)
		unlink(a->key.path); /* the session key dies with the session */
	for (int i = 0; i < FD__COUNT; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
	event_free(&a->ev);
	run_destroy(&a->run);
}

/* Final write, then the summary on stdout (also when the write failed, so
 * nothing is lost: the exit status says it). */
static int app_finish(struct app *a)
{
	char err[512];
	struct metrics m;
	app_measure(a, &m);
	int rc = app_write(a, &m, err, sizeof(err));
	struct strbuf sb;
	strbuf_init(&sb);
	text_summary(&m, &a->run, &sb);
	fwrite(sb.data, 1, sb.len, stdout);
	strbuf_free(&sb);
	if (rc != 0) {
		fprintf(stderr, "roastop: could not write the measurement: %s\n", err);
		return 1;
	}
	printf("\nroastop: stopped (%s); measurement written to %s\n",
	       a->stop_reason ? a->stop_reason : "done", a->out_dir);
	fflush(stdout);
	return 0;
}

int app_main(const struct app_config *cfg)
{
	struct app *a = calloc(1, sizeof(*a));
	if (!a || run_init(&a->run) != 0) {
		fprintf(stderr, "roastop: out of memory\n");
		free(a);
		return 1;
	}
	a->cfg = cfg;
	event_init(&a->ev);
	for (int i = 0; i < FD__COUNT; i++)
		a->fds[i] = -1;
	if (cfg->output_dir && cfg->output_dir[0])
		snprintf(a->out_dir, sizeof(a->out_dir), "%s", cfg->output_dir);
	else
		default_out_dir(a->out_dir, sizeof(a->out_dir));
	int rc = 1;
	if (app_open_fds(a) == 0 && app_open_sources(a) == 0) {
		if (cfg->headless || cfg->replay_path)
			fprintf(stderr, "roastop: collecting; measurement goes to %s\n", a->out_dir);
		app_open_ui(a);
		app_loop(a);
		app_udp_last_drain(a);
		app_close_ui(a);
		rc = app_finish(a);
	}
	app_close(a);
	free(a);
	return rc;
}
