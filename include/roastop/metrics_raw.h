/* The raw-data blocks of metrics.json (src/export/metrics_raw.c), for
 * metrics_json.c. */
#ifndef ROASTOP_METRICS_RAW_H
#define ROASTOP_METRICS_RAW_H

#include "roastop/metrics.h"

/* metrics.json's raw data in roastcoffea's form (docs/metrics.md, "Raw
 * data"): tracking_data (null without scheduler samples); chunk_info and
 * raw_chunk_metrics (left out without chunk records); raw_span_metrics
 * (left out without fine metrics); and roastop's account of them (inside
 * the "roastop" object). */
struct jsonw;
void metrics_raw_tracking(struct jsonw *w, const struct run *r);
void metrics_raw_chunks(struct jsonw *w, const struct run *r);
void metrics_raw_span(struct jsonw *w, const struct run *r, const struct metrics *m);
void metrics_raw_roastop(struct jsonw *w, const struct run *r);
/* Wall seconds t as roastcoffea's timestamps: ISO 8601, local time,
 * microseconds, no offset (Python's datetime.isoformat()). */
void metrics_raw_iso(char *buf, size_t size, double t);

#endif
