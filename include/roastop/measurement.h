/* The measurement directory, in roastcoffea's layout so that its
 * load_measurement() reads it: metrics.json, metadata.json,
 * start_end_time.txt, plus summary.txt and report.html (report_html.h).
 * Every file is replaced atomically (a temporary with an unpredictable name
 * + rename): a checkpoint is never torn, and a symlink planted at a final
 * name is replaced, never followed. The directory itself must not be a
 * symbolic link (refused). */
#ifndef ROASTOP_MEASUREMENT_H
#define ROASTOP_MEASUREMENT_H

#include "roastop/diagnosis.h"
#include "roastop/metrics.h"
#include "roastop/metrics_extra.h"

/* Creates dir (and parents, 0755) when missing. The interval written to
 * start_end_time.txt and metadata.json is m->t_start..m->t_end, the one
 * elapsed_time_seconds measures ("nan,nan" when that is unknown).
 * extra: what metrics.json's "roastop" object and summary.txt's task
 * section add from the session (metrics_extra.h; may be NULL); fs: the
 * run's findings as its snapshot has them (NULL: none written). 0 on
 * success; -1 with one line naming the file in err and the cause in errno
 * (ELOOP: dir is a symbolic link). */
int measurement_write(const char *dir, const struct metrics *m, const struct run *r,
		      const struct findings *fs, const struct metrics_extra_input *extra, char *err,
		      size_t errsz);
/* Before a run: -1 with a line in err (errno ELOOP) when dir is a symbolic
 * link, so that the refusal comes at once rather than at the first write;
 * 0 otherwise, missing dir included. */
int measurement_check_dir(const char *dir, char *err, size_t errsz);

/* A run's directory name under the --output root: roastcoffea's timestamp
 * (local time of t_start, wall seconds; now when not finite), then "_"
 * and the run's name in [A-Za-z0-9._-] (others become '_'), if any. */
void measurement_dir_name(char *out, size_t size, double t_start, const char *name);
/* Points root/latest at name (relative), atomically. -1 with err/errno. */
int measurement_link_latest(const char *root, const char *name, char *err, size_t errsz);

#endif
