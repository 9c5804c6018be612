/* metrics.json's roastop.findings (docs/diagnosis.md): the run's findings
 * as an array, [] when none holds. */
#ifndef ROASTOP_FINDINGS_JSON_H
#define ROASTOP_FINDINGS_JSON_H

#include "roastop/jsonw.h"
#include "roastop/metrics.h"

/* Evaluates r's findings (diagnosis_of_record) and writes them under key
 * "findings" of the object w is in. */
void findings_json(struct jsonw *w, const struct metrics *m, const struct run *r);

#endif
