/* metrics.json's roastop.findings (docs/diagnosis.md): the run's findings
 * as an array, [] when none holds. */
#ifndef ROASTOP_FINDINGS_JSON_H
#define ROASTOP_FINDINGS_JSON_H

#include "roastop/jsonw.h"
#include "roastop/diagnosis.h"

/* Writes fs (the run's, as the snapshot evaluated them) under key
 * "findings" of the object w is in; t0: the run's start (epoch seconds). */
void findings_json(struct jsonw *w, const struct findings *fs, double t0);

#endif
