/* Workers: every worker seen, present ones first, sorted by the chosen key,
 * filtered by name; memory above 80 % of the limit is a warning, above
 * 95 % critical. */
#include "../uipriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/format.h"

#define MEM_WARN_PCT 80.0
#define MEM_CRIT_PCT 95.0

const char *const ui_wsort_names[WSORT__COUNT] = { "memory", "memory %", "CPU", "executing", "name" };

/* the worker's latest memory / limit x 100, while it is present */
static optnum mem_pct(const struct worker_agg *w)
{
	return w->present ? run_memory_percent(w->memory_bytes, w->memory_limit) : optnum_none();
}

static double key_of(const struct worker_agg *w, enum worker_sort s)
{
	optnum v = s == WSORT_MEMORY ? w->memory_bytes
		   : s == WSORT_MEMPCT ? mem_pct(w)
		   : s == WSORT_CPU ? w->cpu_percent
				    : w->executing;
	return v.valid ? v.value : -INFINITY;
}

/* present first, then by key (largest first; by name for WSORT_NAME) */
static int cmp_rows(const void *a, const void *b)
{
	const struct wrow *x = a, *y = b;
	if (x->present != y->present)
		return x->present ? -1 : 1;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool matches(const struct ui *ui, const struct worker_agg *w, const char *addr)
{
	const char *flt = ui->filter[UI_VIEW_WORKERS];
	if (!flt[0])
		return true;
	return strcasestr(w->name, flt) || strcasestr(w->host, flt) || strcasestr(addr, flt);
}

static int ensure_rows(struct ui *ui, size_t n)
{
	if (n == 0 || (n <= ui->idx_cap && n <= ui->wrows_cap))
		return 0;
	size_t *p = realloc(ui->idx, n * sizeof(*p));
	if (p) {
		ui->idx = p;
		ui->idx_cap = n;
	}
	struct wrow *w = realloc(ui->wrows, n * sizeof(*w));
	if (w) {
		ui->wrows = w;
		ui->wrows_cap = n;
	}
	return p && w ? 0 : -1;
}

/* Sort keys are read once per worker, not once per comparison: 10,000
 * workers sort in well under a millisecond. */
static size_t collect(struct ui *ui, const struct ui_frame *f, size_t *present)
{
	const struct strmap *map = &f->run->workers;
	size_t n = 0;
	*present = 0;
	if (ensure_rows(ui, map->count) != 0)
		return 0;
	for (size_t i = 0; i < map->count; i++) {
		const struct worker_agg *w = strmap_val_at(map, i);
		*present += w->present;
		if (!matches(ui, w, strmap_key_at(map, i)))
			continue;
		ui->wrows[n++] = (struct wrow){ .key = ui->wsort == WSORT_NAME ? 0 : key_of(w, ui->wsort),
						.name = w->name, .idx = i, .present = w->present };
	}
	if (n > 1)
		qsort(ui->wrows, n, sizeof(*ui->wrows), cmp_rows);
	for (size_t i = 0; i < n; i++)
		ui->idx[i] = ui->wrows[i].idx;
	return n;
}

static void worker_row(struct ui *ui, const struct ui_frame *f, int row, char c[][FMT_CELL],
		       enum theme_elem *elem)
{
	const struct worker_agg *w = strmap_val_at(&f->run->workers, ui->idx[row]);
	char a[FMT_LEN];
	optnum pct = mem_pct(w);
	snprintf(c[0], FMT_CELL, "%s", w->name);
	snprintf(c[1], FMT_CELL, "%s", w->present ? (w->status[0] ? w->status : "running") : "gone");
	snprintf(c[2], FMT_CELL, "%s", format_num(a, w->nthreads, "%.0f"));
	snprintf(c[3], FMT_CELL, "%s", format_bytes(a, w->memory_bytes));
	snprintf(c[4], FMT_CELL, "%s", format_bytes(a, w->memory_limit));
	snprintf(c[5], FMT_CELL, "%s", format_num(a, pct, "%.1f%%"));
	snprintf(c[6], FMT_CELL, "%s", format_num(a, w->cpu_percent, "%.0f%%"));
	snprintf(c[7], FMT_CELL, "%s", format_num(a, w->executing, "%.0f"));
	snprintf(c[8], FMT_CELL, "%s", format_num(a, w->processing, "%.0f"));
	snprintf(c[9], FMT_CELL, "%s", format_bytes(a, w->spilled_bytes));
	if (!w->present)
		*elem = TH_DIM;
	else if (pct.valid && pct.value > MEM_CRIT_PCT)
		*elem = TH_CRITICAL;
	else if (pct.valid && pct.value > MEM_WARN_PCT)
		*elem = TH_WARNING;
}

/* Enter opened a history (view_workers_key): the worker on the selected row as the
 * rows stand now, so keys sent with it (Down, Enter) count. */
static void history_pick(struct ui *ui, const struct ui_frame *f, size_t n)
{
	int sel = ui->sel[UI_VIEW_WORKERS];
	if (sel >= 0 && (size_t)sel < n)
		snprintf(ui->worker_key, sizeof(ui->worker_key), "%s",
			 strmap_key_at(&f->run->workers, ui->idx[sel]));
	else
		ui->worker_open = false;
}

void view_workers(struct ui *ui, const struct ui_frame *f)
{
	static const struct table_col cols[] = {
		{ "WORKER", 0, false, false, false },
		{ "STATUS", 8, false, false, false },
		{ "THR", 4, true, false, true },
		{ "MEMORY", 10, true, false, false },
		{ "LIMIT", 10, true, false, true },
		{ "MEM%", 6, true, false, false },
		{ "CPU%", 5, true, false, false },
		{ "EXEC", 5, true, false, false },
		{ "PROC", 5, true, false, true },
		{ "SPILLED", 10, true, false, true },
	};
	size_t present;
	size_t n = collect(ui, f, &present);
	if (ui->worker_open && !ui->worker_key[0])
		history_pick(ui, f, n);
	if (ui->worker_open) {
		view_worker_history(ui, f);
		return;
	}
	const char *flt = ui->filter[UI_VIEW_WORKERS];
	char title[256];
	snprintf(title, sizeof(title), "workers: %zu present, %zu seen  sorted by %s (s)%s%s%s",
		 present, f->run->workers.count, ui_wsort_names[ui->wsort],
		 flt[0] ? "  filter '" : "  / filters", flt, flt[0] ? "'" : "");
	table_draw(ui, f, table_body(), title, cols, (int)ROASTOP_ARRAY_LEN(cols), (int)n, worker_row);
}

/* Enter: the selected worker's history (which one, the view says at its
 * next draw: the selection as it stands then), or back; Esc: back. */
bool view_workers_key(struct ui *ui, int ch)
{
	if (ch == 27) {
		ui->worker_open = false;
		return true;
	}
	if (ch != '\n' && ch != '\r' && ch != KEY_ENTER)
		return false;
	ui->worker_open = !ui->worker_open;
	ui->worker_key[0] = '\0';
	return true;
}
