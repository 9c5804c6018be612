/* View 9: the chunks in flight, oldest first, then the latest lost with
 * their worker (docs/metrics.md, "Chunks in flight"). */
#include "../uipriv.h"

#include <math.h>
#include <stdio.h>

#include "roastop/format.h"

static const struct inflight_chunk *running_row_chunk(const struct ui *ui, const struct run *r,
						      int row, bool *lost)
{
	*lost = (size_t)row >= ui->n_running;
	if (!*lost)
		return ui->running[row];
	return inflight_lost_get(&r->inflight, (size_t)row - ui->n_running);
}

static void running_row(struct ui *ui, const struct ui_frame *f, int row, char c[][FMT_CELL],
			enum theme_elem *elem)
{
	bool lost;
	const struct inflight_chunk *ch = running_row_chunk(ui, f->run, row, &lost);
	if (!ch)
		return;
	char a[FMT_LEN], b[FMT_LEN];
	bool straggler = !lost && metrics_straggler(f->m, ch);
	snprintf(c[0], FMT_CELL, "%s", format_duration(a, optnum_of(metrics_inflight_age(f->m, ch))));
	snprintf(c[1], FMT_CELL, "%s", lost ? "LOST" : straggler ? "straggler" : "");
	snprintf(c[2], FMT_CELL, "%s", ch->worker[0] ? ch->worker : "n/a");
	snprintf(c[3], FMT_CELL, "%s", ch->file[0] ? ch->file : "n/a");
	snprintf(c[4], FMT_CELL, "%s-%s", format_num(a, ch->entry_start, "%.0f"),
		 format_num(b, ch->entry_stop, "%.0f"));
	snprintf(c[5], FMT_CELL, "%s", ch->dataset[0] ? ch->dataset : "n/a");
	if (lost || straggler)
		*elem = TH_CRITICAL;
}

static void running_title(char *buf, size_t size, const struct ui *ui, const struct run *r,
			  const struct metrics *m)
{
	char a[FMT_LEN];
	if (!m->inflight_running.valid) {
		snprintf(buf, size, "chunks running: n/a (%s)",
			 r->n_chunks ? "the emitter sends no chunk starts" : "no chunk-start datagram yet");
		return;
	}
	int n = snprintf(buf, size, "%zu running, oldest first", ui->n_running);
	if (n < 0 || (size_t)n >= size)
		return;
	if (m->straggler_after.valid)
		snprintf(buf + n, size - (size_t)n, "; straggler past %s",
			 format_duration(a, m->straggler_after));
	else
		snprintf(buf + n, size - (size_t)n, "; stragglers from %d finished chunks",
			 METRICS_STRAGGLER_MIN_CHUNKS);
}

void view_running(struct ui *ui, const struct ui_frame *f)
{
	static const struct table_col cols[] = {
		{ "AGE", 9, true, false, false },
		{ "", 9, false, false, false },
		{ "WORKER", 16, false, true, false },
		{ "FILE", 0, false, true, false },
		{ "ENTRIES", 15, true, false, true },
		{ "DATASET", 12, false, false, true },
	};
	const struct inflight *fl = &f->run->inflight;
	ui->n_running = inflight_oldest(fl, ui->running, INFLIGHT_MAX);
	size_t lost = fl->lost < INFLIGHT_LOST_KEPT ? fl->lost : INFLIGHT_LOST_KEPT;
	char title[128];
	running_title(title, sizeof(title), ui, f->run, f->m);
	table_draw(ui, f, table_body(), title, cols, (int)ROASTOP_ARRAY_LEN(cols),
		   (int)(ui->n_running + lost), running_row);
}
