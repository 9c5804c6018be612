/* The human summary (summary.txt, and stdout on exit): the tables of
 * roastcoffea's print_summary, plain text, "n/a" for what was not measured. */
#ifndef ROASTOP_REPORT_TEXT_H
#define ROASTOP_REPORT_TEXT_H

#include <cjson/cJSON.h>

#include "roastop/metrics.h"
#include "roastop/session.h"
#include "roastop/strbuf.h"

void text_summary(const struct metrics *m, const struct run *r, struct strbuf *out);
/* A run's summary.txt (and the stdout summary, the newest run's): its
 * tables, then its Dask tasks from extra's "tasks" block (metrics_tasks.h;
 * nothing without it). */
void text_run_summary(const struct metrics *m, const struct run *r, const cJSON *extra,
		      struct strbuf *out);
/* The session's runs, a line each (session.h's figures). */
void text_runs(const struct session *s, struct strbuf *out);

#endif
