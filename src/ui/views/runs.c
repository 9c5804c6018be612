/* View 8: the session's runs, a row each (session.h), newest last; Enter
 * shows the selected one in the other views. */
#include "../uipriv.h"

#include <stdio.h>

#include "roastop/format.h"

static void runs_row(struct ui *ui, const struct ui_frame *f, int i, char c[][FMT_CELL],
		     enum theme_elem *elem)
{
	(void)ui;
	const struct session_run *row = &f->session->rows[i];
	const struct session_figures *g = &row->fig;
	char a[FMT_LEN];
	snprintf(c[0], FMT_CELL, "%s%d", row->run && row->run == f->run ? ">" : "", i + 1);
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
	struct table_layout L;
	if (layout_table(COLS, LINES, &L) != 0)
		return;
	size_t n = f->session ? f->session->n_rows : 0;
	ui->runs_dropped_drawn = f->session ? f->session->rows_dropped : 0;
	for (size_t i = 0; ui->runs_entered && i < n; i++)
		if (f->session->rows[i].run == f->run)
			ui->sel[UI_VIEW_RUNS] = (int)i; /* the list opens on the run shown */
	ui->runs_entered = false;
	char title[160];
	snprintf(title, sizeof(title), "runs: %zu (Enter shows one; * = summary only, over %d kept)",
		 n, SESSION_DETAIL_RUNS);
	table_draw(ui, f, L.body, title, cols, (int)ROASTOP_ARRAY_LEN(cols), (int)n, runs_row);
}
