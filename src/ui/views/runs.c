/* View 8: the session's runs, a row each (session.h), newest last; Enter
 * shows the selected one in the other views; m marks one, and the marked
 * run and the selected one are compared under the list. Below them, the
 * past sessions' runs in the output root (history.h), newest first. */
#include "../uipriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"
#include "roastop/history.h"
#include "roastop/metrics.h"

/* The comparison's rows: a border, the heading, the figures, a border. */
#define RUNS_COMPARE_ROWS 8

/* The marked run's row now (rows dropped since move it up), or -1. */
static int runs_marked(const struct ui *ui, const struct session *s)
{
	uint64_t moved = s ? s->rows_dropped - ui->runs_dropped_marked : 0;
	if (!s || !ui->marked || moved >= ui->marked || ui->marked - 1 - moved >= s->n_rows)
		return -1;
	return (int)(ui->marked - 1 - moved);
}

enum runs_kind { RK_DURATION, RK_COUNT, RK_RATE };

static const char *runs_format(char buf[FMT_LEN], enum runs_kind k, optnum v)
{
	if (k == RK_DURATION)
		return format_duration(buf, v);
	return k == RK_COUNT ? format_count(buf, v) : format_rate(buf, v, 1.0, "Hz");
}

/* One figure of the two rows (the figures the app took from each run's
 * metrics) and the change from A to B. */
static void runs_compare_row(struct ui *ui, struct rect r, int y, const char *label,
			     enum runs_kind k, optnum a, optnum b)
{
	char va[FMT_LEN], vb[FMT_LEN], mag[FMT_LEN], ch[FORMAT_CHANGE_LEN];
	optnum delta, pct;
	metrics_change(a, b, &delta, &pct);
	runs_format(mag, k, optnum_of(fabs(delta.value)));
	scr_printf(ui, y, r.x + 2, r.w - 4, TH_TEXT, "%-12s %12s %12s  %s", label,
		   runs_format(va, k, a), runs_format(vb, k, b), format_change(ch, delta, mag, pct));
}

static void runs_compare(struct ui *ui, const struct ui_frame *f, struct rect r, int a, int b)
{
	char title[96];
	snprintf(title, sizeof(title), "compare: A run %d (marked, m) with B run %d (selected)",
		 a + 1, b + 1);
	scr_box(ui, r, title);
	if (a == b) {
		scr_text(ui, r.y + 1, r.x + 2, r.w - 4, TH_DIM, "select another run to compare");
		return;
	}
	const struct session_figures *x = &f->session->rows[a].fig, *y = &f->session->rows[b].fig;
	scr_printf(ui, r.y + 1, r.x + 2, r.w - 4, TH_LABEL, "%-12s %12s %12s  %s", "", "A", "B",
		   "change (B - A)");
	runs_compare_row(ui, r, r.y + 2, "duration", RK_DURATION, x->elapsed, y->elapsed);
	runs_compare_row(ui, r, r.y + 3, "chunks", RK_COUNT, x->chunks, y->chunks);
	runs_compare_row(ui, r, r.y + 4, "failed", RK_COUNT, x->failed, y->failed);
	runs_compare_row(ui, r, r.y + 5, "events", RK_COUNT, x->events, y->events);
	runs_compare_row(ui, r, r.y + 6, "event rate", RK_RATE, x->event_rate_hz, y->event_rate_hz);
}

/* A past session's run: its directory's name (its start and run name) as
 * NAME, its date (MM-DD) as START. */
static void runs_past_row(const struct past_run *p, char c[][FMT_CELL], enum theme_elem *elem)
{
	char a[FMT_LEN];
	snprintf(c[0], FMT_CELL, "-");
	snprintf(c[1], FMT_CELL, "%.*s", FMT_CELL - 1, p->dir);
	snprintf(c[2], FMT_CELL, "%.5s", p->dir + (strlen(p->dir) > 5 ? 5 : 0));
	snprintf(c[3], FMT_CELL, "%s", format_duration(a, p->elapsed));
	snprintf(c[4], FMT_CELL, "%s", p->status[0] ? p->status : "n/a");
	snprintf(c[5], FMT_CELL, "%s", format_count(a, p->chunks));
	snprintf(c[6], FMT_CELL, "%s", format_count(a, p->events));
	snprintf(c[7], FMT_CELL, "%s",
		 format_rate(a, p->rate_khz.valid ? optnum_of(1e3 * p->rate_khz.value) : p->rate_khz,
			     1.0, "Hz"));
	*elem = TH_DIM;
}

static void runs_row(struct ui *ui, const struct ui_frame *f, int i, char c[][FMT_CELL],
		     enum theme_elem *elem)
{
	size_t n = f->session ? f->session->n_rows : 0;
	if ((size_t)i >= n) {
		runs_past_row(&f->past->runs[(size_t)i - n], c, elem);
		return;
	}
	const struct session_run *row = &f->session->rows[i];
	const struct session_figures *g = &row->fig;
	char a[FMT_LEN];
	snprintf(c[0], FMT_CELL, "%s%s%d", i == runs_marked(ui, f->session) ? "m" : "",
		 row->run && row->run == f->run ? ">" : "", i + 1);
	snprintf(c[1], FMT_CELL, "%s", session_run_label(row));
	snprintf(c[2], FMT_CELL, "%s", format_clock(a, g->t_start));
	snprintf(c[3], FMT_CELL, "%s", format_duration(a, g->elapsed));
	snprintf(c[4], FMT_CELL, "%s%s", run_status_name(row->status), row->run ? "" : "*");
	snprintf(c[5], FMT_CELL, "%s", format_count(a, g->chunks));
	snprintf(c[6], FMT_CELL, "%s", format_count(a, g->events));
	snprintf(c[7], FMT_CELL, "%s", format_rate(a, g->event_rate_hz, 1.0, "Hz"));
	if (row->status == RUN_FAILED)
		*elem = TH_CRITICAL;
	else if (row->status == RUN_INCOMPLETE || row->status == RUN_STOPPED)
		*elem = TH_WARNING;
}

void view_runs(struct ui *ui, const struct ui_frame *f)
{
	static const struct table_col cols[] = {
		{ "#", 4, true, false, false },	       { "NAME", 0, false, false, false },
		{ "START", 8, false, false, true },    { "DURATION", 8, true, false, false },
		{ "STATUS", 10, false, false, false }, { "CHUNKS", 7, true, false, false },
		{ "EVENTS", 11, true, false, false },  { "RATE", 9, true, false, false },
	};
	struct rect body = table_body();
	size_t n = f->session ? f->session->n_rows : 0, past = f->past ? f->past->n : 0;
	ui->runs_dropped_drawn = f->session ? f->session->rows_dropped : 0;
	ui->runs_session = (int)n;
	for (size_t i = 0; ui->runs_entered && i < n; i++)
		if (f->session->rows[i].run == f->run)
			ui->sel[UI_VIEW_RUNS] = (int)i; /* the list opens on the run shown */
	ui->runs_entered = false;
	char title[160];
	snprintf(title, sizeof(title), "runs: %zu (Enter shows one; m compares; * = summary only, "
		 "over %d kept); - = past session: %zu", n, SESSION_DETAIL_RUNS, past);
	int marked = runs_marked(ui, f->session);
	bool compare = marked >= 0 && body.h >= RUNS_COMPARE_ROWS + 4;
	if (compare)
		body.h -= RUNS_COMPARE_ROWS;
	table_draw(ui, f, body, title, cols, (int)ROASTOP_ARRAY_LEN(cols), (int)(n + past),
		   runs_row);
	int sel = ui->sel[UI_VIEW_RUNS];
	if (compare && sel >= 0 && (size_t)sel < n)
		runs_compare(ui, f,
			     (struct rect){ body.x, body.y + body.h, body.w, RUNS_COMPARE_ROWS },
			     marked, sel);
}

/* Enter: the selection becomes the run the views show; the newest row
 * means following whichever run is newest. m: the selected run is marked
 * to compare with the one then selected (m on it again unmarks it). */
bool view_runs_key(struct ui *ui, int ch)
{
	int sel = ui->sel[UI_VIEW_RUNS], n = ui->runs_session;
	bool enter = ch == '\n' || ch == '\r' || ch == KEY_ENTER;
	if (!enter && ch != 'm')
		return false;
	if (sel >= n && sel < ui->n_rows[UI_VIEW_RUNS]) {
		ui_message(ui, "a past session's run: roastop history lists them, roastop compare "
			   "puts two side by side");
		return true;
	}
	if (n <= 0)
		return true;
	if (enter) {
		ui->picked = sel >= n - 1 ? 0 : (size_t)sel + 1;
		ui->runs_dropped_picked = ui->runs_dropped_drawn;
		ui_open_view(ui, UI_VIEW_MAIN);
		if (ui->picked)
			ui_message(ui, "showing run %d of %d (8, then Enter on the newest, follows it "
				   "again)", sel + 1, n);
		else
			ui_message(ui, "following the newest run");
		return true;
	}
	bool same = ui->marked == (size_t)sel + 1 && ui->runs_dropped_marked == ui->runs_dropped_drawn;
	ui->marked = same ? 0 : (size_t)sel + 1;
	ui->runs_dropped_marked = ui->runs_dropped_drawn;
	if (same)
		ui_message(ui, "run %d unmarked", sel + 1);
	else
		ui_message(ui, "run %d marked: select another to compare (m unmarks)", sel + 1);
	return true;
}
