/* Shared by the files of report.html only (report_html.c, the page;
 * report_html_charts.c, the SVG charts; report_html_tables.c, the tables):
 * the HTML text helpers and each part of the page, which report_html_write
 * puts in order. Not a public header. */
#ifndef ROASTOP_REPORT_HTMLPRIV_H
#define ROASTOP_REPORT_HTMLPRIV_H

#include "roastop/diagnosis.h"
#include "roastop/metrics.h"
#include "roastop/run.h"
#include "roastop/strbuf.h"

/* HTML text and attribute values alike: the five characters that matter,
 * and control characters (which HTML forbids) shown as '?'. */
void html_esc(struct strbuf *o, const char *s);
/* report_html_findings.c: the Findings section (docs/diagnosis.md) */
void report_html_findings(struct strbuf *o, const struct findings *fs);
/* ` name="v"`: the number as metrics.json has it, "null" when not measured. */
void html_attr_num(struct strbuf *o, const char *name, optnum v);
void html_attr_count(struct strbuf *o, const char *name, uint64_t n);
void html_attr_str(struct strbuf *o, const char *name, const char *v);
void html_cell(struct strbuf *o, const char *text);
void html_cell_num(struct strbuf *o, const char *text);
void html_para_na(struct strbuf *o, const char *text);
/* Opens the section id headed title; with na, says it (n/a: why) and
 * closes it at once: false, nothing more to write. */
bool html_section(struct strbuf *o, const char *id, const char *title, const char *na);
/* num: bit i set when column i holds numbers (right-aligned). */
void html_table_head(struct strbuf *o, const char *cls, const char *const *cols, size_t n,
		     unsigned num);
/* The table's end, and how many rows it left out. */
void html_table_end(struct strbuf *o, size_t shown, size_t total, const char *where);

/* Indices of the `cap` largest keys among `count` rows, largest first, in
 * fixed memory: every table is at most REPORT_HTML_MAX_ROWS long. */
typedef double (*row_key)(const struct strmap *map, size_t i);
size_t html_top_rows(const struct strmap *map, row_key key, size_t *idx, size_t cap);

/* report_html_charts.c */
void report_html_timelines(struct strbuf *o, const struct metrics *m, const struct run *r);
void report_html_histogram(struct strbuf *o, const struct metrics *m, const struct run *r);
void report_html_fine(struct strbuf *o, const struct metrics *m);

/* report_html_tables.c */
void report_html_datasets(struct strbuf *o, const struct metrics *m, const struct run *r);
void report_html_files(struct strbuf *o, const struct run *r);
void report_html_slowest(struct strbuf *o, const struct run *r);
void report_html_failed(struct strbuf *o, const struct metrics *m, const struct run *r);
void report_html_sections(struct strbuf *o, const struct run *r);

#endif
