/* View f: the shown run's findings, most severe first, each with when it
 * began, its evidence and what to change (diagnosis.h; the view computes
 * none). Up and Down move the first finding shown. */
#include "../uipriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"

/* text over rows of at most w columns from (y, x), cut after a space when
 * one fits; returns the row after the last one drawn (at most ymax). */
static int draw_wrapped(struct ui *ui, int y, int x, int w, int ymax, enum theme_elem e,
			const char *text)
{
	const char *p = text;
	while (*p && y < ymax) {
		const char *next = ui_row_end(p, w);
		if (next == p) /* no column to draw in */
			break;
		int len = (int)(next - p) - (next[-1] == ' '); /* the space that ends it */
		char row[DIAG_EVIDENCE_LEN];
		snprintf(row, sizeof(row), "%.*s", len, p);
		scr_text(ui, y++, x, w, e, row);
		p = next;
	}
	return y;
}

static enum theme_elem severity_elem(enum finding_severity s)
{
	return s == SEV_CRITICAL ? TH_CRITICAL : s == SEV_WARNING ? TH_WARNING : TH_VALUE;
}

/* One finding from row y; returns the row after it. */
static int draw_finding(struct ui *ui, const struct ui_frame *f, const struct finding *g, int y,
			int ymax)
{
	char a[FMT_LEN], b[FMT_LEN], head[DIAG_TITLE_LEN + 32];
	snprintf(head, sizeof(head), "%s: %s", diagnosis_severity_name(g->severity), g->title);
	y = draw_wrapped(ui, y, 1, COLS - 2, ymax, severity_elem(g->severity), head);
	double from = f->m->t_start;
	if (y < ymax) {
		if (isnan(g->since))
			scr_printf(ui, y++, 3, COLS - 4, TH_DIM, "%s  since n/a", diagnosis_id_name(g->id));
		else
			scr_printf(ui, y++, 3, COLS - 4, TH_DIM, "%s  since %s (%s into the run)",
				   diagnosis_id_name(g->id), format_clock(a, g->since),
				   format_duration(b, optnum_of(fmax(0, g->since - from))));
	}
	y = draw_wrapped(ui, y, 3, COLS - 4, ymax, TH_TEXT, g->evidence);
	y = draw_wrapped(ui, y, 3, COLS - 4, ymax, TH_LABEL, g->suggestion);
	return y + 1;
}

void view_findings(struct ui *ui, const struct ui_frame *f)
{
	struct rect body = table_body();
	size_t n = f->findings ? f->findings->n : 0;
	ui->n_rows[UI_VIEW_FINDINGS] = (int)n;
	int first = ui->sel[UI_VIEW_FINDINGS];
	int y = body.y, ymax = body.y + body.h;
	if (!f->findings) {
		scr_text(ui, y, 1, COLS - 2, TH_TITLE, "findings: n/a");
		return;
	}
	if (n == 0) {
		scr_text(ui, y++, 1, COLS - 2, TH_TITLE, "findings: no finding");
		scr_text(ui, y + 1, 1, COLS - 2, TH_DIM, "no rule of docs/diagnosis.md holds for this run");
		return;
	}
	scr_printf(ui, y++, 1, COLS - 2, TH_TITLE, "findings: %zu, most severe first%s", n,
		   n > 1 ? " (up/down scroll)" : "");
	for (size_t i = (size_t)first; i < n && y < ymax; i++)
		y = draw_finding(ui, f, &f->findings->f[i], y + (i > (size_t)first ? 0 : 1), ymax);
}
