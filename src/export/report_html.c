/* report.html. Values are printed by format.c as on the screen and in
 * summary.txt; the data-* attributes carry the raw numbers (%.17g, which
 * reads back to the same double as metrics.json's) so that a test can
 * check each chart against metrics.json. */
#include "roastop/report_html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "roastop/format.h"
#include "roastop/report_text.h"

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

/* ---- text ---------------------------------------------------------- */

/* HTML text and attribute values alike: the five characters that matter,
 * and control characters (which HTML forbids) shown as '?'. */
static void esc(struct strbuf *o, const char *s)
{
	const char *run = s;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		const char *rep = NULL;
		if (c == '&')
			rep = "&amp;";
		else if (c == '<')
			rep = "&lt;";
		else if (c == '>')
			rep = "&gt;";
		else if (c == '"')
			rep = "&quot;";
		else if (c == '\'')
			rep = "&#39;";
		else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			rep = "?";
		if (!rep)
			continue;
		strbuf_append(o, run, (size_t)(s - run));
		strbuf_puts(o, rep);
		run = s + 1;
	}
	strbuf_append(o, run, (size_t)(s - run));
}

/* ` name="v"`: the number as metrics.json has it, "null" when not measured. */
static void attr_num(struct strbuf *o, const char *name, optnum v)
{
	if (v.valid && isfinite(v.value))
		strbuf_appendf(o, " %s=\"%.17g\"", name, v.value);
	else
		strbuf_appendf(o, " %s=\"null\"", name);
}

static void attr_count(struct strbuf *o, const char *name, uint64_t n)
{
	strbuf_appendf(o, " %s=\"%llu\"", name, (unsigned long long)n);
}

static void attr_str(struct strbuf *o, const char *name, const char *v)
{
	strbuf_appendf(o, " %s=\"", name);
	esc(o, v);
	strbuf_puts(o, "\"");
}

static void cell(struct strbuf *o, const char *text)
{
	strbuf_puts(o, "<td>");
	esc(o, text);
	strbuf_puts(o, "</td>");
}

static void cell_num(struct strbuf *o, const char *text)
{
	strbuf_puts(o, "<td class=\"n\">");
	esc(o, text);
	strbuf_puts(o, "</td>");
}

static void para_na(struct strbuf *o, const char *text)
{
	strbuf_puts(o, "<p class=\"na\">");
	esc(o, text);
	strbuf_puts(o, "</p>\n");
}

/* num: bit i set when column i holds numbers (right-aligned). */
static void table_head(struct strbuf *o, const char *cls, const char *const *cols, size_t n,
		       unsigned num)
{
	strbuf_appendf(o, "<table class=\"%s\"><thead><tr>", cls);
	for (size_t i = 0; i < n; i++)
		strbuf_appendf(o, "<th%s>%s</th>", (num >> i) & 1 ? " class=\"n\"" : "", cols[i]);
	strbuf_puts(o, "</tr></thead><tbody>\n");
}

/* The table's end, and how many rows it left out. */
static void table_end(struct strbuf *o, size_t shown, size_t total, const char *where)
{
	strbuf_puts(o, "</tbody></table>\n");
	if (total > shown)
		strbuf_appendf(o, "<p class=\"more\" data-more=\"%zu\">%zu more (%s)</p>\n",
			       total - shown, total - shown, where);
}

/* Indices of the `cap` largest keys among `count` rows, largest first, in
 * fixed memory: every table is at most REPORT_HTML_MAX_ROWS long. */
typedef double (*row_key)(const struct strmap *map, size_t i);

static size_t top_rows(const struct strmap *map, row_key key, size_t *idx, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < map->count; i++) {
		double v = key(map, i);
		if (n == cap && !(v > key(map, idx[n - 1])))
			continue;
		size_t j = n < cap ? n++ : n - 1;
		while (j > 0 && key(map, idx[j - 1]) < v) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	return n;
}

/* ---- page ---------------------------------------------------------- */

static const char CSS[] =
	":root{--bg:#fff;--fg:#1b1f24;--mut:#5b6470;--grid:#d5d9de;--card:#f4f6f8;"
	"--c1:#1f6fd1;--c2:#d1551f;--c3:#2e9b48;--c4:#8a4bc9;--gap:#e0323233;"
	"--ok:#2e9b48;--bad:#c92a2a;--warn:#b7791f}\n"
	"@media (prefers-color-scheme:dark){:root{--bg:#15181c;--fg:#e4e7eb;--mut:#9aa4b1;"
	"--grid:#363c44;--card:#1f242a;--c1:#5aa2ff;--c2:#ff8a50;--c3:#5fd17a;--c4:#c08cff;"
	"--gap:#ff505040;--ok:#5fd17a;--bad:#ff6b6b;--warn:#f0b44c}}\n"
	"body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"
	"'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1000px;padding:16px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
	"border-bottom:1px solid var(--grid);padding-bottom:4px}h3{font-size:14px;margin:14px 0 4px}\n"
	".sub,.na,.more,.note{color:var(--mut)}.na{font-style:italic}\n"
	".status{display:inline-block;padding:1px 8px;border-radius:9px;font-weight:600;"
	"color:var(--bg)}.st-completed{background:var(--ok)}.st-failed{background:var(--bad)}"
	".st-running,.st-incomplete,.st-stopped{background:var(--warn)}\n"
	".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:8px}\n"
	".card{background:var(--card);border-radius:6px;padding:6px 10px}"
	".card .l{color:var(--mut);font-size:12px}.card .v{font-size:18px;font-weight:600}\n"
	"table{border-collapse:collapse;width:100%;font-size:13px}"
	"th,td{text-align:left;padding:3px 6px;border-bottom:1px solid var(--grid);"
	"word-break:break-all}th{color:var(--mut);font-weight:600}td.n,th.n{text-align:right;"
	"white-space:nowrap;word-break:normal}\n"
	"svg{width:100%;height:auto;display:block}svg text{fill:var(--mut);font-size:11px}"
	".ax{stroke:var(--grid);stroke-width:1}.ln{fill:none;stroke-width:1.5}"
	".s1{stroke:var(--c1)}.s2{stroke:var(--c2)}.f1{fill:var(--c1)}.f2{fill:var(--c2)}"
	".f3{fill:var(--c3)}.f4{fill:var(--c4)}.gap{fill:var(--gap)}"
	".mk{stroke:var(--fg);stroke-dasharray:4 3}svg text.mt{fill:var(--fg);paint-order:stroke;"
	"stroke:var(--bg);stroke-width:3px}\n"
	".key span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}"
	".key .f1{background:var(--c1)}.key .f2{background:var(--c2)}.key .f3{background:var(--c3)}"
	".key .f4{background:var(--c4)}"
	".warn{color:var(--bad)}pre{background:var(--card);padding:8px;overflow-x:auto;font-size:12px}\n";

static void page_head(struct strbuf *o, const struct run *r)
{
	strbuf_puts(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		       "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
		       "<meta name=\"color-scheme\" content=\"light dark\">\n"
		       /* no script runs and nothing loads, whatever an input holds */
		       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		       "style-src 'unsafe-inline'\">\n<title>roastop report");
	if (r->name[0] || r->run_id[0]) {
		strbuf_puts(o, " - ");
		esc(o, r->name[0] ? r->name : r->run_id);
	}
	strbuf_appendf(o, "</title>\n<style>\n%s</style></head>\n<body>\n", CSS);
}

/* Wall seconds as UTC: a copied report is read in another time zone. */
static const char *utc(char buf[FMT_LEN], double t)
{
	snprintf(buf, FMT_LEN, "n/a");
	if (!isfinite(t) || fabs(t) > 1e15) /* no time_t can hold it */
		return buf;
	time_t s = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&s, &tm) || !strftime(buf, FMT_LEN, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, FMT_LEN, "n/a");
	return buf;
}

static void title_block(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	const char *status = run_status_name(r->status);
	strbuf_puts(o, "<header><h1>roastop report");
	if (r->name[0] || r->run_id[0]) {
		strbuf_puts(o, ": run <span id=\"run-name\">");
		esc(o, r->name[0] ? r->name : r->run_id);
		strbuf_puts(o, "</span>");
	}
	strbuf_puts(o, "</h1>\n<p class=\"sub\">");
	strbuf_appendf(o, "<span class=\"status st-%s\" id=\"run-status\" data-status=\"%s\">%s</span> ",
		       status, status, status);
	if (r->status_reason[0]) {
		strbuf_puts(o, "<span id=\"run-reason\">");
		esc(o, r->status_reason);
		strbuf_puts(o, "</span> ");
	}
	if (!r->ended)
		strbuf_puts(o, r->started ? "(no run-end received: the run so far) "
					  : "(no run-start received) ");
	char a[FMT_LEN], b[FMT_LEN];
	bool t = m->elapsed_time_seconds.valid;
	strbuf_appendf(o, "<br>%s &ndash; %s", utc(a, t ? m->t_start : NAN), utc(b, t ? m->t_end : NAN));
	if (r->processor[0]) {
		strbuf_puts(o, " &middot; processor ");
		esc(o, r->processor);
	}
	if (r->run_id[0]) {
		strbuf_puts(o, " &middot; run id ");
		esc(o, r->run_id);
	}
	strbuf_appendf(o, " &middot; roastop %s</p></header>\n", ROASTOP_VERSION);
}

/* ---- headline numbers ---------------------------------------------- */

static void card(struct strbuf *o, const char *key, const char *label, optnum v, const char *text)
{
	strbuf_appendf(o, "<div class=\"card\" data-key=\"%s\"", key);
	attr_num(o, "data-value", v);
	strbuf_appendf(o, "><div class=\"l\">%s</div><div class=\"v\">", label);
	esc(o, text);
	strbuf_puts(o, "</div></div>\n");
}

static optnum times100(optnum v)
{
	return v.valid ? optnum_of(v.value * 100) : v;
}

static void headline_rates(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	card(o, "elapsed_time_seconds", "Elapsed", m->elapsed_time_seconds,
	     format_duration(a, m->elapsed_time_seconds));
	card(o, "total_events", "Events", m->total_events, format_count(a, m->total_events));
	card(o, "event_rate_elapsed_khz", "Event rate (elapsed)", m->event_rate_elapsed_khz,
	     format_rate(a, m->event_rate_elapsed_khz, 1e3, "Hz"));
	card(o, "data_rate_gbps", "Data rate", m->data_rate_gbps,
	     format_rate(a, m->data_rate_gbps, 1e9, "bps"));
	card(o, "total_bytes_read", "Bytes read", m->total_bytes_read,
	     format_bytes(a, m->total_bytes_read));
	card(o, "num_chunks", "Chunks", m->num_chunks, format_count(a, m->num_chunks));
	card(o, "num_failed_chunks", "Failed chunks", m->num_failed_chunks,
	     format_count(a, m->num_failed_chunks));
}

static void headline_resources(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	card(o, "avg_workers", "Workers (time-averaged)", m->avg_workers,
	     format_num(a, m->avg_workers, "%.2f"));
	card(o, "peak_workers", "Peak workers", m->peak_workers, format_num(a, m->peak_workers, "%.0f"));
	card(o, "total_cores", "Cores (time-averaged)", m->total_cores,
	     format_num(a, m->total_cores, "%.1f"));
	card(o, "core_efficiency", "Core efficiency", m->core_efficiency,
	     format_num(a, times100(m->core_efficiency), "%.1f %%"));
	card(o, "peak_memory_bytes", "Peak memory (per worker)", m->peak_memory_bytes,
	     format_bytes(a, m->peak_memory_bytes));
	card(o, "cpu_utilization_mean_percent", "CPU utilization (mean)",
	     m->cpu_utilization_mean_percent, format_num(a, m->cpu_utilization_mean_percent, "%.1f %%"));
	card(o, "chunk_duration_p50", "Chunk time p50", m->chunk_duration_p50,
	     format_duration(a, m->chunk_duration_p50));
	card(o, "chunk_duration_p90", "Chunk time p90", m->chunk_duration_p90,
	     format_duration(a, m->chunk_duration_p90));
	card(o, "chunk_duration_p99", "Chunk time p99", m->chunk_duration_p99,
	     format_duration(a, m->chunk_duration_p99));
}

static void headline(struct strbuf *o, const struct metrics *m)
{
	strbuf_puts(o, "<section id=\"headline\"><h2>Headline</h2><div class=\"cards\">\n");
	headline_rates(o, m);
	headline_resources(o, m);
	strbuf_puts(o, "</div>\n");
	for (size_t i = 0; i < m->n_warnings; i++) {
		strbuf_appendf(o, "<p class=\"warn\">%s is null: ", m->warnings[i].key);
		esc(o, m->warnings[i].reason);
		strbuf_puts(o, "</p>\n");
	}
	strbuf_puts(o, "</section>\n");
}

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
	attr_count(o, "data-samples", tl->n_samples);
	attr_num(o, "data-max", timeline_max(tl));
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
		attr_num(o, c->avg_key, c->avg);
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

static void timelines(struct strbuf *o, const struct metrics *m, const struct run *r)
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
	strbuf_puts(o, "<section id=\"timelines\"><h2>Timelines</h2>\n");
	if (r->n_samples == 0) {
		para_na(o, "n/a: no scheduler samples (roastop did not see the Dask scheduler)");
		strbuf_puts(o, "</section>\n");
		return;
	}
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

static void histogram(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	const struct hist *h = &r->duration_hist;
	strbuf_puts(o, "<section id=\"histogram\"><h2>Chunk runtime</h2>\n");
	if (h->count == 0) {
		para_na(o, "n/a: no successful chunks");
		strbuf_puts(o, "</section>\n");
		return;
	}
	uint64_t counts[HIST_BINS];
	struct hist_frame f;
	hist_frame_of(h, &f, counts);
	strbuf_appendf(o, "<svg id=\"hist\" viewBox=\"0 0 %d %d\" role=\"img\" "
		       "aria-label=\"chunk runtime histogram\"", SVG_W, SVG_T + HIST_H + 40);
	attr_count(o, "data-n", h->count);
	attr_num(o, "data-p50", m->chunk_duration_p50);
	attr_num(o, "data-p90", m->chunk_duration_p90);
	attr_num(o, "data-p99", m->chunk_duration_p99);
	attr_num(o, "data-min", m->chunk_duration_min);
	attr_num(o, "data-max", m->chunk_duration_max);
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
		attr_num(o, "data-seconds", p[i].seconds);
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
	cell(o, label);
	cell_num(o, text);
	strbuf_puts(o, "</tr>\n");
}

static void fine_table(struct strbuf *o, const struct metrics *m)
{
	static const char *const cols[] = { "quantity", "value" };
	char a[FMT_LEN];
	table_head(o, "fine", cols, ROASTOP_ARRAY_LEN(cols), 0x2u);
	fine_row(o, "Processor CPU %", format_num(a, m->processor_cpu_percent, "%.1f %%"));
	fine_row(o, "Processor I/O & wait %", format_num(a, m->processor_io_wait_percent, "%.1f %%"));
	fine_row(o, "I/O overhead (of core time)", format_num(a, m->io_overhead_pct, "%.1f %%"));
	fine_row(o, "Memory read (Dask)", format_bytes(a, m->total_bytes_memory_read));
	fine_row(o, "Disk read", format_bytes(a, m->disk_read_bytes));
	fine_row(o, "Disk write", format_bytes(a, m->disk_write_bytes));
	fine_row(o, "Compression overhead", format_duration(a, m->total_compression_overhead_seconds));
	fine_row(o, "Serialization overhead",
		 format_duration(a, m->total_serialization_overhead_seconds));
	table_end(o, 0, 0, "");
}

static void fine(struct strbuf *o, const struct metrics *m)
{
	strbuf_puts(o, "<section id=\"fine\"><h2>Fine metrics (Dask)</h2>\n");
	if (!m->has_fine) {
		para_na(o, "n/a: no Dask fine metrics received");
		strbuf_puts(o, "</section>\n");
		return;
	}
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
	attr_num(o, "data-processor-cpu-percent", m->processor_cpu_percent);
	attr_num(o, "data-processor-io-wait-percent", m->processor_io_wait_percent);
	strbuf_puts(o, ">\n");
	fine_bar(o, parts, n, total);
	strbuf_puts(o, "</svg>\n");
	fine_key(o, parts, n, total);
	fine_table(o, m);
	strbuf_puts(o, "</section>\n");
}

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
	attr_str(o, "data-dataset", d->name);
	attr_count(o, "data-chunks", d->num_chunks);
	attr_count(o, "data-failed", d->num_failed);
	attr_num(o, "data-events", optnum_of(d->total_events));
	attr_num(o, "data-total-duration", optnum_of(d->total_duration));
	attr_num(o, "data-mean-duration", d->mean_duration);
	strbuf_puts(o, ">");
	cell(o, d->name);
	cell_num(o, format_count(a, optnum_of((double)d->num_chunks)));
	cell_num(o, format_count(a, optnum_of((double)d->num_failed)));
	cell_num(o, format_count(a, optnum_of(d->total_events)));
	cell_num(o, format_duration(a, d->mean_duration));
	cell_num(o, format_duration(a, d->p99_duration));
	cell_num(o, format_rate(a, d->event_rate_khz, 1e3, "Hz"));
	cell_num(o, format_num(a, d->share_of_time_percent, "%.1f %%"));
	strbuf_puts(o, "</tr>\n");
}

static void datasets(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	static const char *const cols[] = { "dataset", "chunks", "failed", "events", "mean chunk",
					    "p99 chunk", "event rate (chunk time)", "share of time" };
	size_t idx[REPORT_HTML_MAX_ROWS];
	strbuf_puts(o, "<section id=\"datasets\"><h2>Datasets</h2>\n");
	if (r->datasets.count == 0) {
		para_na(o, "n/a: no chunk named a dataset");
		strbuf_puts(o, "</section>\n");
		return;
	}
	size_t n = top_rows(&r->datasets, dataset_time, idx, REPORT_HTML_MAX_ROWS);
	table_head(o, "datasets", cols, ROASTOP_ARRAY_LEN(cols), 0xFEu);
	struct dataset_metrics d;
	for (size_t k = 0; k < n; k++)
		if (metrics_dataset(r, m, idx[k], &d))
			dataset_row(o, &d);
	table_end(o, n, r->datasets.count, "by chunk time; all in metrics.json");
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
	attr_str(o, "data-file", name);
	attr_count(o, "data-chunks", f->n_chunks);
	attr_num(o, "data-events", optnum_of(f->total_events));
	strbuf_puts(o, ">");
	cell(o, name);
	cell(o, f->dataset);
	cell_num(o, format_count(a, optnum_of((double)f->n_chunks)));
	cell_num(o, format_count(a, optnum_of(f->total_events)));
	cell_num(o, format_duration(a, optnum_of(f->total_duration)));
	cell_num(o, format_num(a, f->has_first ? f->bytes_read_percent : optnum_none(), "%.1f %%"));
	cell_num(o, format_num(a, f->has_first ? f->branches_read_percent : optnum_none(), "%.1f %%"));
	cell_num(o, format_num(a, f->has_meta ? f->compression_ratio : optnum_none(), "%.2f"));
	strbuf_puts(o, "</tr>\n");
}

static void files(struct strbuf *o, const struct run *r)
{
	static const char *const cols[] = { "file", "dataset", "chunks", "events", "chunk time",
					    "bytes read", "branches read", "compression" };
	size_t idx[REPORT_HTML_MAX_ROWS];
	strbuf_puts(o, "<section id=\"files\"><h2>Files</h2>\n");
	if (r->files.count == 0) {
		para_na(o, "n/a: no chunk named a file");
		strbuf_puts(o, "</section>\n");
		return;
	}
	size_t n = top_rows(&r->files, file_time, idx, REPORT_HTML_MAX_ROWS);
	table_head(o, "files", cols, ROASTOP_ARRAY_LEN(cols), 0xFCu);
	for (size_t k = 0; k < n; k++)
		file_row(o, strmap_key_at(&r->files, idx[k]), strmap_val_at(&r->files, idx[k]));
	table_end(o, n, r->files.count, "by chunk time; per-file reads in metrics.json");
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

static void slowest(struct strbuf *o, const struct run *r)
{
	static const char *const cols[] = { "time", "file", "entries", "events", "dataset", "worker" };
	struct topk_item items[TOPK_CAP];
	size_t n = topk_sorted(&r->slowest, items, TOPK_CAP);
	strbuf_puts(o, "<section id=\"slowest\"><h2>Slowest chunks</h2>\n");
	if (n == 0) {
		para_na(o, "n/a: no successful chunks");
		strbuf_puts(o, "</section>\n");
		return;
	}
	table_head(o, "slowest", cols, ROASTOP_ARRAY_LEN(cols), 0x0Du);
	char a[FMT_LEN], e[2 * FMT_LEN];
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(o, "<tr");
		attr_num(o, "data-duration", optnum_of(items[i].duration));
		strbuf_puts(o, ">");
		cell_num(o, format_duration(a, optnum_of(items[i].duration)));
		cell(o, items[i].file[0] ? items[i].file : "n/a");
		strbuf_appendf(o, "<td class=\"n\">%s</td>", entries(e, items[i].entry_start, items[i].entry_stop)); /* digits only */
		cell_num(o, format_count(a, items[i].num_events));
		cell(o, items[i].dataset[0] ? items[i].dataset : "n/a");
		cell(o, items[i].worker[0] ? items[i].worker : "n/a");
		strbuf_puts(o, "</tr>\n");
	}
	table_end(o, n, n, "");
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
	size_t n = top_rows(&r->errors, error_count, idx, REPORT_HTML_MAX_ROWS);
	table_head(o, "failed", cols, ROASTOP_ARRAY_LEN(cols), 0x2u);
	char a[FMT_LEN];
	for (size_t k = 0; k < n; k++) {
		double c = error_count(&r->errors, idx[k]);
		strbuf_puts(o, "<tr");
		attr_count(o, "data-chunks", (uint64_t)c);
		strbuf_puts(o, ">");
		cell(o, strmap_key_at(&r->errors, idx[k]));
		cell_num(o, format_count(a, optnum_of(c)));
		strbuf_puts(o, "</tr>\n");
	}
	table_end(o, n, r->errors.count, "by count; all in metrics.json");
}

/* The latest failed chunks themselves (failed.h): which file to look at. */
static void failed_latest(struct strbuf *o, const struct run *r)
{
	static const char *const cols[] = { "exception", "file", "entries", "dataset", "worker",
					    "duration" };
	table_head(o, "failed-chunks", cols, ROASTOP_ARRAY_LEN(cols), 0x24u);
	char a[FMT_LEN], e[2 * FMT_LEN];
	size_t n = 0;
	for (const struct failed_chunk *c; (c = failed_get(&r->failed, n)) != NULL; n++) {
		strbuf_puts(o, "<tr>");
		cell(o, c->error[0] ? c->error : "n/a");
		cell(o, c->file[0] ? c->file : "n/a");
		strbuf_appendf(o, "<td class=\"n\">%s</td>", entries(e, c->entry_start, c->entry_stop)); /* digits only */
		cell(o, c->dataset[0] ? c->dataset : "n/a");
		cell(o, c->worker[0] ? c->worker : "n/a");
		cell_num(o, format_duration(a, c->duration));
		strbuf_puts(o, "</tr>\n");
	}
	table_end(o, n, (size_t)r->failed.n, "the latest first; the others in the recording");
}

static void inflight_table(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	static const char *const cols[] = { "age", "file", "dataset", "worker" };
	const struct inflight_chunk *c[REPORT_HTML_MAX_ROWS];
	size_t n = inflight_oldest(&r->inflight, c, REPORT_HTML_MAX_ROWS);
	if (n == 0)
		return;
	strbuf_puts(o, "<h3>Chunks running at the end (oldest first)</h3>\n");
	table_head(o, "inflight", cols, ROASTOP_ARRAY_LEN(cols), 0x1u);
	char a[FMT_LEN];
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(o, "<tr>");
		format_duration(a, optnum_of(metrics_inflight_age(m, c[i])));
		if (metrics_straggler(m, c[i]))
			strncat(a, " (straggler)", FMT_LEN - strlen(a) - 1);
		cell_num(o, a);
		cell(o, c[i]->file[0] ? c[i]->file : "n/a");
		cell(o, c[i]->dataset[0] ? c[i]->dataset : "n/a");
		cell(o, c[i]->worker[0] ? c[i]->worker : "n/a");
		strbuf_puts(o, "</tr>\n");
	}
	table_end(o, n, m->inflight_running.valid ? (size_t)m->inflight_running.value : n, "");
}

static void failed(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	char a[FMT_LEN], b[FMT_LEN];
	strbuf_puts(o, "<section id=\"failed\"><h2>Failed chunks</h2>\n");
	if (r->n_chunks == 0)
		para_na(o, "n/a: no chunk records received");
	else
		strbuf_appendf(o, "<p data-failed=\"%llu\">%s of %s chunks failed%s</p>\n",
			       (unsigned long long)r->n_failed, format_count(a, m->num_failed_chunks),
			       format_count(b, m->num_chunks),
			       r->n_failed ? ", by exception type:" : ".");
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
	size_t n = top_rows(map, section_total, idx, REPORT_HTML_MAX_ROWS);
	table_head(o, "sections", cols, ROASTOP_ARRAY_LEN(cols), 0x1Eu);
	char a[FMT_LEN];
	for (size_t k = 0; k < n; k++) {
		const struct stats *s = &((const struct section_agg *)strmap_val_at(map, idx[k]))->s;
		strbuf_puts(o, "<tr");
		attr_count(o, "data-count", s->n);
		strbuf_puts(o, ">");
		cell(o, strmap_key_at(map, idx[k]));
		cell_num(o, format_count(a, optnum_of((double)s->n)));
		cell_num(o, sec_value(a, stats_mean(s), u));
		cell_num(o, sec_value(a, optnum_of(s->sum), u));
		cell_num(o, sec_value(a, stats_max(s), u));
		strbuf_puts(o, "</tr>\n");
	}
	table_end(o, n, map->count, "by total; all in metrics.json");
}

static void sections(struct strbuf *o, const struct run *r)
{
	strbuf_puts(o, "<section id=\"sections\"><h2>Sections</h2>\n");
	if (r->sec_time.count + r->sec_mem.count + r->sec_bytes.count == 0)
		para_na(o, "n/a: no instrumented sections (track_time, track_memory, track_bytes)");
	section_table(o, &r->sec_time, "Time (track_time)", SEC_TIME);
	section_table(o, &r->sec_mem, "Memory (track_memory)", SEC_MEM);
	section_table(o, &r->sec_bytes, "Bytes (track_bytes)", SEC_BYTES);
	strbuf_puts(o, "</section>\n");
}

/* summary.txt itself, for every number the page has no room for. */
static void summary(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	struct strbuf text;
	strbuf_init(&text);
	text_summary(m, r, &text);
	strbuf_puts(o, "<section id=\"summary\"><h2>summary.txt</h2><details><summary>All the "
		       "numbers of summary.txt</summary><pre>");
	if (text.data && !text.failed)
		esc(o, text.data);
	else
		o->failed = true;
	strbuf_puts(o, "</pre></details></section>\n");
	strbuf_free(&text);
}

void report_html_write(const struct metrics *m, const struct run *r, struct strbuf *out)
{
	page_head(out, r);
	title_block(out, m, r);
	headline(out, m);
	timelines(out, m, r);
	histogram(out, m, r);
	fine(out, m);
	datasets(out, m, r);
	files(out, r);
	slowest(out, r);
	failed(out, m, r);
	sections(out, r);
	summary(out, m, r);
	strbuf_puts(out, "<footer class=\"note\"><p>Sizes in KiB, MiB, GiB (powers of 1024); rates "
			 "in decimal units. n/a: not measured. Made by roastop from the run's "
			 "metrics, as metrics.json and summary.txt.</p></footer>\n</body></html>\n");
}
