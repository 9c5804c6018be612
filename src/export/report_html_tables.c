/* report.html's tables: datasets, files, the slowest chunks, failures and
 * chunks in flight, and the instrumented sections, each capped at
 * REPORT_HTML_MAX_ROWS (report_html.c writes the page). */
#include "roastop/report_html.h"
#include "report_htmlpriv.h"

#include <stdio.h>
#include <string.h>

#include "roastop/format.h"

/* ---- tables --------------------------------------------------------- */

static double dataset_time(const struct strmap *map, size_t i)
{
	const struct dataset_agg *d = strmap_val_at(map, i);
	return d->total_duration + (double)d->n_failed * 1e-12; /* failed-only ones still rank */
}

static void dataset_row(struct strbuf *o, const struct dataset_metrics *d)
{
	char a[FMT_LEN];
	strbuf_puts(o, "<tr");
	html_attr_str(o, "data-dataset", d->name);
	html_attr_count(o, "data-chunks", d->num_chunks);
	html_attr_count(o, "data-failed", d->num_failed);
	html_attr_num(o, "data-events", optnum_of(d->total_events));
	html_attr_num(o, "data-total-duration", optnum_of(d->total_duration));
	html_attr_num(o, "data-mean-duration", d->mean_duration);
	strbuf_puts(o, ">");
	html_cell(o, d->name);
	html_cell_num(o, format_count(a, optnum_of((double)d->num_chunks)));
	html_cell_num(o, format_count(a, optnum_of((double)d->num_failed)));
	html_cell_num(o, format_count(a, optnum_of(d->total_events)));
	html_cell_num(o, format_duration(a, d->mean_duration));
	html_cell_num(o, format_duration(a, d->p99_duration));
	html_cell_num(o, format_rate(a, d->event_rate_khz, 1e3, "Hz"));
	html_cell_num(o, format_num(a, d->share_of_time_percent, "%.1f %%"));
	strbuf_puts(o, "</tr>\n");
}

void report_html_datasets(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	static const char *const cols[] = { "dataset", "chunks", "failed", "events", "mean chunk",
					    "p99 chunk", "event rate (chunk time)", "share of time" };
	size_t idx[REPORT_HTML_MAX_ROWS];
	if (!html_section(o, "datasets", "Datasets",
			  r->datasets.count == 0 ? "n/a: no chunk named a dataset" : NULL))
		return;
	size_t n = html_top_rows(&r->datasets, dataset_time, idx, REPORT_HTML_MAX_ROWS);
	html_table_head(o, "datasets", cols, ROASTOP_ARRAY_LEN(cols), 0xFEu);
	struct dataset_metrics d;
	for (size_t k = 0; k < n; k++)
		if (metrics_dataset(r, m, idx[k], &d))
			dataset_row(o, &d);
	html_table_end(o, n, r->datasets.count, "by chunk time; all in metrics.json");
	strbuf_puts(o, "</section>\n");
}

static double file_time(const struct strmap *map, size_t i)
{
	return ((const struct file_agg *)strmap_val_at(map, i))->total_duration;
}

static void file_row(struct strbuf *o, const char *name, const struct file_agg *f)
{
	char a[FMT_LEN];
	strbuf_puts(o, "<tr");
	html_attr_str(o, "data-file", name);
	html_attr_count(o, "data-chunks", f->n_chunks);
	html_attr_num(o, "data-events", optnum_of(f->total_events));
	strbuf_puts(o, ">");
	html_cell(o, name);
	html_cell(o, f->dataset);
	html_cell_num(o, format_count(a, optnum_of((double)f->n_chunks)));
	html_cell_num(o, format_count(a, optnum_of(f->total_events)));
	html_cell_num(o, format_duration(a, optnum_of(f->total_duration)));
	html_cell_num(o, format_num(a, f->has_first ? f->bytes_read_percent : optnum_none(),
				      "%.1f %%"));
	html_cell_num(o, format_num(a, f->has_first ? f->branches_read_percent : optnum_none(),
				      "%.1f %%"));
	html_cell_num(o, format_num(a, f->has_meta ? f->compression_ratio : optnum_none(), "%.2f"));
	strbuf_puts(o, "</tr>\n");
}

void report_html_files(struct strbuf *o, const struct run *r)
{
	static const char *const cols[] = { "file", "dataset", "chunks", "events", "chunk time",
					    "bytes read", "branches read", "compression" };
	size_t idx[REPORT_HTML_MAX_ROWS];
	if (!html_section(o, "files", "Files",
			  r->files.count == 0 ? "n/a: no chunk named a file" : NULL))
		return;
	size_t n = html_top_rows(&r->files, file_time, idx, REPORT_HTML_MAX_ROWS);
	html_table_head(o, "files", cols, ROASTOP_ARRAY_LEN(cols), 0xFCu);
	for (size_t k = 0; k < n; k++)
		file_row(o, strmap_key_at(&r->files, idx[k]), strmap_val_at(&r->files, idx[k]));
	html_table_end(o, n, r->files.count, "by chunk time; per-file reads in metrics.json");
	strbuf_puts(o, "</section>\n");
}

/* A chunk's entry range, digits only (nothing to escape). */
static const char *entries(char buf[2 * FMT_LEN], optnum start, optnum stop)
{
	if (!start.valid || !stop.valid)
		return "n/a";
	snprintf(buf, 2 * FMT_LEN, "%.0f&ndash;%.0f", start.value, stop.value);
	return buf;
}

void report_html_slowest(struct strbuf *o, const struct run *r)
{
	static const char *const cols[] = { "time", "file", "entries", "events", "dataset", "worker" };
	struct topk_item items[TOPK_CAP];
	size_t n = topk_sorted(&r->slowest, items, TOPK_CAP);
	if (!html_section(o, "slowest", "Slowest chunks",
			  n == 0 ? "n/a: no successful chunks" : NULL))
		return;
	html_table_head(o, "slowest", cols, ROASTOP_ARRAY_LEN(cols), 0x0Du);
	char a[FMT_LEN], e[2 * FMT_LEN];
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(o, "<tr");
		html_attr_num(o, "data-duration", optnum_of(items[i].duration));
		strbuf_puts(o, ">");
		html_cell_num(o, format_duration(a, optnum_of(items[i].duration)));
		html_cell(o, items[i].file[0] ? items[i].file : "n/a");
		strbuf_appendf(o, "<td class=\"n\">%s</td>", entries(e, items[i].entry_start, items[i].entry_stop)); /* digits only */
		html_cell_num(o, format_count(a, items[i].num_events));
		html_cell(o, items[i].dataset[0] ? items[i].dataset : "n/a");
		html_cell(o, items[i].worker[0] ? items[i].worker : "n/a");
		strbuf_puts(o, "</tr>\n");
	}
	html_table_end(o, n, n, "");
	strbuf_puts(o, "</section>\n");
}

static double error_count(const struct strmap *map, size_t i)
{
	return (double)*(const uint64_t *)strmap_val_at(map, i);
}

static void failed_table(struct strbuf *o, const struct run *r)
{
	static const char *const cols[] = { "exception", "chunks" };
	size_t idx[REPORT_HTML_MAX_ROWS];
	size_t n = html_top_rows(&r->errors, error_count, idx, REPORT_HTML_MAX_ROWS);
	html_table_head(o, "failed", cols, ROASTOP_ARRAY_LEN(cols), 0x2u);
	char a[FMT_LEN];
	for (size_t k = 0; k < n; k++) {
		double c = error_count(&r->errors, idx[k]);
		if (c == 0)
			continue; /* its chunks all recovered on a retry */
		strbuf_puts(o, "<tr");
		html_attr_count(o, "data-chunks", (uint64_t)c);
		strbuf_puts(o, ">");
		html_cell(o, strmap_key_at(&r->errors, idx[k]));
		html_cell_num(o, format_count(a, optnum_of(c)));
		strbuf_puts(o, "</tr>\n");
	}
	html_table_end(o, n, r->errors.count, "by count; all in metrics.json");
}

/* The latest failed chunks themselves (failed.h): which file to look at. */
static void failed_latest(struct strbuf *o, const struct run *r)
{
	static const char *const cols[] = { "exception", "file", "entries", "dataset", "worker",
					    "duration" };
	html_table_head(o, "failed-chunks", cols, ROASTOP_ARRAY_LEN(cols), 0x24u);
	char a[FMT_LEN], e[2 * FMT_LEN];
	size_t n = 0;
	for (const struct failed_chunk *c; (c = failed_get(&r->failed, n)) != NULL; n++) {
		strbuf_puts(o, "<tr>");
		snprintf(e, sizeof(e), "%s%s", c->error[0] ? c->error : "n/a",
			 c->retried ? " (retried)" : "");
		html_cell(o, e);
		html_cell(o, c->file[0] ? c->file : "n/a");
		strbuf_appendf(o, "<td class=\"n\">%s</td>", entries(e, c->entry_start, c->entry_stop)); /* digits only */
		html_cell(o, c->dataset[0] ? c->dataset : "n/a");
		html_cell(o, c->worker[0] ? c->worker : "n/a");
		html_cell_num(o, format_duration(a, c->duration));
		strbuf_puts(o, "</tr>\n");
	}
	html_table_end(o, n, (size_t)r->failed.n, "the latest first; the others in the recording");
}

static void inflight_table(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	static const char *const cols[] = { "age", "file", "dataset", "worker" };
	const struct inflight_chunk *c[REPORT_HTML_MAX_ROWS];
	size_t n = inflight_oldest(&r->inflight, c, REPORT_HTML_MAX_ROWS);
	if (n == 0)
		return;
	strbuf_puts(o, "<h3>Chunks running at the end (oldest first)</h3>\n");
	html_table_head(o, "inflight", cols, ROASTOP_ARRAY_LEN(cols), 0x1u);
	char a[FMT_LEN];
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(o, "<tr>");
		format_duration(a, optnum_of(metrics_inflight_age(m, c[i])));
		if (metrics_straggler(m, c[i]))
			strncat(a, " (straggler)", FMT_LEN - strlen(a) - 1);
		html_cell_num(o, a);
		html_cell(o, c[i]->file[0] ? c[i]->file : "n/a");
		html_cell(o, c[i]->dataset[0] ? c[i]->dataset : "n/a");
		html_cell(o, c[i]->worker[0] ? c[i]->worker : "n/a");
		strbuf_puts(o, "</tr>\n");
	}
	html_table_end(o, n, m->inflight_running.valid ? (size_t)m->inflight_running.value : n, "");
}

void report_html_failed(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	char a[FMT_LEN], b[FMT_LEN];
	html_section(o, "failed", "Failed chunks", NULL);
	if (r->n_chunks == 0)
		html_para_na(o, "n/a: no chunk records received");
	else
		strbuf_appendf(o, "<p data-failed=\"%llu\">%s of %s chunks failed%s</p>\n",
			       (unsigned long long)r->n_failed, format_count(a, m->num_failed_chunks),
			       format_count(b, m->num_chunks),
			       r->n_failed ? ", by exception type:" : ".");
	if (r->retries.count)
		strbuf_appendf(o, "<p data-retries=\"%llu\">%s failed attempts were retried; %s "
			       "chunks succeeded on a retry (not failed).</p>\n",
			       (unsigned long long)r->retries.count, format_count(a, m->chunk_retries),
			       format_count(b, m->retried_chunks_recovered));
	if (r->errors.count)
		failed_table(o, r);
	if (r->failed.n) {
		strbuf_puts(o, "<h3>The latest failed chunks</h3>\n");
		failed_latest(o, r);
	}
	inflight_table(o, m, r);
	strbuf_puts(o, "</section>\n");
}

/* ---- sections -------------------------------------------------------- */

static double section_total(const struct strmap *map, size_t i)
{
	return ((const struct section_agg *)strmap_val_at(map, i))->s.sum;
}

enum sec_unit { SEC_TIME, SEC_MEM, SEC_BYTES };

static const char *sec_value(char buf[FMT_LEN], optnum v, enum sec_unit u)
{
	if (u == SEC_TIME)
		return format_duration(buf, v);
	return u == SEC_MEM ? format_mib(buf, v) : format_bytes(buf, v);
}

static void section_table(struct strbuf *o, const struct strmap *map, const char *heading,
			  enum sec_unit u)
{
	static const char *const cols[] = { "section", "count", "mean", "total", "max" };
	size_t idx[REPORT_HTML_MAX_ROWS];
	if (map->count == 0)
		return;
	strbuf_appendf(o, "<h3>%s</h3>\n", heading);
	size_t n = html_top_rows(map, section_total, idx, REPORT_HTML_MAX_ROWS);
	html_table_head(o, "sections", cols, ROASTOP_ARRAY_LEN(cols), 0x1Eu);
	char a[FMT_LEN];
	for (size_t k = 0; k < n; k++) {
		const struct stats *s = &((const struct section_agg *)strmap_val_at(map, idx[k]))->s;
		strbuf_puts(o, "<tr");
		html_attr_count(o, "data-count", s->n);
		strbuf_puts(o, ">");
		html_cell(o, strmap_key_at(map, idx[k]));
		html_cell_num(o, format_count(a, optnum_of((double)s->n)));
		html_cell_num(o, sec_value(a, stats_mean(s), u));
		html_cell_num(o, sec_value(a, optnum_of(s->sum), u));
		html_cell_num(o, sec_value(a, stats_max(s), u));
		strbuf_puts(o, "</tr>\n");
	}
	html_table_end(o, n, map->count, "by total; all in metrics.json");
}

void report_html_sections(struct strbuf *o, const struct run *r)
{
	html_section(o, "sections", "Sections", NULL);
	if (r->sec_time.count + r->sec_mem.count + r->sec_bytes.count == 0)
		html_para_na(o,
			     "n/a: no instrumented sections (track_time, track_memory, track_bytes)");
	section_table(o, &r->sec_time, "Time (track_time)", SEC_TIME);
	section_table(o, &r->sec_mem, "Memory (track_memory)", SEC_MEM);
	section_table(o, &r->sec_bytes, "Bytes (track_bytes)", SEC_BYTES);
	strbuf_puts(o, "</section>\n");
}
