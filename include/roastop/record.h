/* Writes every applied event to a recording (docs/recording.md), buffered.
 * Errors are returned with errno set; the caller decides to stop recording. */
#ifndef ROASTOP_RECORD_H
#define ROASTOP_RECORD_H

#include "roastop/event.h"

struct recorder;

/* The owner calls recorder_flush this often (seconds): with the flushes
 * recorder_write makes itself, no line waits longer in memory, so a
 * SIGKILL loses at most the last second (docs/recording.md). */
#define RECORDER_FLUSH_INTERVAL 1.0

/* Creates or truncates path (never through a symlink: O_NOFOLLOW) and
 * writes the header line; NULL + err on failure (a full disk included). */
struct recorder *recorder_open(const char *path, char *err, size_t errsz);
/* Appends one line; writes at once for a run's start or end, else when
 * 64 KiB are buffered. -1 with errno: EINVAL for an event without a type
 * (the recording is unharmed), else the first failure (ENOSPC, EIO,
 * ENOMEM, ...), which every later call repeats. A failed write never
 * leaves part of a line in the file: it is cut back to the last whole one. */
int recorder_write(struct recorder *rec, const struct event *ev);
/* Writes what is buffered (nothing to do costs no system call). */
int recorder_flush(struct recorder *rec);
/* Flushes and closes; -1 with errno if anything was lost. Frees rec either way. */
int recorder_close(struct recorder *rec);

#endif
