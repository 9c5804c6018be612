/* Reads a recording (docs/recording.md): one JSON event per line after a
 * header line. Bad lines are skipped and counted by reason, the first few
 * reported as "file:line: reason". Nothing blocks: an input with nothing
 * to say yet makes replay_next return REPLAY_WAIT. */
#ifndef ROASTOP_REPLAY_H
#define ROASTOP_REPLAY_H

#include <stdio.h>

#include "roastop/event.h"
#include "roastop/event_json.h"

#define REPLAY_REPORT_MAX 5 /* rejected lines kept with their line numbers */

struct replay;

struct replay_reject {
	uint64_t line; /* 1-based */
	enum decode_error reason;
};

enum {
	REPLAY_ERROR = -1, /* see replay_error; every later call returns it too */
	REPLAY_END = 0, /* end of the recording (end of file) */
	REPLAY_EVENT = 1, /* an event is in *ev */
	REPLAY_WAIT = 2, /* no whole line yet: poll replay_fd for POLLIN, then call again */
};

/* path "-" reads standard input. A regular file's header is checked here:
 * NULL with err when it cannot be opened, is gzip-compressed, or its header
 * names another format or a newer major version (a pipe's: by replay_next).
 * A missing header is accepted with a warning. */
struct replay *replay_open(const char *path, char *err, size_t errsz);
/* Reads at most about 17 MiB per call (then REPLAY_WAIT), so that no input
 * holds the caller's loop. */
int replay_next(struct replay *rd, struct event *ev);
int replay_fd(const struct replay *rd);
/* Why replay_next returned REPLAY_ERROR. */
const char *replay_error(const struct replay *rd);
/* Where replay_next prints warnings and the first rejections; stderr by
 * default, NULL for silence. */
void replay_set_report(struct replay *rd, FILE *f);
const struct reject_counts *replay_rejects(const struct replay *rd);
/* The first rejected lines, in file order; returns how many. */
size_t replay_first_rejects(const struct replay *rd, const struct replay_reject **out);
uint64_t replay_lines(const struct replay *rd); /* lines read so far, blank ones too */
void replay_close(struct replay *rd);

#endif
