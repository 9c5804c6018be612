/* metrics.json, written from a struct metrics and its run
 * (src/export/metrics_json.c; docs/metrics.md). */
#ifndef ROASTOP_METRICS_JSON_H
#define ROASTOP_METRICS_JSON_H

#include "roastop/metrics.h"
#include "roastop/metrics_extra.h"
#include "roastop/strbuf.h"

/* Appends the whole metrics.json text (two-space indented): roastcoffea's
 * keys, then roastop's. Unmeasured values are null where roastcoffea always
 * writes the key and left out elsewhere (docs/metrics.md). extra's blocks
 * (may be NULL) go into the "roastop" object. 0, or -1 when out of memory. */
int metrics_write_json(const struct metrics *m, const struct run *r,
		       const struct metrics_extra_input *extra, struct strbuf *out);

#endif
