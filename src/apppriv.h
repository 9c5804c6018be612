/* The app's loop: app.c (the loop, the events' delivery, the notes) and
 * app_frame.c (the runs' snapshots and their readers: the writes, the
 * frame). Its parts own their state and never take struct app: the source
 * registry, the alerts, the output, the runs before (app_*.h). The app
 * changes the session only through session_apply(). */
#ifndef ROASTOP_APPPRIV_H
#define ROASTOP_APPPRIV_H

#include "roastop/app.h"
#include "roastop/app_alerts.h"
#include "roastop/app_output.h"
#include "roastop/app_previous.h"
#include "roastop/app_sources.h"
#include "roastop/auth.h"
#include "roastop/diagnosis.h"
#include "roastop/session.h"
#include "roastop/ui.h"

/* FD_GRACE: the wait after a run's end (--exit-on-run-end); FD_FRAME: the
 * dashboard's redraw timer; FD_FLUSH: the recording's
 * (RECORDER_FLUSH_INTERVAL); FD_IDLE: live, looks for a run gone silent
 * (--run-idle-timeout); FD_UI: the dashboard's keys (-1 when headless);
 * FD_SERVE: the HTTP server's epoll descriptor (-1 when not serving) */
enum { FD_SIGNAL, FD_CHECKPOINT, FD_DURATION, FD_GRACE, FD_FRAME, FD_FLUSH, FD_IDLE, FD_UI,
       FD_SERVE,
       FD__COUNT };

/* Runs whose snapshots are kept: those in detail, the watch and one more. */
#define APP_SNAPS_KEPT (SESSION_DETAIL_RUNS + 2)

/* A run's snapshot (collect once, draw many): its metrics and findings as
 * the tick, or its close, took them, and what of: the run, its changes,
 * "now" and the session's runs (app_frame_key). */
struct app_snap {
	const struct run *run;
	uint64_t changes, key, used;
	double now;
	bool diagnosed; /* the findings are evaluated at their first read, once */
	struct metrics m;
	struct findings all; /* the screen's: the silent run too */
	struct findings record; /* the files' and /metrics' (diagnosis_of_record) */
};

struct app {
	const struct app_config *cfg;
	struct session ses;
	double t_latest; /* the latest event time delivered: a recorded session's "now" */
	struct app_sources src;
	struct app_alerts alerts;
	struct app_output out;
	struct app_previous prev;
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
	bool finishing, finish_failed; /* the exit's final writes, and whether one failed */
	bool alert_shown; /* a source's alert was up at the last look */
	/* the tick (app_tick): the events' clock's next whole second, and
	 * whether the input's end has had its tick */
	double tick_next;
	bool end_ticked;
	double refreshed_at; /* t_latest at the view's last refresh (app_refresh) */
	/* the runs' snapshots, and how many ticks and evaluations of the
	 * diagnosis there were (/metrics: roastop_ticks, roastop_diagnoses) */
	struct app_snap snaps[APP_SNAPS_KEPT];
	uint64_t snap_uses, n_ticks, n_diagnoses;
};

/* app.c */
double app_now(const struct app *a);
void app_stop(struct app *a, const char *reason);
void app_write_outcome(struct app *a, int rc, int e, const char *err);

/* app_frame.c */
struct app_snap *app_snap_take(struct app *a, const struct run *r);
const struct app_snap *app_snap(struct app *a, const struct run *r, bool diagnosed);
void app_refresh(struct app *a);
int app_write_open(struct app *a, char *err, size_t errsz);
void app_run_closed(void *ctx, struct session_run *row);
int app_print_summary(struct app *a);
void app_ui_draw(struct app *a);
void app_ui_input(struct app *a);
void app_open_ui(struct app *a);
void app_close_ui(struct app *a);

#endif
