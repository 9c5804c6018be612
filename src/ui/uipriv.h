/* Shared by the files of src/ui only: the UI's state and the drawing
 * primitives (screen.c) the views use. Not a public header. */
#ifndef ROASTOP_UIPRIV_H
#define ROASTOP_UIPRIV_H

#include <curses.h>
#include <limits.h>

#include "roastop/layout.h"
#include "roastop/theme.h"
#include "roastop/ui.h"

#define UI_GRAD_STEPS 8
#define UI_MAX_THEMES 32
#define UI_FILTER_LEN 64
#define UI_MSG_LEN 320

struct wrow {
	double key;
	const char *name;
	size_t idx;
	bool present;
};

enum worker_sort { WSORT_MEMORY = 0, WSORT_MEMPCT, WSORT_CPU, WSORT_EXECUTING, WSORT_NAME, WSORT__COUNT };
extern const char *const ui_wsort_names[WSORT__COUNT]; /* views/workers.c */

struct ui {
	struct ui_config cfg;
	SCREEN *scr;
	FILE *in, *out;
	bool own_in; /* opened /dev/tty */
	bool hungup; /* the terminal's input is gone: stop watching it */
	int saved_stderr; /* the real stderr while messages are held back (-1: not) */
	FILE *held; /* stderr's messages while the screen is up */
	int epfd, sigfd, infd;
	bool color, ascii;
	int ncolors;
	struct theme theme;
	struct theme_dirs dirs;
	char config_dir[PATH_MAX + 32], source_dir[PATH_MAX + 32];
	char theme_names[UI_MAX_THEMES][THEME_NAME_LEN];
	size_t n_themes;
	attr_t attr[TH__COUNT]; /* attributes incl. colour pair per element */
	attr_t grad[UI_GRAD_STEPS];
	enum ui_view view;
	bool paused, help, dirty;
	double interval;
	int sel[UI_VIEW__COUNT], top[UI_VIEW__COUNT]; /* selection and scroll per view */
	int rows_shown[UI_VIEW__COUNT]; /* body rows of the last draw, for paging */
	int n_rows[UI_VIEW__COUNT]; /* table rows of the last draw */
	enum worker_sort wsort;
	size_t picked; /* ui_picked_run */
	/* the session's rows_dropped when view 8 was last drawn, and when a run
	 * was picked: a row dropped since moves the picked one up */
	uint64_t runs_dropped_drawn, runs_dropped_picked;
	int runs_session; /* view 8's rows of this session (the past sessions' follow) */
	bool runs_entered; /* view 8 just opened: select the run shown */
	/* view 8's m: the run compared with the selected one (its row index +
	 * 1 then; 0: none), and the session's rows_dropped when it was marked */
	size_t marked;
	uint64_t runs_dropped_marked;
	/* view 2's Enter: one worker's history, kept by its address so that it
	 * stays on that worker as the rows re-sort ("": the selected row's) */
	bool worker_open;
	char worker_key[RUN_KEY_MAX + 1];
	bool filter_edit;
	char filter[UI_VIEW__COUNT][UI_FILTER_LEN]; /* each view its own: typing in one keeps the other's */
	char msg[UI_MSG_LEN];
	double msg_until; /* monotonic seconds */
	/* scratch, grown as needed and kept between frames */
	double *vals;
	uint32_t *cells;
	size_t scratch;
	size_t *idx; /* table rows -> map entries, filtered and sorted */
	size_t idx_cap;
	struct wrow *wrows; /* workers view: sort keys */
	size_t wrows_cap;
	struct topk_item slow[TOPK_CAP];
	const struct inflight_chunk *running[INFLIGHT_MAX]; /* view 9's rows, oldest first */
	size_t n_running;
	bool has_tasks; /* the last frame had a task stream: view 10 is offered */
};

/* A view (ui.c's table ui_views holds them all): key opens it; key_fn
 * takes the keys of its own (true: taken); filtered: / types a name
 * filter in it (elsewhere / opens the workers' one); needs_stream: offered
 * only with a task stream. */
struct ui_view_def {
	const char *name;
	int key;
	void (*draw)(struct ui *ui, const struct ui_frame *f);
	bool (*key_fn)(struct ui *ui, int ch);
	bool filtered, needs_stream;
};
extern const struct ui_view_def ui_views[UI_VIEW__COUNT];

/* ui.c: whether view v has a tab (the task view only with a stream) */
bool ui_view_offered(const struct ui *ui, int v);

/* keys.c */
bool ui_sync_size(struct ui *ui);
/* opens view v, or the next one offered after it; closes the help */
void ui_open_view(struct ui *ui, int v);

/* screen.c */
int ui_scratch(struct ui *ui, size_t cells);
void scr_fill(struct ui *ui, struct rect r);
/* Draws at most maxw columns of s (UTF-8) at (y, x); returns columns used. */
int scr_text(struct ui *ui, int y, int x, int maxw, enum theme_elem e, const char *s);
int scr_printf(struct ui *ui, int y, int x, int maxw, enum theme_elem e, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void scr_box(struct ui *ui, struct rect r, const char *title);
/* code points in w columns at (y, x) with attribute a */
void scr_cells(struct ui *ui, int y, int x, const uint32_t *cp, int w, attr_t a);
/* a graph area: row 0 at the top, coloured along the gradient from the bottom */
void scr_graph(struct ui *ui, int y, int x, int w, int h, const uint32_t *cells);
size_t text_width(const char *s); /* code points */
#define UI_SCALE_W 8 /* a graph's scale labels at its left, with a space */
/* v (format_axis with unit) right-aligned in the UI_SCALE_W - 1 columns at (y, x) */
void scr_scale(struct ui *ui, int y, int x, enum theme_elem e, double v, const char *unit);
/* a dashed line through the empty cells of a w x h graph at v of vmax */
void scr_mark(struct ui *ui, uint32_t *cells, int w, int h, double v, double vmax);
void ui_apply_theme(struct ui *ui);

/* views */
void view_main(struct ui *ui, const struct ui_frame *f);
void view_workers(struct ui *ui, const struct ui_frame *f);
void view_datasets(struct ui *ui, const struct ui_frame *f);
void view_slowest(struct ui *ui, const struct ui_frame *f);
void view_sections(struct ui *ui, const struct ui_frame *f);
void view_files(struct ui *ui, const struct ui_frame *f);
void view_log(struct ui *ui, const struct ui_frame *f);
void view_runs(struct ui *ui, const struct ui_frame *f);
void view_running(struct ui *ui, const struct ui_frame *f);
void view_tasks(struct ui *ui, const struct ui_frame *f);
void view_findings(struct ui *ui, const struct ui_frame *f);
void view_worker_history(struct ui *ui, const struct ui_frame *f);
bool view_workers_key(struct ui *ui, int ch);
bool view_runs_key(struct ui *ui, int ch);

/* tables (views/table.c): a column of a table view */
struct table_col {
	const char *title;
	int width; /* 0 = take the rest */
	bool right; /* right-aligned (numbers) */
	bool tail; /* too long: keep the end (file names), not the start */
	bool optional; /* dropped when the flexible column would be too narrow */
};
/* Header line, then rows [top, top + body rows) through row_fn, with the
 * selected row highlighted; keeps sel and top in range. */
#define FMT_CELL 192
#define TABLE_MAX_COLS 12
typedef void (*table_row_fn)(struct ui *ui, const struct ui_frame *f, int row, char cells[][FMT_CELL],
			     enum theme_elem *elem);
void table_draw(struct ui *ui, const struct ui_frame *f, struct rect body, const char *title,
		const struct table_col *cols, int ncols, int nrows, table_row_fn fn);
/* A table view's body: the screen under the tabs (ui_draw draws no view on
 * a screen too small for it, layout_too_small). */
struct rect table_body(void);

/* The start of the next row of text that starts at p, rows at most w
 * characters: after the last space that fits, so words stay whole; where
 * the width falls when there is none (a long path). (ui.c) */
const char *ui_row_end(const char *p, int w);

#endif
