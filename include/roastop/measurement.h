/* The measurement directory, in roastcoffea's layout so that its
 * load_measurement() reads it: metrics.json, metadata.json,
 * start_end_time.txt, plus summary.txt. Every file is replaced atomically
 * (temporary + rename), so a checkpoint is never torn and a symlink planted
 * at a final name is replaced, never followed. */
#ifndef ROASTOP_MEASUREMENT_H
#define ROASTOP_MEASUREMENT_H

#include <cjson/cJSON.h>

#include "roastop/metrics.h"

/* Creates dir (and parents, 0755) when missing. The interval written to
 * start_end_time.txt and metadata.json is m->t_start..m->t_end, the one
 * elapsed_time_seconds measures ("nan,nan" when that is unknown).
 * extra: merged into metrics.json's "roastop" object (may be NULL; not
 * consumed). 0 on success; -1 with one line naming the file in err. */
int measurement_write(const char *dir, const struct metrics *m, const struct run *r,
		      const cJSON *extra, char *err, size_t errsz);

#endif
