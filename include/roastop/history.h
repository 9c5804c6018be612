/* The measurements under an output directory (docs/compare.md, "roastop
 * history"): roastop history lists them, and a run finds the last
 * comparable one. Bounded:
 * at most HISTORY_MAX_SCANNED entries of the directory are looked at and
 * at most max_runs measurements read, one at a time, newest first (by
 * their directories' names, which begin with the run's start). Another
 * user's directories, symbolic links, entries without a metrics.json and
 * a metrics.json that is no measurement (or over COMPARE_MAX_BYTES) are
 * skipped and counted. */
#ifndef ROASTOP_HISTORY_H
#define ROASTOP_HISTORY_H

#include <stdio.h>
#include <sys/types.h>

#include "roastop/previous.h"
#include "roastop/strbuf.h"

#define HISTORY_MAX_SCANNED 4096u
#define HISTORY_MAX_RUNS 256u
/* A run's last comparable run is looked for among the newest this many. */
#define HISTORY_PREVIOUS_READ 32u


struct history {
	struct past_run *runs; /* newest first */
	size_t n;
	size_t foreign; /* directories of another user */
	size_t corrupt; /* a metrics.json that is no measurement, or too large */
	size_t unrelated; /* files, links, directories without a metrics.json */
	size_t not_read; /* past HISTORY_MAX_SCANNED or max_runs */
	struct past_file *files; /* NULL, or where each run read puts its per-file figures */
};

/* text: a metrics.json (NUL-terminated, changed in place). files: NULL, or
 * PAST_FILES for its per-file figures (run->files then points there). 0, or -1. */
int history_parse(char *text, struct past_run *run, struct past_file *files);
/* Calls visit for each measurement under root owned by uid, newest first,
 * until it returns false or max_runs were read; h gets the counts (its
 * runs untouched). 0, or -1 with one line in err (root unreadable). */
int history_walk(const char *root, uid_t uid, size_t max_runs, struct history *h,
		 bool (*visit)(void *ctx, const struct past_run *run), void *ctx,
		 char *err, size_t errsz);
/* Every run (at most HISTORY_MAX_RUNS) into h->runs. */
int history_scan(const char *root, uid_t uid, struct history *h, char *err, size_t errsz);
void history_free(struct history *h);
/* The newest run under root owned by uid that is comparable with now
 * (identity_match), started before it and has an event rate: true, and *out
 * with its per-file figures in files (PAST_FILES, or NULL); false when none
 * among the newest HISTORY_PREVIOUS_READ. */
bool history_find_previous(const char *root, uid_t uid, const struct identity *now,
			   struct past_run *out, struct past_file *files);
/* The list as text (a header line, a line per run whose name holds filter)
 * or as JSON. */
void history_write_text(struct strbuf *o, const struct history *h, const char *filter);
void history_write_json(struct strbuf *o, const struct history *h, const char *filter);
/* The command: the list on out, the skipped counts on errs. Exit status 0,
 * or 1 when root cannot be read. */
int history_main(const char *root, const char *filter, bool json, FILE *out, FILE *errs);

#endif
