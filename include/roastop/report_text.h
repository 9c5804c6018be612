/* The human summary (summary.txt, and stdout on exit): the tables of
 * roastcoffea's print_summary, plain text, "n/a" for what was not measured. */
#ifndef ROASTOP_REPORT_TEXT_H
#define ROASTOP_REPORT_TEXT_H

#include "roastop/diagnosis.h"
#include "roastop/metrics.h"
#include "roastop/metrics_extra.h"
#include "roastop/session.h"
#include "roastop/strbuf.h"

/* fs: the run's findings as its snapshot has them (NULL: no Findings
 * section). */
void text_summary(const struct metrics *m, const struct run *r, const struct findings *fs,
		  struct strbuf *out);
/* A run's summary.txt (and the stdout summary, the newest run's): its
 * tables, then its Dask tasks when extra says they are written
 * (metrics_tasks.h; nothing when extra is NULL). */
void text_run_summary(const struct metrics *m, const struct run *r, const struct findings *fs,
		      const struct metrics_extra_input *extra, struct strbuf *out);
/* The session's runs, a line each (session.h's figures). */
void text_runs(const struct session *s, struct strbuf *out);

#endif
