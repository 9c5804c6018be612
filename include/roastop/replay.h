/* Reads a recording (docs/recording.md): one JSON event per line after a
 * header line. Bad lines are skipped and counted by reason, with the first
 * few kept (and reported) as "file:line: reason"; they never stop the
 * replay. Plain text only: a .gz recording goes through `zcat f | ... -`. */
#ifndef ROASTOP_REPLAY_H
#define ROASTOP_REPLAY_H

#include <stdio.h>

#include "roastop/event.h"
#include "roastop/event_json.h"

#define REPLAY_FORMAT "roastop-recording"
#define REPLAY_VERSION 1 /* the major version this reader understands */
#define REPLAY_REPORT_MAX 5 /* rejected lines kept with their line numbers */

struct replay;

struct replay_reject {
	uint64_t line; /* 1-based */
	enum decode_error reason;
};

/* path "-" reads standard input. Reads up to the first non-blank line to
 * check the header: NULL with err filled when the file cannot be opened,
 * is gzip-compressed, or its header names another format or a newer major
 * version. A missing header is accepted with a warning (replay_warnings). */
struct replay *replay_open(const char *path, char *err, size_t errsz);
/* 1: an event is in *ev; 0: end of the recording; -1: read error (errno). */
int replay_next(struct replay *rd, struct event *ev);
/* Where replay_next prints warnings and the first REPLAY_REPORT_MAX
 * rejections as they happen ("roastop: file:line: skipped: reason"); stderr
 * by default, NULL for silence (a full-screen UI shows replay_first_rejects
 * instead). */
void replay_set_report(struct replay *rd, FILE *f);
const struct reject_counts *replay_rejects(const struct replay *rd);
/* The first rejected lines, in file order; returns how many (<= REPLAY_REPORT_MAX). */
size_t replay_first_rejects(const struct replay *rd, const struct replay_reject **out);
uint64_t replay_lines(const struct replay *rd); /* lines read so far, blank ones too */
bool replay_had_header(const struct replay *rd);
uint64_t replay_warnings(const struct replay *rd); /* e.g. the missing header */
const char *replay_name(const struct replay *rd); /* the path, or "<stdin>" */
void replay_close(struct replay *rd);

#endif
