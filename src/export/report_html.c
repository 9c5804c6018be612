/* report.html (report_html.h): the page, its headline numbers and the HTML
 * helpers every part uses (report_htmlpriv.h). Values print by format.c as
 * on the screen; data-* attributes carry the raw numbers (%.17g, which
 * reads back to metrics.json's double). */
#include "roastop/report_html.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "roastop/compare.h"
#include "roastop/format.h"
#include "roastop/report_text.h"

#include "report_htmlpriv.h"

/* ---- text ---------------------------------------------------------- */

void html_esc(struct strbuf *o, const char *s)
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

void html_attr_num(struct strbuf *o, const char *name, optnum v)
{
	if (v.valid && isfinite(v.value))
		strbuf_appendf(o, " %s=\"%.17g\"", name, v.value);
	else
		strbuf_appendf(o, " %s=\"null\"", name);
}

void html_attr_count(struct strbuf *o, const char *name, uint64_t n)
{
	strbuf_appendf(o, " %s=\"%llu\"", name, (unsigned long long)n);
}

void html_attr_str(struct strbuf *o, const char *name, const char *v)
{
	strbuf_appendf(o, " %s=\"", name);
	html_esc(o, v);
	strbuf_puts(o, "\"");
}

void html_cell(struct strbuf *o, const char *text)
{
	strbuf_puts(o, "<td>");
	html_esc(o, text);
	strbuf_puts(o, "</td>");
}

void html_cell_num(struct strbuf *o, const char *text)
{
	strbuf_puts(o, "<td class=\"n\">");
	html_esc(o, text);
	strbuf_puts(o, "</td>");
}

void html_para_na(struct strbuf *o, const char *text)
{
	strbuf_puts(o, "<p class=\"na\">");
	html_esc(o, text);
	strbuf_puts(o, "</p>\n");
}

bool html_section(struct strbuf *o, const char *id, const char *title, const char *na)
{
	strbuf_appendf(o, "<section id=\"%s\"><h2>%s</h2>\n", id, title);
	if (!na)
		return true;
	html_para_na(o, na);
	strbuf_puts(o, "</section>\n");
	return false;
}

void html_table_head(struct strbuf *o, const char *cls, const char *const *cols, size_t n,
		     unsigned num)
{
	strbuf_appendf(o, "<table class=\"%s\"><thead><tr>", cls);
	for (size_t i = 0; i < n; i++)
		strbuf_appendf(o, "<th%s>%s</th>", (num >> i) & 1 ? " class=\"n\"" : "", cols[i]);
	strbuf_puts(o, "</tr></thead><tbody>\n");
}

void html_table_end(struct strbuf *o, size_t shown, size_t total, const char *where)
{
	strbuf_puts(o, "</tbody></table>\n");
	if (total > shown)
		strbuf_appendf(o, "<p class=\"more\" data-more=\"%zu\">%zu more (%s)</p>\n",
			       total - shown, total - shown, where);
}

size_t html_top_rows(const struct strmap *map, row_key key, size_t *idx, size_t cap)
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
		html_esc(o, r->name[0] ? r->name : r->run_id);
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
		html_esc(o, r->name[0] ? r->name : r->run_id);
		strbuf_puts(o, "</span>");
	}
	strbuf_puts(o, "</h1>\n<p class=\"sub\">");
	strbuf_appendf(o, "<span class=\"status st-%s\" id=\"run-status\" data-status=\"%s\">%s</span> ",
		       status, status, status);
	if (r->status_reason[0]) {
		strbuf_puts(o, "<span id=\"run-reason\">");
		html_esc(o, r->status_reason);
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
		html_esc(o, r->processor);
	}
	if (r->run_id[0]) {
		strbuf_puts(o, " &middot; run id ");
		html_esc(o, r->run_id);
	}
	strbuf_appendf(o, " &middot; roastop %s</p></header>\n", ROASTOP_VERSION);
}

/* ---- headline numbers ---------------------------------------------- */

#define R COMPARE_ROW

static const struct compare_row cards[] = {
	R("Elapsed", elapsed_time_seconds, CK_DURATION, NULL),
	R("Events", total_events, CK_COUNT, NULL),
	R("Event rate (elapsed)", event_rate_elapsed_khz, CK_KHZ, NULL),
	R("Data rate", data_rate_gbps, CK_GBPS, NULL),
	R("Bytes read", total_bytes_read, CK_BYTES, NULL),
	R("Chunks", num_chunks, CK_COUNT, NULL),
	R("Failed chunks", num_failed_chunks, CK_COUNT, NULL),
	R("Workers (time-averaged)", avg_workers, CK_FIXED, "%.2f"),
	R("Peak workers", peak_workers, CK_FIXED, "%.0f"),
	R("Cores (time-averaged)", total_cores, CK_FIXED, "%.1f"),
	R("Core efficiency", core_efficiency, CK_FRACTION, NULL),
	R("Peak memory (per worker)", peak_memory_bytes, CK_BYTES, NULL),
	R("CPU utilization (mean)", cpu_utilization_mean_percent, CK_PERCENT, NULL),
	R("Chunk time p50", chunk_duration_p50, CK_DURATION, NULL),
	R("Chunk time p90", chunk_duration_p90, CK_DURATION, NULL),
	R("Chunk time p99", chunk_duration_p99, CK_DURATION, NULL),
};

static void card(struct strbuf *o, const struct compare_row *c, const struct metrics *m)
{
	char a[FMT_LEN];
	optnum v = *(const optnum *)((const char *)m + c->off);
	strbuf_appendf(o, "<div class=\"card\" data-key=\"%s\"", c->key);
	html_attr_num(o, "data-value", v);
	strbuf_appendf(o, "><div class=\"l\">%s</div><div class=\"v\">", c->label);
	html_esc(o, compare_format(a, c, v));
	strbuf_puts(o, "</div></div>\n");
}

static void headline(struct strbuf *o, const struct metrics *m)
{
	strbuf_puts(o, "<section id=\"headline\"><h2>Headline</h2><div class=\"cards\">\n");
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cards); i++)
		card(o, &cards[i], m);
	strbuf_puts(o, "</div>\n");
	for (size_t i = 0; i < m->n_warnings; i++) {
		strbuf_appendf(o, "<p class=\"warn\">%s is null: ", m->warnings[i].key);
		html_esc(o, m->warnings[i].reason);
		strbuf_puts(o, "</p>\n");
	}
	strbuf_puts(o, "</section>\n");
}

/* A text of summary.txt's, escaped, in a section of its own: summary.txt
 * itself (for every number the page has no room for), or its Previous Run. */
static void text_section(struct strbuf *o, const struct metrics *m, const struct run *r,
			 const struct findings *fs, const struct past_run *prev)
{
	struct strbuf text;
	strbuf_init(&text);
	if (prev) {
		previous_text(&text, prev, r, m);
		strbuf_puts(o, "<section id=\"previous\"><h2>Against the previous run</h2><pre>");
	} else {
		text_summary(m, r, fs, &text);
		strbuf_puts(o, "<section id=\"summary\"><h2>summary.txt</h2><details><summary>All "
			       "the numbers of summary.txt</summary><pre>");
	}
	if (text.data && !text.failed)
		html_esc(o, text.data);
	else
		o->failed = true;
	strbuf_puts(o, prev ? "</pre></section>\n" : "</pre></details></section>\n");
	strbuf_free(&text);
}

void report_html_write(const struct metrics *m, const struct run *r, const struct findings *fs,
		       const struct past_run *prev, struct strbuf *out)
{
	page_head(out, r);
	title_block(out, m, r);
	headline(out, m);
	if (fs)
		report_html_findings(out, fs);
	if (prev)
		text_section(out, m, r, fs, prev);
	report_html_timelines(out, m, r);
	report_html_histogram(out, m, r);
	report_html_fine(out, m);
	report_html_datasets(out, m, r);
	report_html_files(out, r);
	report_html_slowest(out, r);
	report_html_failed(out, m, r);
	report_html_sections(out, r);
	text_section(out, m, r, fs, NULL);
	strbuf_puts(out, "<footer class=\"note\"><p>Sizes in KiB, MiB, GiB (powers of 1024); rates "
			 "in decimal units. n/a: not measured. Made by roastop from the run's "
			 "metrics, as metrics.json and summary.txt.</p></footer>\n</body></html>\n");
}
