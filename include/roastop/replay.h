/* Reads a recording (docs/recording.md): one JSON event per line after a
 * header line. Bad lines are skipped and counted by reason, with the first
 * few reported as "file:line: reason"; they never stop the replay. */
#ifndef ROASTOP_REPLAY_H
#define ROASTOP_REPLAY_H

#include "roastop/event.h"
#include "roastop/event_json.h"

#define REPLAY_FORMAT "roastop-recording"
#define REPLAY_VERSION 1
#define REPLAY_REPORT_MAX 5 /* rejected lines reported on stderr */

struct replay;

/* path "-" reads standard input. NULL with err filled when it cannot open. */
struct replay *replay_open(const char *path, char *err, size_t errsz);
/* 1: an event is in *ev; 0: end of the recording; -1: read error (errno). */
int replay_next(struct replay *rd, struct event *ev);
const struct reject_counts *replay_rejects(const struct replay *rd);
uint64_t replay_lines(const struct replay *rd);
bool replay_had_header(const struct replay *rd);
void replay_close(struct replay *rd);

#endif
