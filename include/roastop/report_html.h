/* report.html: a run's post-run report, one self-contained page (inline CSS
 * and SVG, no script, no network, no external font) readable when copied to
 * a laptop. Every number comes from the struct metrics and the run's bounded
 * tables that summary.txt and metrics.json read: this file only formats.
 * Every string from the input (run, dataset, file, worker and section
 * names, error types, reasons) is HTML-escaped. Each chart carries its data
 * as data-* attributes so a test can compare it with metrics.json
 * (docs/metrics.md, "report.html"). */
#ifndef ROASTOP_REPORT_HTML_H
#define ROASTOP_REPORT_HTML_H

#include "roastop/diagnosis.h"
#include "roastop/metrics.h"
#include "roastop/previous.h"
#include "roastop/strbuf.h"

/* Rows of a table (datasets, files, sections, error types), largest first;
 * the rest are counted in a "N more" line. With the timelines' own bound
 * (RUN_TIMELINE_POINTS) this bounds the page (docs/metrics.md). */
#define REPORT_HTML_MAX_ROWS 50

/* Appends the whole page; fs: the run's findings as its snapshot has them
 * (NULL: no Findings section); prev: the last comparable run (previous.h;
 * NULL: none, no section). */
void report_html_write(const struct metrics *m, const struct run *r, const struct findings *fs,
		       const struct past_run *prev, struct strbuf *out);

#endif
