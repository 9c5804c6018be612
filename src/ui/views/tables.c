/* The smaller tables: datasets, slowest chunks, sections, files, event log. */
#include "../uipriv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/format.h"

/* format_rate keeps three significant digits and moves the prefix, so any
 * rate fits the column whole: a cut number would read as another number */
#define DATASET_RATE_WIDTH 12

static void dataset_row(struct ui *ui, const struct ui_frame *f, int row, char c[][FMT_CELL],
			enum theme_elem *elem)
{
	(void)ui;
	struct dataset_metrics d;
	if (!metrics_dataset(f->run, f->m, (size_t)row, &d))
		return;
	char a[FMT_LEN];
	snprintf(c[0], FMT_CELL, "%s", d.name);
	snprintf(c[1], FMT_CELL, "%s", format_count(a, optnum_of((double)d.num_chunks)));
	snprintf(c[2], FMT_CELL, "%s", format_count(a, optnum_of((double)d.num_failed)));
	snprintf(c[3], FMT_CELL, "%s", format_count(a, optnum_of(d.total_events)));
	snprintf(c[4], FMT_CELL, "%s", format_rate(a, d.event_rate_khz, 1e3, "Hz"));
	snprintf(c[5], FMT_CELL, "%s", format_duration(a, d.mean_duration));
	snprintf(c[6], FMT_CELL, "%s", format_duration(a, d.p99_duration));
	snprintf(c[7], FMT_CELL, "%s", format_num(a, d.share_of_time_percent, "%.1f%%"));
	if (d.num_failed)
		*elem = TH_WARNING;
}

void view_datasets(struct ui *ui, const struct ui_frame *f)
{
	/* FAILED stays at 80 columns (a failure is what one looks for); P99,
	 * then MEAN, go first (docs/dashboard.md, "Narrow terminals") */
	static const struct table_col cols[] = {
		{ "DATASET", 0, false, false, false },
		{ "CHUNKS", 8, true, false, false },
		{ "FAILED", 7, true, false, false },
		{ "EVENTS", 13, true, false, false },
		{ "RATE", DATASET_RATE_WIDTH, true, false, false },
		{ "MEAN", 9, true, false, true },
		{ "P99", 9, true, false, true },
		{ "SHARE", 7, true, false, false },
	};
	char title[128];
	snprintf(title, sizeof(title), "datasets: %zu (rate = events / chunk time)",
		 f->run->datasets.count);
	table_draw(ui, f, table_body(), title, cols, (int)ROASTOP_ARRAY_LEN(cols),
		   (int)f->run->datasets.count, dataset_row);
}

static void slow_row(struct ui *ui, const struct ui_frame *f, int row, char c[][FMT_CELL],
		     enum theme_elem *elem)
{
	(void)f;
	(void)elem;
	const struct topk_item *it = &ui->slow[row];
	char a[FMT_LEN], b[FMT_LEN];
	snprintf(c[0], FMT_CELL, "%s", format_duration(a, optnum_of(it->duration)));
	snprintf(c[1], FMT_CELL, "%s", it->file[0] ? it->file : "n/a");
	snprintf(c[2], FMT_CELL, "%s-%s", format_num(a, it->entry_start, "%.0f"),
		 format_num(b, it->entry_stop, "%.0f"));
	snprintf(c[3], FMT_CELL, "%s", format_count(a, it->num_events));
	snprintf(c[4], FMT_CELL, "%s", it->worker[0] ? it->worker : "n/a");
	snprintf(c[5], FMT_CELL, "%s", it->dataset[0] ? it->dataset : "n/a");
}

void view_slowest(struct ui *ui, const struct ui_frame *f)
{
	static const struct table_col cols[] = {
		{ "DURATION", 10, true, false, false },
		{ "FILE", 0, false, true, false },
		{ "ENTRIES", 17, true, false, false },
		{ "EVENTS", 11, true, false, true },
		{ "WORKER", 16, false, false, false },
		{ "DATASET", 12, false, false, true },
	};
	size_t n = topk_sorted(&f->run->slowest, ui->slow, TOPK_CAP);
	char title[96];
	snprintf(title, sizeof(title), "the %zu slowest chunks", n);
	table_draw(ui, f, table_body(), title, cols, (int)ROASTOP_ARRAY_LEN(cols), (int)n, slow_row);
}

static const struct strmap *section_map(const struct run *r, int row, size_t *i,
				       enum format_section *kind)
{
	const struct strmap *maps[3] = { &r->sec_time, &r->sec_mem, &r->sec_bytes };
	size_t k = (size_t)row;
	for (int m = 0; m < 3; m++) {
		if (k < maps[m]->count) {
			*i = k;
			*kind = (enum format_section)m; /* the maps in format_section's order */
			return maps[m];
		}
		k -= maps[m]->count;
	}
	return NULL;
}

static void section_row(struct ui *ui, const struct ui_frame *f, int row, char c[][FMT_CELL],
			enum theme_elem *elem)
{
	(void)ui;
	(void)elem;
	static const char *const kinds[3] = { "track_time", "track_memory", "track_bytes" };
	size_t i;
	enum format_section kind;
	const struct strmap *map = section_map(f->run, row, &i, &kind);
	if (!map)
		return;
	const struct section_agg *s = strmap_val_at(map, i);
	char a[FMT_LEN];
	snprintf(c[0], FMT_CELL, "%s", kinds[kind]);
	snprintf(c[1], FMT_CELL, "%s", strmap_key_at(map, i));
	snprintf(c[2], FMT_CELL, "%s", format_count(a, optnum_of((double)s->s.n)));
	optnum total = s->s.n ? optnum_of(s->s.sum) : optnum_none();
	snprintf(c[3], FMT_CELL, "%s", format_section(a, kind, total));
	snprintf(c[4], FMT_CELL, "%s", format_section(a, kind, stats_mean(&s->s)));
	snprintf(c[5], FMT_CELL, "%s", format_section(a, kind, stats_max(&s->s)));
}

void view_sections(struct ui *ui, const struct ui_frame *f)
{
	static const struct table_col cols[] = {
		{ "KIND", 12, false, false, false },
		{ "SECTION", 0, false, false, false },
		{ "CHUNKS", 10, true, false, true },
		{ "TOTAL", 12, true, false, false },
		{ "MEAN", 12, true, false, false },
		{ "MAX", 12, true, false, false },
	};
	const struct run *r = f->run;
	size_t n = r->sec_time.count + r->sec_mem.count + r->sec_bytes.count;
	table_draw(ui, f, table_body(), "sections (track_time / track_memory / track_bytes)", cols,
		   (int)ROASTOP_ARRAY_LEN(cols), (int)n, section_row);
}

static void file_row(struct ui *ui, const struct ui_frame *f, int row, char c[][FMT_CELL],
		     enum theme_elem *elem)
{
	(void)elem;
	size_t i = ui->idx[row];
	const struct file_agg *fa = strmap_val_at(&f->run->files, i);
	char a[FMT_LEN];
	snprintf(c[0], FMT_CELL, "%s", strmap_key_at(&f->run->files, i));
	snprintf(c[1], FMT_CELL, "%s", fa->dataset);
	snprintf(c[2], FMT_CELL, "%s", format_count(a, optnum_of((double)fa->n_chunks)));
	snprintf(c[3], FMT_CELL, "%s", format_count(a, optnum_of(fa->total_events)));
	snprintf(c[4], FMT_CELL, "%s", format_num(a, fa->compression_ratio, "%.2f"));
	snprintf(c[5], FMT_CELL, "%s", format_num(a, fa->branches_read_percent, "%.1f%%"));
	snprintf(c[6], FMT_CELL, "%s", format_num(a, fa->bytes_read_percent, "%.1f%%"));
}

void view_files(struct ui *ui, const struct ui_frame *f)
{
	static const struct table_col cols[] = {
		{ "FILE", 0, false, true, false },
		{ "DATASET", 14, false, false, true },
		{ "CHUNKS", 8, true, false, false },
		{ "EVENTS", 13, true, false, true },
		{ "COMPR", 7, true, false, false },
		{ "BRANCH%", 8, true, false, false },
		{ "BYTES%", 7, true, false, false },
	};
	const struct strmap *map = &f->run->files;
	if (map->count > ui->idx_cap) {
		size_t *p = realloc(ui->idx, map->count * sizeof(*p));
		if (!p)
			return;
		ui->idx = p;
		ui->idx_cap = map->count;
	}
	const char *flt = ui->filter[UI_VIEW_FILES];
	size_t n = 0;
	for (size_t i = 0; i < map->count; i++)
		if (!flt[0] || strcasestr(strmap_key_at(map, i), flt))
			ui->idx[n++] = i;
	char title[160];
	snprintf(title, sizeof(title), "files: %zu%s%s%s (compression ratio, branches and bytes read)",
		 map->count, flt[0] ? ", filter '" : "", flt, flt[0] ? "'" : "");
	table_draw(ui, f, table_body(), title, cols, (int)ROASTOP_ARRAY_LEN(cols), (int)n, file_row);
}

static void log_row(struct ui *ui, const struct ui_frame *f, int row, char c[][FMT_CELL],
		    enum theme_elem *elem)
{
	(void)ui;
	const struct log_line *l = run_log_get(f->run, (size_t)row);
	if (!l)
		return;
	char a[FMT_LEN];
	double t0 = f->m->elapsed_time_seconds.valid ? f->m->t_start : l->t;
	snprintf(c[0], FMT_CELL, "+%s", format_duration(a, optnum_of(l->t - t0)));
	snprintf(c[1], FMT_CELL, "%s", log_kind_name(l->kind));
	snprintf(c[2], FMT_CELL, "%s", l->text);
	*elem = l->kind == LOG_ERROR ? TH_CRITICAL : (l->kind == LOG_WARN ? TH_WARNING : TH_TEXT);
}

void view_log(struct ui *ui, const struct ui_frame *f)
{
	static const struct table_col cols[] = {
		{ "TIME", 12, true, false, false },
		{ "KIND", 5, false, false, false },
		{ "EVENT", 0, false, false, false },
	};
	uint64_t n = f->run->log_count < RUN_LOG_LINES ? f->run->log_count : RUN_LOG_LINES;
	char title[128];
	snprintf(title, sizeof(title), "event log: newest first (%llu events, last %d kept)",
		 (unsigned long long)f->run->log_count, RUN_LOG_LINES);
	table_draw(ui, f, table_body(), title, cols, (int)ROASTOP_ARRAY_LEN(cols), (int)n, log_row);
}
