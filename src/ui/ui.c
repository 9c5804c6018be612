/* One frame: tabs, the current view, the footer, the help overlay; or the
 * too-small message. Views only read the frame. */
#include "uipriv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MSG_SECONDS 5.0

static const char *const view_names[UI_VIEW__COUNT] = { "Main",	    "Workers", "Datasets", "Slowest",
							"Sections", "Files",   "Log",	   "Runs" };

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void ui_message(struct ui *ui, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ui->msg, sizeof(ui->msg), fmt, ap);
	va_end(ap);
	ui->msg_until = mono_now() + MSG_SECONDS;
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

static void draw_tabs(struct ui *ui)
{
	int x = scr_text(ui, 0, 0, COLS, TH_TITLE, " roastop ");
	for (int v = 0; v < UI_VIEW__COUNT; v++) {
		x += scr_text(ui, 0, x, COLS - x, TH_TAB, " ");
		x += scr_printf(ui, 0, x, COLS - x, v == (int)ui->view ? TH_TAB_ACTIVE : TH_TAB, "%d %s",
				v + 1, view_names[v]);
	}
	if (ui->paused)
		scr_text(ui, 0, COLS - 8, 8, TH_WARNING, " PAUSED ");
}

/* A message longer than the line grows the footer upwards (at most 4
 * lines) so a path or a theme error is never cut. */
static void draw_message(struct ui *ui)
{
	int w = COLS - 2, len = (int)text_width(ui->msg);
	int lines = w > 0 ? (len + w - 1) / w : 1;
	lines = lines < 1 ? 1 : (lines > 4 ? 4 : lines);
	const char *p = ui->msg;
	for (int i = 0; i < lines; i++) {
		int y = LINES - lines + i;
		attrset(ui->attr[TH_TEXT]);
		mvhline(y, 0, ' ', COLS);
		scr_text(ui, y, 1, w, TH_WARNING, p);
		for (int k = 0; k < w && *p; k++) { /* skip one line's characters */
			p++;
			while ((*p & 0xC0) == 0x80)
				p++;
		}
	}
}

static void draw_footer(struct ui *ui)
{
	int y = LINES - 1;
	attrset(ui->attr[TH_TEXT]);
	mvhline(y, 0, ' ', COLS);
	if (ui->filter_edit) {
		scr_printf(ui, y, 0, COLS, TH_VALUE, " filter: %s_  (Enter keeps, Esc clears)",
			   ui->filter[ui->view]);
		return;
	}
	if (ui->msg[0] && mono_now() < ui->msg_until) {
		draw_message(ui);
		return;
	}
	scr_printf(ui, y, 0, COLS, TH_DIM,
		   COLS < 100 ? " q quit  p pause  Tab/1-8 view  s sort  / filter  t theme  +- %gs  "
				"e write  ? help"
			      : " q quit  p pause  Tab/1-8 views  s sort  / filter  t theme  "
				"+/- refresh %gs  e write now  ? help",
		   ui->interval);
}

static const char *const help_lines[] = {
	"q          quit: write the measurement and print the summary",
	"p          pause the display (collection goes on)",
	"Tab, 1-8   switch view (Shift-Tab back)",
	"Enter      in view 8 (runs): show that run; on the newest, follow it",
	"arrows     move; PgUp/PgDn page; Home/End first/last",
	"s          sort workers: memory, memory %, CPU, executing, name",
	"/          filter workers or files by name (each its own); Esc clears",
	"t          next colour theme",
	"+ / -      redraw less / more often",
	"e          write the measurement now",
	"? or F1    this help; Esc closes it",
	"Ctrl-L     repaint the screen",
	"units      sizes in KiB, MiB, GiB (1024); rates decimal (kHz, MB/s)",
};

static void draw_help(struct ui *ui, const struct ui_frame *f)
{
	int n = (int)ROASTOP_ARRAY_LEN(help_lines), w = 0, h = n + 4 + (f->emitter_hint ? 3 : 0);
	for (int i = 0; i < n; i++)
		w = (int)strlen(help_lines[i]) + 4 > w ? (int)strlen(help_lines[i]) + 4 : w;
	if (f->emitter_hint && (int)text_width(f->emitter_hint) + 4 > w)
		w = (int)text_width(f->emitter_hint) + 4;
	if (w > COLS)
		w = COLS;
	if (h > LINES)
		h = LINES;
	struct rect r = { .x = (COLS - w) / 2, .y = (LINES - h) / 2, .w = w, .h = h };
	scr_fill(ui, r);
	scr_box(ui, r, "roastop help");
	for (int i = 0; i < n && 2 + i < h - 1; i++)
		scr_text(ui, r.y + 2 + i, r.x + 2, w - 4, TH_TEXT, help_lines[i]);
	if (f->emitter_hint && n + 4 < h - 1) {
		scr_text(ui, r.y + n + 3, r.x + 2, w - 4, TH_LABEL,
			 "for the emitters, in the analysis's shell:");
		scr_text(ui, r.y + n + 4, r.x + 2, w - 4, TH_VALUE, f->emitter_hint);
	}
}

static void draw_too_small(struct ui *ui)
{
	const char *lines[3];
	char a[96], b[96];
	snprintf(a, sizeof(a), "Terminal too small: %dx%d", COLS, LINES);
	snprintf(b, sizeof(b), "roastop needs at least %dx%d", LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
	lines[0] = a;
	lines[1] = b;
	lines[2] = "enlarge it, or press q";
	for (int i = 0; i < 3; i++) {
		int w = (int)strlen(lines[i]), x = (COLS - w) / 2;
		scr_text(ui, LINES / 2 - 1 + i, x < 0 ? 0 : x, COLS, i ? TH_TEXT : TH_WARNING, lines[i]);
	}
}

static void draw_view(struct ui *ui, const struct ui_frame *f)
{
	switch (ui->view) {
	case UI_VIEW_MAIN: view_main(ui, f); break;
	case UI_VIEW_WORKERS: view_workers(ui, f); break;
	case UI_VIEW_DATASETS: view_datasets(ui, f); break;
	case UI_VIEW_SLOWEST: view_slowest(ui, f); break;
	case UI_VIEW_SECTIONS: view_sections(ui, f); break;
	case UI_VIEW_FILES: view_files(ui, f); break;
	case UI_VIEW_LOG: view_log(ui, f); break;
	case UI_VIEW_RUNS: view_runs(ui, f); break;
	case UI_VIEW__COUNT: break;
	}
}

void ui_draw(struct ui *ui, const struct ui_frame *f)
{
	if (!ui)
		return;
	ui_sync_size(ui);
	if (ui->paused && !ui->dirty)
		return;
	ui->dirty = false;
	erase();
	if (layout_too_small(COLS, LINES)) {
		draw_too_small(ui);
	} else {
		draw_tabs(ui);
		draw_view(ui, f);
		draw_footer(ui);
		if (ui->help)
			draw_help(ui, f);
	}
	refresh();
}
