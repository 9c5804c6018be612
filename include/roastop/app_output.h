/* What the app writes: each run's measurement directory under the output
 * root (named at its first write, after its start and name), the `latest`
 * link, and the summary on standard output at the exit. */
#ifndef ROASTOP_APP_OUTPUT_H
#define ROASTOP_APP_OUTPUT_H

#include <limits.h>

#include "roastop/diagnosis.h"
#include "roastop/metrics_extra.h"
#include "roastop/session.h"

struct app_output {
	char root[PATH_MAX]; /* each run writes a directory under it */
	size_t n_written; /* runs with a measurement directory */
	char dir[SESSION_DIR_LEN]; /* the last write's (its ev_row_write.dir) */
};

/* The root: dir, else roastop-measurements; -1 with err: a symbolic link. */
int app_output_open(struct app_output *o, const char *dir, char *err, size_t errsz);
/* Writes row's measurement and points `latest` at the newest run written:
 * -1 with errno and a line in err when either fails. w: the row's outcome. */
int app_output_write(struct app_output *o, const struct session *ses,
		     const struct session_run *row, const struct metrics *m,
		     const struct findings *record, const struct metrics_extra_input *extra,
		     struct ev_row_write *w, char *err, size_t errsz);
/* A checkpoint's progress line on stderr, for batch logs. */
void app_output_progress(const struct metrics *m);
/* The runs, the newest in full (m, record, extra) and the last line in one
 * write to standard output: -1 when it fails (said). */
int app_output_summary(const struct app_output *o, const struct session *ses,
		       const struct metrics *m, const struct findings *record,
		       const struct metrics_extra_input *extra, const char *stop_reason);

#endif
