/* report.html's inline SVG charts: the timelines, the chunk-runtime
 * histogram and the fine-metrics bar, each with its raw numbers in data-*
 * attributes (report_html.c writes the page). */
#include "roastop/report_html.h"
#include "report_htmlpriv.h"

#include <math.h>
#include <string.h>

#include "roastop/format.h"

/* SVG geometry (viewBox units; the page scales it to its width). */
#define SVG_W 960
#define SVG_L 70 /* left margin: the y labels */
#define SVG_R 16
#define SVG_T 12
#define PLOT_W (SVG_W - SVG_L - SVG_R)
#define TL_H 110 /* a timeline's plot height */
#define HIST_H 170
#define HIST_BINS 48
#define FINE_H 28
/* Gaps shaded per chart: they bound the page; data-gaps counts them all. */
#define TL_GAPS_SHADED 100

/* An x-axis label stays inside the plot: the first starts at its tick,
 * the last ends at it. */
static const char *anchor(int i, int last)
{
	return i == 0 ? "start" : (i == last ? "end" : "middle");
}

/* ---- timelines ----------------------------------------------------- */

/* The smallest of 1, 2, 2.5, 5 x 10^k at or above v (in IEC steps for
 * bytes, so the axis reads "512 MiB", not "537 MB"). */
static double nice_ceil(double v, bool bytes)
{
	if (!(v > 0) || !isfinite(v))
		return 1;
	double unit = bytes ? format_bytes_step(v, NULL) : 1;
	double x = v / unit, p = pow(10, floor(log10(x)));
	static const double steps[] = { 1, 2, 2.5, 5, 10 };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(steps); i++)
		if (steps[i] * p >= x * (1 - 1e-9))
			return steps[i] * p * unit;
	return 10 * p * unit;
}

struct tl_frame {
	double t0, t1; /* the x range: the run's interval and every point drawn */
};

struct tl_chart {
	const char *id, *title, *unit; /* unit: format_axis's ("B" for bytes) */
	const struct timeline *tl[2];
	const char *label[2];
	optnum avg; /* the metric the chart backs, for the test */
	const char *avg_key;
};

static double tl_x(const struct tl_frame *f, double t)
{
	double span = f->t1 - f->t0;
	return SVG_L + (span > 0 ? (t - f->t0) / span : 0) * PLOT_W;
}

static double tl_y(double v, double ymax)
{
	return SVG_T + TL_H - fmin(fmax(v / ymax, 0), 1) * TL_H;
}

/* One series: a polyline per stretch between gaps, and (under the first
 * series, up to TL_GAPS_SHADED of them) the gaps shaded: the scheduler was
 * lost, no line is drawn across it. */
static void tl_series(struct strbuf *o, const struct tl_frame *f, const struct timeline *tl,
		      int k, const char *label, double ymax)
{
	size_t gaps = 0;
	for (size_t i = 1; i < tl->len; i++)
		gaps += tl->pts[i].gap_before;
	strbuf_appendf(o, "<g data-series=\"%s\" data-points=\"%zu\" data-gaps=\"%zu\"", label,
		       tl->len, gaps);
	html_attr_count(o, "data-samples", tl->n_samples);
	html_attr_num(o, "data-max", timeline_max(tl));
	strbuf_puts(o, ">\n");
	size_t shaded = 0;
	for (size_t i = 1; k == 1 && i < tl->len && shaded < TL_GAPS_SHADED; i++) {
		if (!tl->pts[i].gap_before)
			continue;
		shaded++;
		strbuf_appendf(o, "<rect class=\"gap\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			       "height=\"%d\"><title>scheduler lost</title></rect>\n",
			       tl_x(f, tl->pts[i - 1].t), SVG_T,
			       tl_x(f, tl->pts[i].t) - tl_x(f, tl->pts[i - 1].t), TL_H);
	}
	for (size_t i = 0; i < tl->len; i++) {
		if (i == 0 || tl->pts[i].gap_before)
			strbuf_appendf(o, "%s<polyline class=\"ln s%d\" points=\"", i ? "\"/>\n" : "", k);
		strbuf_appendf(o, "%.1f,%.1f ", tl_x(f, tl->pts[i].t), tl_y(tl->pts[i].mean, ymax));
	}
	strbuf_puts(o, tl->len ? "\"/>\n</g>\n" : "</g>\n");
}

static void tl_axes(struct strbuf *o, const struct tl_frame *f, double ymax, const char *unit)
{
	char a[FMT_LEN];
	for (int i = 0; i <= 2; i++) {
		double v = ymax * i / 2, y = tl_y(v, ymax);
		strbuf_appendf(o, "<line class=\"ax\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			       "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			       SVG_L, y, SVG_W - SVG_R, y, SVG_L - 6, y + 4, format_axis(a, v, unit));
	}
	for (int i = 0; i <= 4; i++) {
		double t = f->t0 + (f->t1 - f->t0) * i / 4;
		strbuf_appendf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>\n",
			       tl_x(f, t), SVG_T + TL_H + 16, anchor(i, 4),
			       format_duration(a, optnum_of(t - f->t0)));
	}
}

static void tl_chart(struct strbuf *o, const struct tl_frame *f, const struct tl_chart *c)
{
	double top = 0;
	for (int k = 0; k < 2 && c->tl[k]; k++)
		for (size_t i = 0; i < c->tl[k]->len; i++)
			top = fmax(top, c->tl[k]->pts[i].mean);
	double ymax = nice_ceil(top, strcmp(c->unit, "B") == 0);
	strbuf_appendf(o, "<h3>%s</h3>\n<svg id=\"tl-%s\" data-chart=\"%s\" viewBox=\"0 0 %d %d\" "
		       "role=\"img\" aria-label=\"%s over time\"",
		       c->title, c->id, c->id, SVG_W, SVG_T + TL_H + 22, c->title);
	strbuf_appendf(o, " data-t0=\"%.17g\" data-t1=\"%.17g\" data-ymax=\"%.17g\"", f->t0, f->t1,
		       ymax);
	if (c->avg_key)
		html_attr_num(o, c->avg_key, c->avg);
	strbuf_puts(o, ">\n");
	tl_axes(o, f, ymax, c->unit);
	for (int k = 0; k < 2 && c->tl[k]; k++)
		tl_series(o, f, c->tl[k], k + 1, c->label[k], ymax);
	strbuf_puts(o, "</svg>\n");
	if (c->tl[1])
		strbuf_appendf(o, "<p class=\"key\"><span class=\"f1\"></span>%s"
			       "<span class=\"f2\"></span>%s</p>\n", c->label[0], c->label[1]);
}

/* The x range common to every chart, so that they line up. */
static struct tl_frame tl_frame_of(const struct metrics *m, const struct tl_chart *c, size_t n)
{
	struct tl_frame f = { INFINITY, -INFINITY };
	if (m->elapsed_time_seconds.valid) {
		f.t0 = m->t_start;
		f.t1 = m->t_end;
	}
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2 && c[i].tl[k]; k++) {
			const struct timeline *tl = c[i].tl[k];
			if (tl->len) {
				f.t0 = fmin(f.t0, tl->pts[0].t);
				f.t1 = fmax(f.t1, tl->pts[tl->len - 1].t);
			}
		}
	if (!isfinite(f.t0) || !isfinite(f.t1)) /* no interval and no point: empty axes */
		f.t0 = f.t1 = 0;
	return f;
}

void report_html_timelines(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	const struct tl_chart charts[] = {
		{ "workers", "Workers", "", { &r->tl_workers, NULL }, { "workers", NULL },
		  m->avg_workers, "data-avg-workers" },
		{ "threads", "Threads (cores)", "", { &r->tl_threads, NULL }, { "threads", NULL },
		  m->total_cores, "data-total-cores" },
		{ "memory", "Memory used vs limit (all workers)", "B",
		  { &r->tl_mem_used, &r->tl_mem_limit }, { "used", "limit" }, optnum_none(), NULL },
		{ "cpu", "CPU (mean over workers)", "%", { &r->tl_cpu, NULL }, { "cpu", NULL },
		  optnum_none(), NULL },
		{ "executing", "Tasks executing", "", { &r->tl_executing, NULL }, { "executing", NULL },
		  optnum_none(), NULL },
	};
	if (!html_section(o, "timelines", "Timelines",
			  r->n_samples ? NULL
				       : "n/a: no scheduler samples (roastop did not see the Dask "
					 "scheduler)"))
		return;
	struct tl_frame f = tl_frame_of(m, charts, ROASTOP_ARRAY_LEN(charts));
	strbuf_appendf(o, "<p class=\"note\">Time since the run's start. Each point is the mean of "
		       "the samples it covers (at most %d points per line); shaded: the scheduler "
		       "was lost (%llu time%s).</p>\n",
		       RUN_TIMELINE_POINTS, (unsigned long long)r->scheduler_gaps,
		       r->scheduler_gaps == 1 ? "" : "s");
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(charts); i++)
		tl_chart(o, &f, &charts[i]);
	strbuf_puts(o, "</section>\n");
}

/* ---- chunk-runtime histogram --------------------------------------- */

struct hist_frame {
	double lo, hi; /* log axis */
	size_t nb;
	uint64_t top;
};

/* As the live histogram: the values' range, widened when narrow. */
static void hist_frame_of(const struct hist *h, struct hist_frame *f, uint64_t *counts)
{
	double low = h->lo <= h->hi ? hist_bucket_lower(h->lo) : HIST_MIN;
	f->lo = fmax(h->min, fmax(low, HIST_MIN));
	f->hi = fmax(h->max, f->lo);
	if (f->hi < f->lo * 4) {
		double mid = sqrt(f->lo * f->hi);
		f->lo = mid / 2;
		f->hi = mid * 2;
	}
	/* no display bin narrower than two source buckets, or the chart combs */
	size_t max_bins = (size_t)(log(f->hi / f->lo) / log(1.02) / 2);
	f->nb = max_bins < 8 ? 8 : (max_bins < HIST_BINS ? max_bins : HIST_BINS);
	hist_rebin(h, f->lo, f->hi, counts, f->nb);
	f->top = 1;
	for (size_t i = 0; i < f->nb; i++)
		f->top = counts[i] > f->top ? counts[i] : f->top;
}

static double hist_x(const struct hist_frame *f, double v)
{
	return SVG_L + log(v / f->lo) / log(f->hi / f->lo) * PLOT_W;
}

static void hist_bars(struct strbuf *o, const struct hist_frame *f, const uint64_t *counts)
{
	double w = (double)PLOT_W / (double)f->nb;
	for (size_t i = 0; i < f->nb; i++) {
		double h = (double)counts[i] / (double)f->top * HIST_H;
		double lo = f->lo * pow(f->hi / f->lo, (double)i / (double)f->nb);
		double hi = f->lo * pow(f->hi / f->lo, (double)(i + 1) / (double)f->nb);
		strbuf_appendf(o, "<rect class=\"f1\" data-count=\"%llu\" data-lo=\"%.6g\" "
			       "data-hi=\"%.6g\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			       "<title>%llu</title></rect>\n",
			       (unsigned long long)counts[i], lo, hi, SVG_L + w * (double)i,
			       SVG_T + HIST_H - h, fmax(w - 1, 0.5), h, (unsigned long long)counts[i]);
	}
}

static void hist_marks(struct strbuf *o, const struct hist_frame *f, const struct metrics *m)
{
	const optnum v[] = { m->chunk_duration_p50, m->chunk_duration_p90, m->chunk_duration_p99 };
	static const char *const name[] = { "p50", "p90", "p99" };
	char a[FMT_LEN];
	for (size_t i = 0; i < 3; i++) {
		if (!v[i].valid || !(v[i].value > 0))
			continue;
		double x = fmin(fmax(hist_x(f, v[i].value), SVG_L), SVG_W - SVG_R);
		strbuf_appendf(o, "<line class=\"mk\" data-mark=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
			       "y2=\"%d\"/><text class=\"mt\" x=\"%.1f\" y=\"%d\">%s %s</text>\n",
			       name[i], x, SVG_T, x, SVG_T + HIST_H, x + 3, SVG_T + 10 + 12 * (int)i,
			       name[i], format_duration(a, v[i]));
	}
}

static void hist_axes(struct strbuf *o, const struct hist_frame *f)
{
	char a[FMT_LEN];
	int y = SVG_T + HIST_H;
	strbuf_appendf(o, "<line class=\"ax\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
		       "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%llu</text>"
		       "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n",
		       SVG_L, y, SVG_W - SVG_R, y, SVG_L - 6, SVG_T + 10,
		       (unsigned long long)f->top, SVG_L - 6, y);
	for (int i = 0; i <= 4; i++) {
		double v = f->lo * pow(f->hi / f->lo, i / 4.0);
		strbuf_appendf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>\n",
			       hist_x(f, v), y + 16, anchor(i, 4), format_duration(a, optnum_of(v)));
	}
	strbuf_appendf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">chunk time, log scale</text>\n",
		       SVG_W - SVG_R, y + 32);
}

void report_html_histogram(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	const struct hist *h = &r->duration_hist;
	if (!html_section(o, "histogram", "Chunk runtime",
			  h->count == 0 ? "n/a: no successful chunks" : NULL))
		return;
	uint64_t counts[HIST_BINS];
	struct hist_frame f;
	hist_frame_of(h, &f, counts);
	strbuf_appendf(o, "<svg id=\"hist\" viewBox=\"0 0 %d %d\" role=\"img\" "
		       "aria-label=\"chunk runtime histogram\"", SVG_W, SVG_T + HIST_H + 40);
	html_attr_count(o, "data-n", h->count);
	html_attr_num(o, "data-p50", m->chunk_duration_p50);
	html_attr_num(o, "data-p90", m->chunk_duration_p90);
	html_attr_num(o, "data-p99", m->chunk_duration_p99);
	html_attr_num(o, "data-min", m->chunk_duration_min);
	html_attr_num(o, "data-max", m->chunk_duration_max);
	strbuf_appendf(o, " data-bins=\"%zu\">\n", f.nb);
	hist_axes(o, &f);
	hist_bars(o, &f, counts);
	hist_marks(o, &f, m);
	strbuf_puts(o, "</svg>\n");
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
	strbuf_appendf(o, "<p class=\"note\">%llu successful chunks; mean %s, std %s, max %s. "
		       "Quantiles within 1 %%.</p>\n</section>\n",
		       (unsigned long long)h->count, format_duration(a, m->chunk_duration_mean),
		       format_duration(b, m->chunk_duration_std), format_duration(c, m->chunk_duration_max));
}

/* ---- fine metrics --------------------------------------------------- */

struct fine_part {
	const char *key, *label;
	optnum seconds;
};

static void fine_bar(struct strbuf *o, const struct fine_part *p, size_t n, double total)
{
	double x = SVG_L;
	char a[FMT_LEN];
	for (size_t i = 0; i < n; i++) {
		double share = total > 0 && p[i].seconds.valid ? p[i].seconds.value / total : 0;
		double w = share * PLOT_W;
		strbuf_appendf(o, "<rect class=\"f%zu\" data-key=\"%s\"", i + 1, p[i].key);
		html_attr_num(o, "data-seconds", p[i].seconds);
		strbuf_appendf(o, " data-share=\"%.17g\" x=\"%.1f\" y=\"%d\" width=\"%.2f\" "
			       "height=\"%d\"><title>%s: %s</title></rect>\n",
			       share * 100, x, SVG_T, w, FINE_H, p[i].label,
			       format_duration(a, p[i].seconds));
		x += w;
	}
}

static void fine_key(struct strbuf *o, const struct fine_part *p, size_t n, double total)
{
	char a[FMT_LEN];
	strbuf_puts(o, "<p class=\"key\">");
	for (size_t i = 0; i < n; i++) {
		optnum share = total > 0 && p[i].seconds.valid ? optnum_of(p[i].seconds.value / total * 100)
							      : optnum_none();
		strbuf_appendf(o, "<span class=\"f%zu\"></span>%s %s", i + 1, p[i].label,
			       format_duration(a, p[i].seconds));
		strbuf_appendf(o, " (%s)", format_num(a, share, "%.1f %%"));
	}
	strbuf_puts(o, "</p>\n");
}

static void fine_row(struct strbuf *o, const char *label, const char *text)
{
	strbuf_puts(o, "<tr>");
	html_cell(o, label);
	html_cell_num(o, text);
	strbuf_puts(o, "</tr>\n");
}

static void fine_table(struct strbuf *o, const struct metrics *m)
{
	static const char *const cols[] = { "quantity", "value" };
	char a[FMT_LEN];
	html_table_head(o, "fine", cols, ROASTOP_ARRAY_LEN(cols), 0x2u);
	fine_row(o, "Processor CPU %", format_num(a, m->processor_cpu_percent, "%.1f %%"));
	fine_row(o, "Processor I/O & wait %", format_num(a, m->processor_io_wait_percent, "%.1f %%"));
	fine_row(o, "I/O overhead (of core time)", format_num(a, m->io_overhead_pct, "%.1f %%"));
	fine_row(o, "Memory read (Dask)", format_bytes(a, m->total_bytes_memory_read));
	fine_row(o, "Disk read", format_bytes(a, m->disk_read_bytes));
	fine_row(o, "Disk write", format_bytes(a, m->disk_write_bytes));
	fine_row(o, "Compression overhead", format_duration(a, m->total_compression_overhead_seconds));
	fine_row(o, "Serialization overhead",
		 format_duration(a, m->total_serialization_overhead_seconds));
	html_table_end(o, 0, 0, "");
}

void report_html_fine(struct strbuf *o, const struct metrics *m)
{
	if (!html_section(o, "fine", "Fine metrics (Dask)",
			  !m->has_fine ? "n/a: no Dask fine metrics received" : NULL))
		return;
	const struct fine_part parts[] = {
		{ "processor_cpu_time_seconds", "processor CPU", m->processor_cpu_time_seconds },
		{ "processor_io_wait_time_seconds", "processor I/O &amp; wait",
		  m->processor_io_wait_time_seconds },
		{ "overhead_cpu_time_seconds", "Dask overhead CPU", m->overhead_cpu_time_seconds },
		{ "overhead_io_wait_time_seconds", "Dask overhead I/O &amp; wait",
		  m->overhead_io_wait_time_seconds },
	};
	size_t n = m->processor_known ? 4 : 2;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += parts[i].seconds.valid ? parts[i].seconds.value : 0;
	strbuf_appendf(o, "<p class=\"note\">Task time by kind (%s)%s.</p>\n",
		       m->fine_from_span ? "the run's Dask span"
					 : "the cluster's counters since roastop saw them",
		       m->processor_known ? ""
					  : "; processor name unknown: every task counted as processor work");
	strbuf_appendf(o, "<svg id=\"fine-bar\" viewBox=\"0 0 %d %d\" role=\"img\" "
		       "aria-label=\"fine metrics breakdown\" data-source=\"%s\" "
		       "data-total-seconds=\"%.17g\"",
		       SVG_W, SVG_T + FINE_H + 4, m->fine_from_span ? "span" : "cluster", total);
	html_attr_num(o, "data-processor-cpu-percent", m->processor_cpu_percent);
	html_attr_num(o, "data-processor-io-wait-percent", m->processor_io_wait_percent);
	strbuf_puts(o, ">\n");
	fine_bar(o, parts, n, total);
	strbuf_puts(o, "</svg>\n");
	fine_key(o, parts, n, total);
	fine_table(o, m);
	strbuf_puts(o, "</section>\n");
}
