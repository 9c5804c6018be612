/* Shared by the app's files only: app.c (the loop), app_sources.c (every
 * call of a source's operations), app_output.c (checkpoints, run
 * directories and `latest`, the summary), app_alerts.c (the event log's
 * notes and the header's alerts) and app_frame.c (the tick's metrics and
 * the frame). Not a public header: app.h is. The app changes the session
 * only through session_apply(): events, log lines and its own changes to a
 * row (event.h's internal kinds) alike. */
#ifndef ROASTOP_APPPRIV_H
#define ROASTOP_APPPRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>


#include "roastop/app.h"
#include "roastop/auth.h"
#include "roastop/diagnosis.h"
#include "roastop/metrics.h"
#include "roastop/session.h"
#include "roastop/source.h"
#include "roastop/ui.h"

/* FD_GRACE: the wait after a run's end (--exit-on-run-end); FD_FRAME: the
 * dashboard's redraw timer; FD_FLUSH: the recording's
 * (RECORDER_FLUSH_INTERVAL); FD_IDLE: live, looks for a run gone silent
 * (--run-idle-timeout); FD_UI: the dashboard's keys (-1 when headless);
 * FD_SERVE: the HTTP server's epoll descriptor (-1 when not serving) */
enum { FD_SIGNAL, FD_CHECKPOINT, FD_DURATION, FD_GRACE, FD_FRAME, FD_FLUSH, FD_IDLE, FD_UI,
       FD_SERVE,
       FD__COUNT };

#define APP_SOURCES_MAX 16 /* sources open at once (source.h's registry) */
/* Runs whose snapshots are kept (app_snap): every run in detail, the
 * watch and one more. */
#define APP_SNAPS_KEPT (SESSION_DETAIL_RUNS + 2)

/* A source open from the registry. */
struct app_source {
	const struct source_ops *ops;
	void *s;
	double counters_at; /* clock_mono() when its statistics were last looked at */
};

/* A run's snapshot (collect once, draw many): its metrics and findings as
 * the tick, or its close, took them, and what of: the run, its changes
 * (run.changes), "now" and the session's runs (app_frame_key). The frame,
 * the writes and /metrics read it; none computes. */
struct app_snap {
	const struct run *run;
	uint64_t changes, key[3], used;
	double now;
	bool diagnosed; /* the findings are evaluated at their first read, once */
	struct metrics m;
	struct findings all; /* the screen's: the silent run too */
	struct findings record; /* the files' and /metrics' (diagnosis_of_record) */
};

/* Every source's statistics, in the registry's order (the header's), as
 * the tick (or a /metrics scrape) took them; the listener's (the first
 * source with an address) for /metrics. */
struct app_stats {
	const char *names[APP_SOURCES_MAX];
	struct source_stats of[APP_SOURCES_MAX];
	struct ui_source ui[APP_SOURCES_MAX];
	size_t n;
	const struct source_stats *listener; /* NULL: none (a replay) */
	const char *listener_name;
};

/* Runs whose last comparable run is looked for at once (app_previous.c). */
#define APP_PREVIOUS_MAX 8
struct app_previous;
struct app_past;

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
	/* each run's last comparable run, looked for in the background */
	struct app_previous *previous;
	struct app_past *past; /* the output root's runs before this session */
	size_t previous_next;
	size_t n_written; /* runs with a measurement directory */
	bool finishing, finish_failed; /* the exit's final writes, and whether one failed */
	/* the output's health: errno of the failing checkpoints (0 while they
	 * succeed) and of the recording's stop (0 while it records), and the
	 * header's alert made of them (ui_frame.out_alert) */
	int checkpoint_errno, record_errno;
	uint64_t checkpoints_failing; /* in a row, up to now */
	char out_alert[128];
	bool alert_shown; /* a source's alert (source_watch.alert) was up at the last look */
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
	/* the runs' snapshots, and how many ticks and evaluations of the
	 * diagnosis there were (/metrics: roastop_ticks, roastop_diagnoses) */
	struct app_snap snaps[APP_SNAPS_KEPT];
	uint64_t snap_uses, n_ticks, n_diagnoses;
	struct app_stats stats;
};

/* How a line goes into the event log (app_note; docs/recording.md, "log"). */
enum app_note_how {
	APP_NOTE_RECORDED, /* about the input: an event, recorded; a replay shows it */
	APP_NOTE_DERIVED, /* derived from the events (a metric's warning): applied as an
			   * event, not recorded; a replay derives it again */
	APP_NOTE_OWN, /* about roastop's own output or the replay itself: into the
		       * newest run's log only (ev_log.own), not recorded, not counted */
};

/* app.c: the loop */
double app_now(const struct app *a);
void app_deliver(struct app *a, const struct event *ev);
void app_apply(struct app *a, const struct event *ev);
void app_tick(struct app *a);

/* app_sources.c: every source operation the app calls */
void app_tell_sources(struct app *a, const struct event *ev);
bool app_sources_busy(const struct app *a);
const struct source_end *app_sources_ended(const struct app *a);
const char *app_alert(const struct app *a);
const char *app_hint(const struct app *a);
size_t app_sources_pollfds(const struct app *a, struct pollfd *out, size_t *n_fds);
int app_sources_timeout(const struct app *a, int wait_ms);
void app_sources_dispatch(struct app *a, const struct pollfd *pfd, const size_t *n_fds,
			  bool polled);
void app_sources_finish(struct app *a);
bool app_sources_ticked(struct app *a);
void app_counters(struct app *a, bool all);
bool app_sources_take(struct app *a, const char *buf, size_t len, int port, double now);
bool app_listen_address(const struct app *a, struct sockaddr_storage *addr, socklen_t *len);
void app_stats_take(struct app *a);
int app_open_registry(struct app *a, const struct source_env *env);
bool app_wants_recorded(const struct app_config *c);
void app_sources_close(struct app *a);

/* app_output.c: measurements written */
bool app_tasks_fed(const struct app *a, const struct run *r, struct source_typed *feed,
		   bool *fed);
int app_write_open(struct app *a, char *err, size_t errsz);
void app_checkpoint(struct app *a);
void app_run_closed(void *ctx, struct session_run *row);
int app_print_summary(struct app *a);

/* app_alerts.c: the event log's notes, the header's alerts */
void app_note(struct app *a, double t, enum log_kind kind, const char *text,
	      enum app_note_how how);
void app_record_failed(struct app *a, int e);
void app_record_flush(struct app *a);
void app_write_outcome(struct app *a, int rc, int e, const char *err);
void app_note_warnings(struct app *a, const struct metrics *m);
void app_note_quiet(struct app *a, const struct run *r, const struct metrics *m);
void app_note_clock_step(struct app *a);

/* app_frame.c: the runs' snapshots, the run list's figures, the frame */
struct app_snap *app_snap_take(struct app *a, const struct run *r);
const struct app_snap *app_snap(struct app *a, const struct run *r, bool diagnosed);
void app_figures(struct app *a, const struct run *r, const struct metrics *m);
void app_refresh(struct app *a);
void app_ui_draw(struct app *a);
void app_ui_input(struct app *a);
void app_open_ui(struct app *a);
void app_close_ui(struct app *a);

/* app_previous.c: each open run's last comparable run (previous.h), looked
 * for in the background from the loop; of r: NULL while looked for (wait:
 * until found) or when none */
void app_previous_tick(struct app *a);
const struct past_run *app_previous_of(const struct app *a, const struct run *r, bool wait);
void app_previous_free(struct app *a);
/* The output root's measurements before this session (view 8's past
 * sessions), read once in a thread of its own from the first frame that
 * shows view 8; NULL until read. */
const struct history *app_past_of(struct app *a);

#endif
