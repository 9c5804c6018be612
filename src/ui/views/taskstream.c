/* View 10: the Dask task stream (docs/metrics.md, "Dask tasks"). Above, per
 * worker a lane of its latest tasks in time, each cell the prefix's letter
 * in the prefix's colour: the terminal form of Dask's task-stream plot.
 * Below, the per-prefix table: tasks, erred, compute p50/p90, stragglers,
 * time in transfers. */
#include "../uipriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"

#define LANE_LABEL 16

static char prefix_letter(size_t i)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	return i < sizeof(letters) - 1 ? letters[i] : '*';
}

/* The window the lanes show: the latest stop back to as far as the
 * widest lane's kept tasks reach, at least one second. */
static void lanes_window(const struct tasks *t, double *lo, double *hi)
{
	*hi = t->t_last;
	*lo = *hi - 1.0;
	for (size_t i = 0; i < t->n_lanes; i++) {
		size_t kept = t->lanes[i].n < TASKS_LANE_KEPT ? t->lanes[i].n : TASKS_LANE_KEPT;
		const struct tasks_slot *s = tasks_lane_slot(&t->lanes[i], kept ? kept - 1 : 0);
		if (s && s->start < *lo)
			*lo = s->start;
	}
}

static void lane_draw(struct ui *ui, const struct tasks_lane *l, int y, int x, int w, double lo,
		      double hi)
{
	scr_printf(ui, y, x, LANE_LABEL, TH_LABEL, "%-*.*s", LANE_LABEL - 1, LANE_LABEL - 1,
		   l->worker + (strncmp(l->worker, "tcp://", 6) ? 0 : 6));
	double span = (hi - lo) / w;
	for (size_t i = 0; i < TASKS_LANE_KEPT; i++) {
		const struct tasks_slot *s = tasks_lane_slot(l, i);
		if (!s)
			break;
		int a = (int)floor((s->start - lo) / span), b = (int)floor((s->stop - lo) / span);
		a = a < 0 ? 0 : a;
		b = b >= w ? w - 1 : b;
		uint32_t cp = (uint32_t)prefix_letter(s->prefix);
		attr_t at = ui->grad[s->prefix % UI_GRAD_STEPS];
		for (int c = a; c <= b; c++)
			scr_cells(ui, y, x + LANE_LABEL + c, &cp, 1, at);
	}
}

static void lanes_draw(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	const struct tasks *t = f->tasks;
	char a[FMT_LEN], e[FMT_LEN], fl[FMT_LEN];
	double lo, hi;
	lanes_window(t, &lo, &hi);
	scr_printf(ui, r.y, r.x, r.w, TH_TITLE,
		   "task stream (%s): %llu tasks, %s erred, %s in flight; lanes: the latest %s "
		   "per worker", f->tasks_state ? f->tasks_state : "?",
		   (unsigned long long)t->count, format_num(e, f->m->tasks.erred, "%.0f"),
		   format_num(fl, f->m->tasks.in_flight, "%.0f"),
		   t->count ? format_duration(a, optnum_of(hi - lo)) : "n/a");
	int w = r.w - LANE_LABEL;
	for (size_t i = 0; w > 0 && i < t->n_lanes && (int)i + 1 < r.h; i++)
		lane_draw(ui, &t->lanes[i], r.y + 1 + (int)i, r.x, w, lo, hi);
}

/* ERRED and FLIGHT: the collector's route measures them, n/a without it;
 * "+" when some running tasks were not listed (a lower bound). */
static void prefix_counts(const struct task_prefix_figures *pf, char c[][FMT_CELL])
{
	char a[FMT_LEN];
	snprintf(c[2], FMT_CELL, "%s", format_num(a, pf->erred, "%.0f"));
	snprintf(c[5], FMT_CELL, "%s",
		 format_num(a, pf->in_flight, pf->in_flight_partial ? "%.0f+" : "%.0f"));
}

static void prefix_row(struct ui *ui, const struct ui_frame *f, int row, char c[][FMT_CELL],
		       enum theme_elem *elem)
{
	(void)ui;
	const struct tasks_prefix *p = &f->tasks->prefixes[row];
	static const struct task_prefix_figures none; /* figures of a prefix newer than them */
	const struct task_prefix_figures *pf =
		(size_t)row < f->m->tasks.n ? &f->m->tasks.prefix[row] : &none;
	char a[FMT_LEN];
	snprintf(c[0], FMT_CELL, "%c %s", prefix_letter((size_t)row), p->name);
	snprintf(c[1], FMT_CELL, "%llu", (unsigned long long)p->count);
	prefix_counts(pf, c);
	snprintf(c[3], FMT_CELL, "%s", format_duration(a, pf->compute_p50));
	snprintf(c[4], FMT_CELL, "%s", format_duration(a, pf->compute_p90));
	/* n/a for a prefix counted from the scheduler's totals alone */
	optnum strag = pf == &none ? optnum_of((double)p->stragglers) : pf->stragglers;
	snprintf(c[6], FMT_CELL, "%s", format_num(a, strag, "%.0f"));
	snprintf(c[7], FMT_CELL, "%s", format_duration(a, pf->transfer_seconds));
	if (pf->erred.value > 0 || p->erred || p->stragglers)
		*elem = TH_CRITICAL;
}

void view_tasks(struct ui *ui, const struct ui_frame *f)
{
	static const struct table_col cols[] = {
		{ "PREFIX", 0, false, false, false },	{ "TASKS", 8, true, false, false },
		{ "ERRED", 6, true, false, false },	{ "P50", 8, true, false, false },
		{ "P90", 8, true, false, false },	{ "FLIGHT", 6, true, false, true },
		{ "STRAG", 5, true, false, true },	{ "TRANSFER", 9, true, false, true },
	};
	struct table_layout L;
	if (!f->tasks || layout_table(COLS, LINES, &L) != 0)
		return;
	int lanes = (int)f->tasks->n_lanes + 1;
	int top = lanes < L.body.h / 2 ? lanes : L.body.h / 2;
	struct rect up = { L.body.x, L.body.y, L.body.w, top };
	struct rect down = { L.body.x, L.body.y + top, L.body.w, L.body.h - top };
	lanes_draw(ui, f, up);
	const struct tasks_straggler *s = tasks_straggler_at(f->tasks, 0);
	char title[256], a[FMT_LEN];
	const struct tasks_route *r = &f->tasks->route;
	int k = s ? snprintf(title, sizeof(title), "%zu prefixes; latest straggler: %s on %s, %s",
			     f->tasks->n, s->prefix, s->worker,
			     format_duration(a, optnum_of(s->seconds)))
		  : snprintf(title, sizeof(title), "%zu prefixes; no straggler", f->tasks->n);
	if (r->n_running && k > 0 && (size_t)k < sizeof(title))
		snprintf(title + k, sizeof(title) - (size_t)k, "; oldest in flight: %s on %s, %s%s",
			 r->running[0].key, r->running[0].worker,
			 format_duration(a, optnum_of(r->running[0].seconds)),
			 f->m->tasks.running_straggler[0] ? " (straggler)" : "");
	table_draw(ui, f, down, title, cols, (int)ROASTOP_ARRAY_LEN(cols), (int)f->tasks->n,
		   prefix_row);
}
