/* Writes every applied event to a recording (docs/recording.md), buffered.
 * Errors are returned with errno set; the caller decides to stop recording. */
#ifndef ROASTOP_RECORD_H
#define ROASTOP_RECORD_H

#include "roastop/event.h"

struct recorder;

/* Creates or truncates path (never through a symlink: O_NOFOLLOW) and
 * buffers the header line; NULL + err on failure. */
struct recorder *recorder_open(const char *path, char *err, size_t errsz);
/* Appends one line; writes when 64 KiB are buffered. -1 with errno: EINVAL
 * for an event without a type (the recording is unharmed), else the first
 * failure (ENOSPC, EIO, ENOMEM, ...), which every later call repeats. */
int recorder_write(struct recorder *rec, const struct event *ev);
int recorder_flush(struct recorder *rec);
uint64_t recorder_events(const struct recorder *rec); /* lines written or buffered */
/* Flushes and closes; -1 with errno if anything was lost. Frees rec either way. */
int recorder_close(struct recorder *rec);

#endif
