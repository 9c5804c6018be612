/* One frame: tabs, the current view, the footer, the help overlay; or the
 * too-small message. Views only read the frame. */
#include "uipriv.h"

#include "roastop/clock.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MSG_SECONDS 5.0

/* The views in the order of their tabs (docs/dashboard.md, "Views"). */
const struct ui_view_def ui_views[UI_VIEW__COUNT] = {
	[UI_VIEW_MAIN] = { "Main", '1', view_main, NULL, false, false },
	[UI_VIEW_WORKERS] = { "Workers", '2', view_workers, view_workers_key, true, false },
	[UI_VIEW_DATASETS] = { "Datasets", '3', view_datasets, NULL, false, false },
	[UI_VIEW_SLOWEST] = { "Slowest", '4', view_slowest, NULL, false, false },
	[UI_VIEW_SECTIONS] = { "Sections", '5', view_sections, NULL, false, false },
	[UI_VIEW_FILES] = { "Files", '6', view_files, NULL, true, false },
	[UI_VIEW_LOG] = { "Log", '7', view_log, NULL, false, false },
	[UI_VIEW_RUNS] = { "Runs", '8', view_runs, view_runs_key, false, false },
	[UI_VIEW_RUNNING] = { "Running", '9', view_running, NULL, false, false },
	[UI_VIEW_TASKS] = { "Tasks", '0', view_tasks, NULL, false, true },
	[UI_VIEW_FINDINGS] = { "Findings", 'f', view_findings, NULL, false, false },
};

void ui_message(struct ui *ui, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ui->msg, sizeof(ui->msg), fmt, ap);
	va_end(ap);
	ui->msg_until = clock_mono() + MSG_SECONDS;
	ui->dirty = true;
}

double ui_interval(const struct ui *ui)
{
	return ui ? ui->interval : UI_DEFAULT_INTERVAL;
}

size_t ui_picked_run(const struct ui *ui, const struct session *s)
{
	if (!ui || !ui->picked)
		return 0;
	uint64_t moved = s->rows_dropped - ui->runs_dropped_picked;
	return moved < ui->picked ? ui->picked - (size_t)moved : 0; /* its row went: the newest */
}

bool ui_showing(const struct ui *ui, enum ui_view v)
{
	return ui && ui->view == v;
}

void ui_set_view(struct ui *ui, enum ui_view v)
{
	if ((unsigned)v < UI_VIEW__COUNT)
		ui->view = v;
	ui->dirty = true;
}

void ui_invalidate(struct ui *ui)
{
	clearok(curscr, TRUE);
	ui->dirty = true;
}

bool ui_view_offered(const struct ui *ui, int v)
{
	return v >= 0 && v < UI_VIEW__COUNT && (!ui_views[v].needs_stream || ui->has_tasks);
}

/* Which tabs show their name (the others their key alone): every one when
 * all fit; else the view shown, then the others from the left while they
 * fit. A name is whole or absent, never cut. Returns the columns used. */
static int tabs_named(const struct ui *ui, bool named[UI_VIEW__COUNT])
{
	int w = 0;
	for (int v = 0; v < UI_VIEW__COUNT; v++) {
		named[v] = false;
		if (ui_view_offered(ui, v))
			w += 2; /* a space and the key */
	}
	named[ui->view] = true;
	w += 1 + (int)strlen(ui_views[ui->view].name);
	for (int v = 0; v < UI_VIEW__COUNT; v++) {
		if (!ui_view_offered(ui, v) || named[v])
			continue;
		int extra = 1 + (int)strlen(ui_views[v].name);
		if (w + extra > COLS)
			break;
		named[v] = true;
		w += extra;
	}
	return w;
}

static void draw_tabs(struct ui *ui)
{
	bool named[UI_VIEW__COUNT];
	int used = tabs_named(ui, named);
	/* the name goes first when every tab still fits beside it */
	int x = used + 9 <= COLS ? scr_text(ui, 0, 0, COLS, TH_TITLE, " roastop ") : 0;
	for (int v = 0; v < UI_VIEW__COUNT; v++) {
		if (!ui_view_offered(ui, v))
			continue;
		bool shown = v == (int)ui->view;
		x += scr_text(ui, 0, x, COLS - x, TH_TAB, " ");
		x += scr_printf(ui, 0, x, COLS - x, shown ? TH_TAB_ACTIVE : TH_TAB, "%c%s%s", ui_views[v].key,
				named[v] ? " " : "", named[v] ? ui_views[v].name : "");
	}
	if (ui->paused)
		scr_text(ui, 0, COLS - 8, 8, TH_WARNING, " PAUSED ");
}

const char *ui_row_end(const char *p, int w)
{
	const char *end = p, *space = NULL;
	for (int k = 0; k < w && *end; k++) {
		end++;
		while ((*end & 0xC0) == 0x80)
			end++;
		if (*end == ' ')
			space = end + 1;
	}
	return *end && space ? space : end;
}

/* A message longer than the line grows the footer upwards (at most 4
 * lines) so a path or a theme error is never cut. */
static void draw_message(struct ui *ui)
{
	const char *rows[5] = { ui->msg };
	int w = COLS - 2, lines = 0;
	while (lines < 4 && *rows[lines]) {
		rows[lines + 1] = ui_row_end(rows[lines], w);
		lines++;
	}
	lines = lines < 1 ? 1 : lines;
	for (int i = 0; i < lines; i++) {
		int y = LINES - lines + i;
		char row[UI_MSG_LEN];
		snprintf(row, sizeof(row), "%.*s", (int)(rows[i + 1] - rows[i]), rows[i]);
		attrset(ui->attr[TH_TEXT]);
		mvhline(y, 0, ' ', COLS);
		scr_text(ui, y, 1, w, TH_WARNING, row);
	}
}

/* The key hints, longest first: the first that fits is shown whole. With
 * a listener, the way to the emitter line is kept to the last. */
static void draw_hints(struct ui *ui, const struct ui_frame *f, int y)
{
	char v[5][160];
	const char *help = f->emitter_hint ? "? help, emitter line" : "? help";
	const char *keys = ui->has_tasks ? "1-9/0/f" : "1-9/f"; /* the views' keys that exist */
	snprintf(v[0], sizeof(v[0]), " q quit  p pause  Tab/%s views  s sort  / filter  t theme  "
		 "+/- refresh %gs  e write now  %s", keys, ui->interval, help);
	snprintf(v[1], sizeof(v[1]), " q quit  p pause  %s views  s sort  / filter  t theme  e write  %s",
		 keys, help);
	snprintf(v[2], sizeof(v[2]), " q quit  p pause  %s views  / filter  e write  %s", keys, help);
	snprintf(v[3], sizeof(v[3]), " q quit  %s views  %s", keys,
		 f->emitter_hint ? "? for the emitter line" : "? help");
	snprintf(v[4], sizeof(v[4]), " q quit  ? help");
	int i = 0;
	while (i < 4 && (int)text_width(v[i]) > COLS)
		i++;
	scr_text(ui, y, 0, COLS, TH_DIM, v[i]);
}

static void draw_footer(struct ui *ui, const struct ui_frame *f)
{
	int y = LINES - 1;
	attrset(ui->attr[TH_TEXT]);
	mvhline(y, 0, ' ', COLS);
	if (ui->filter_edit) {
		scr_printf(ui, y, 0, COLS, TH_VALUE, " filter: %s_  (Enter keeps, Esc clears)",
			   ui->filter[ui->view]);
		return;
	}
	if (ui->msg[0] && clock_mono() < ui->msg_until) {
		draw_message(ui);
		return;
	}
	draw_hints(ui, f, y);
}

static const char *const help_lines[] = {
	"q          quit: write the measurement and print the summary",
	"p          pause the display (collection goes on)",
	"Tab, 1-9   switch view (Shift-Tab back); 9: the chunks running",
	"0, f       the task stream (when there is one); the findings",
	"Enter      view 2: one worker's history; view 8: show that run",
	"m          view 8: mark a run to compare with the selected one",
	"arrows     move; PgUp/PgDn page; Home/End first/last",
	"s          sort workers: memory, memory %, CPU, executing, name",
	"/          filter workers or files by name (each its own); Esc clears",
	"t          next colour theme",
	"+ / -      redraw less / more often",
	"e          write the measurement now",
	"w          write the emitter line to a file (mode 0600)",
	"? or F1    this help; Esc closes it",
	"Ctrl-L     repaint the screen",
	"units      sizes in KiB, MiB, GiB (1024); rates decimal (kHz, MB/s)",
};

/* The emitter line, at the left edge of rows of its own with nothing else
 * on them, so that selecting the rows copies commands a shell takes as
 * they are (layout_export_rows); returns the next free row. */
static int draw_export(struct ui *ui, const char *hint, int y)
{
	static char rows[2][LAYOUT_EXPORT_LEN];
	int n = layout_export_rows(hint, COLS, rows);
	bool wide = false;
	scr_text(ui, y++, 1, COLS - 1, TH_LABEL, "for the emitters, in the analysis's shell:");
	for (int i = 0; i < n; i++) {
		wide |= (int)text_width(rows[i]) > COLS;
		for (const char *p = rows[i]; *p;) { /* longer than the screen: over rows */
			scr_text(ui, y++, 0, COLS, TH_VALUE, p);
			for (int k = 0; k < COLS && *p; k++) {
				p++;
				while ((*p & 0xC0) == 0x80)
					p++;
			}
		}
	}
	scr_text(ui, y++, 1, COLS - 1, wide ? TH_WARNING : TH_DIM,
		 wide ? "wider than the terminal: w writes it to a file" : "w writes it to a file");
	return y + 1;
}

/* A page of its own: the emitter line first (what a new user comes for),
 * then the keys, as many as the rows allow. */
static void draw_help(struct ui *ui, const struct ui_frame *f)
{
	scr_fill(ui, (struct rect){ 0, 1, COLS, LINES - 2 });
	int y = 1, n = (int)ROASTOP_ARRAY_LEN(help_lines);
	scr_text(ui, y++, 1, COLS - 1, TH_TITLE, "roastop help (Esc closes)");
	y++;
	if (f->emitter_hint)
		y = draw_export(ui, f->emitter_hint, y);
	for (int i = 0; i < n && y < LINES - 1; i++)
		scr_text(ui, y++, 1, COLS - 1, TH_TEXT, help_lines[i]);
}

static void draw_too_small(struct ui *ui)
{
	char a[96], b[96];
	snprintf(a, sizeof(a), "Terminal too small: %dx%d", COLS, LINES);
	snprintf(b, sizeof(b), "roastop needs at least %dx%d", LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
	const char *lines[3] = { a, b, "enlarge it, or press q" };
	for (int i = 0; i < 3; i++) {
		int w = (int)strlen(lines[i]), x = (COLS - w) / 2;
		scr_text(ui, LINES / 2 - 1 + i, x < 0 ? 0 : x, COLS, i ? TH_TEXT : TH_WARNING, lines[i]);
	}
}

void ui_draw(struct ui *ui, const struct ui_frame *f)
{
	if (!ui)
		return;
	ui_sync_size(ui);
	ui->has_tasks = f->tasks != NULL;
	if (ui->paused && !ui->dirty)
		return;
	ui->dirty = false;
	erase();
	if (layout_too_small(COLS, LINES)) {
		draw_too_small(ui);
	} else {
		draw_tabs(ui);
		ui_views[ui->view].draw(ui, f);
		if (ui->help) /* under the footer: a message over rows stays whole */
			draw_help(ui, f);
		draw_footer(ui, f);
	}
	refresh();
}
