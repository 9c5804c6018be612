/* The live dashboard (ncursesw). The app owns the loop: it polls ui_fd()
 * (keys and terminal resizes), calls ui_input() when it is readable and
 * ui_draw() on its frame timer. The UI only reads: every number comes from
 * the struct metrics and the run in the frame. */
#ifndef ROASTOP_UI_H
#define ROASTOP_UI_H

#include <stdio.h>

#include "roastop/diagnosis.h"
#include "roastop/metrics.h"
#include "roastop/run.h"
#include "roastop/session.h"
#include "roastop/source.h"
#include "roastop/tasks.h"

struct history; /* history.h: the output root's measurements */

#define UI_DEFAULT_INTERVAL 1.0

enum ui_view {
	UI_VIEW_MAIN = 0,
	UI_VIEW_WORKERS,
	UI_VIEW_DATASETS,
	UI_VIEW_SLOWEST,
	UI_VIEW_SECTIONS,
	UI_VIEW_FILES,
	UI_VIEW_LOG,
	UI_VIEW_RUNS,
	UI_VIEW_RUNNING, /* chunks in flight */
	UI_VIEW_TASKS, /* the Dask task stream (key 0; only with the stream) */
	UI_VIEW_FINDINGS, /* what the run's numbers mean (key f) */
	UI_VIEW__COUNT
};

struct ui_config {
	const char *theme; /* name or path; NULL = "default" */
	bool no_color; /* --no-color or NO_COLOR set */
	bool ascii; /* --ascii; also forced when the locale is not UTF-8 */
	double interval; /* seconds between redraws; 0 = UI_DEFAULT_INTERVAL */
	const char *theme_install_dir; /* NULL = the compiled-in $(PREFIX) one */
	/* Tests and the benchmark: draw on these instead of the terminal.
	 * NULL = stdout, and /dev/tty (else stdin) for keys. */
	FILE *out, *in;
	int cols, rows; /* with out given: the screen size to assume */
};

/* A source as the header shows it (main_header.c): its statistics, by
 * their typed fields (source.h), and what it reads. */
struct ui_source {
	const char *name;
	const struct source_stats *st;
	const char *target; /* what it reads (source_ops.target), or NULL */
};

/* One frame's inputs; pointers are only read during ui_draw. */
struct ui_frame {
	const struct run *run; /* the run shown: picked in the run list, else the newest */
	const struct session *session; /* its runs, for the run list; may be NULL */
	const struct metrics *m;
	const struct ui_source *sources; /* every source open, in the registry's order */
	size_t n_sources;
	const char *out_dir; /* where the measurement goes */
	const char *out_alert; /* "checkpoint failed: ..." while the output fails, else NULL */
	const char *key_alert; /* "all 33 datagrams rejected: wrong key ..." or NULL */
	/* "scheduler runs 12 tasks, no chunk arrived: ..." and its 80-column
	 * form, or NULL (the first) */
	const char *quiet_alert[2];
	const char *emitter_hint; /* "export ROASTOP_ADDR=... ROASTOP_KEY=..." or NULL */
	double now; /* the metrics clock */
	const struct tasks *tasks; /* the shown run's task model; NULL: no stream, no task */
	const char *tasks_state; /* the stream's state ("connected", ...) */
	const struct findings *findings; /* the shown run's (diagnosis.h); NULL: not evaluated */
	/* the shown run's last comparable run (previous.h): its event rate, and
	 * the ETA from its duration shown until the run's own is known;
	 * invalid: none */
	optnum previous_rate_khz, previous_eta;
	/* the output root's runs before this session, newest first (view 8);
	 * NULL: not read (yet, or a replay) */
	const struct history *past;
};

/* What the app must do after input (bits). */
enum ui_action {
	UI_NONE = 0,
	UI_REDRAW = 1, /* draw now */
	UI_QUIT = 2,
	UI_WRITE_NOW = 4, /* write the measurement now */
	UI_INTERVAL_CHANGED = 8, /* re-arm the frame timer with ui_interval() */
	UI_WRITE_EMITTER = 16, /* write the emitter line to its file (w) */
};

/* NULL with a one-line reason in err when there is no usable terminal
 * (no cursor addressing, not a tty, newterm failing): the app then runs
 * headless. A bad theme is not fatal: the message is kept and shown. */
struct ui *ui_open(const struct ui_config *cfg, char *err, size_t errsz);
/* Readable when a key or a resize is waiting. */
int ui_fd(const struct ui *ui);
/* Reads every waiting key; returns enum ui_action bits. Never blocks. */
unsigned ui_input(struct ui *ui);
void ui_draw(struct ui *ui, const struct ui_frame *f);
double ui_interval(const struct ui *ui);
/* The run picked in the run list (view 8): its row's index + 1 in s now
 * (rows dropped since move it up), or 0 to follow the newest run. */
size_t ui_picked_run(const struct ui *ui, const struct session *s);
/* Whether view v is the one shown (false without a screen). */
bool ui_showing(const struct ui *ui, enum ui_view v);
/* A line shown in the footer for a few seconds ("measurement written to ..."). */
void ui_message(struct ui *ui, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For tests and the benchmark. */
void ui_set_view(struct ui *ui, enum ui_view v);
/* The next ui_draw repaints every cell, as Ctrl-L does. */
void ui_invalidate(struct ui *ui);
/* Restores the terminal. NULL is fine. */
void ui_close(struct ui *ui);

#endif
