/* metrics.json, written from a struct metrics and its run
 * (src/export/metrics_json.c; docs/metrics.md). */
#ifndef ROASTOP_METRICS_JSON_H
#define ROASTOP_METRICS_JSON_H

#include "roastop/diagnosis.h"
#include "roastop/metrics.h"
#include "roastop/metrics_extra.h"
#include "roastop/strbuf.h"

/* Appends the whole metrics.json text (two-space indented): roastcoffea's
 * keys, then roastop's. Unmeasured values are null where roastcoffea always
 * writes the key and left out elsewhere (docs/metrics.md). extra's blocks
 * (may be NULL) go into the "roastop" object, and fs (the run's findings,
 * as its snapshot has them; NULL: no "findings" key). 0, or -1 when out of
 * memory. */
int metrics_write_json(const struct metrics *m, const struct run *r, const struct findings *fs,
		       const struct metrics_extra_input *extra, struct strbuf *out);

/* The other way: the run numbers of a measurement's metrics.json (roastop's
 * or roastcoffea's, the same keys) into m, by the key tables the writer
 * uses: a key absent, null or not a finite number is not measured. The
 * run-dependent parts of m (warnings, sources, progress) stay empty. */
struct cJSON;
void metrics_read_json(const struct cJSON *doc, struct metrics *m);

#endif
