/* The recorder: every applied event as one JSON line (docs/recording.md),
 * gathered in a userspace buffer so the hot path makes one write(2) per
 * 64 KiB; the header and a run's start and end are written at once, and
 * the app flushes the rest every RECORDER_FLUSH_INTERVAL, which bounds
 * what a SIGKILL loses. After the first failure it stays failed: a
 * recording with a hole in the middle would replay as a different run; and
 * what a failed write left of a line is cut off, so the file always ends
 * with a whole line. */
#include "roastop/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "roastop/event_json.h"
#include "roastop/fsutil.h"
#include "roastop/jsonw.h"
#include "roastop/strbuf.h"

#define FLUSH_AT (64u * 1024u)

struct recorder {
	int fd;
	struct strbuf buf;
	off_t whole; /* bytes in the file, all whole lines */
	int err; /* errno of the first failure; 0 while healthy */
};

/* A regular file only: O_NONBLOCK makes the open of a FIFO with no reader
 * fail at once (ENXIO) instead of blocking the loop with signals masked,
 * and a FIFO with a reader or a device is refused after the open, as the
 * recording is cut back to whole lines with ftruncate. */
static int recorder_open_file(const char *path, char *err, size_t errsz)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
		      0644);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		int fl = fcntl(fd, F_GETFL);
		if (fl != -1 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0)
			return fd;
	}
	if (fd < 0 && errno != ENXIO)
		snprintf(err, errsz, "cannot write recording %s: %s", path, strerror(errno));
	else
		snprintf(err, errsz, "cannot write recording %s: not a regular file", path);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The recording's first line (docs/recording.md). */
static void recorder_header(struct strbuf *sb)
{
	struct jsonw w;
	jsonw_init_as(&w, sb, JSONW_COMPACT);
	jsonw_object(&w, NULL);
	jsonw_str(&w, "type", "recording");
	jsonw_str(&w, "format", EVENT_JSON_FORMAT);
	jsonw_num(&w, "version", EVENT_JSON_VERSION);
	jsonw_str(&w, "roastop", ROASTOP_VERSION);
	jsonw_num(&w, "created", (double)time(NULL));
	jsonw_end(&w, '}');
}

struct recorder *recorder_open(const char *path, char *err, size_t errsz)
{
	struct recorder *rec = calloc(1, sizeof(*rec));
	if (!rec) {
		snprintf(err, errsz, "record: out of memory");
		return NULL;
	}
	rec->fd = recorder_open_file(path, err, errsz);
	if (rec->fd < 0) {
		free(rec);
		return NULL;
	}
	strbuf_init(&rec->buf);
	recorder_header(&rec->buf);
	if (recorder_flush(rec) != 0) { /* a full disk is said now, not after the run */
		snprintf(err, errsz, "cannot write recording %s: %s", path, strerror(errno));
		close(rec->fd);
		strbuf_free(&rec->buf);
		free(rec);
		return NULL;
	}
	return rec;
}

static int fail(struct recorder *rec, int e)
{
	rec->err = e;
	errno = e;
	return -1;
}

/* Whatever a failed write got into the file ends inside a line: cut back
 * to the last whole one. (If even that fails there is nothing more to try;
 * the reader counts a torn last line as one bad line.) */
static int fail_write(struct recorder *rec, int e)
{
	while (ftruncate(rec->fd, rec->whole) != 0 && errno == EINTR)
		;
	return fail(rec, e);
}

int recorder_flush(struct recorder *rec)
{
	if (rec->err) {
		errno = rec->err;
		return -1;
	}
	if (rec->buf.failed)
		return fail(rec, ENOMEM);
	if (fsutil_write_all(rec->fd, rec->buf.data, rec->buf.len) != 0)
		return fail_write(rec, errno);
	rec->whole += (off_t)rec->buf.len;
	strbuf_reset(&rec->buf);
	return 0;
}

int recorder_write(struct recorder *rec, const struct event *ev)
{
	if (rec->err) {
		errno = rec->err;
		return -1;
	}
	if (ev->type <= EV_NONE || ev->type >= EV__COUNT) {
		errno = EINVAL; /* nothing to record; the recording itself is fine */
		return -1;
	}
	if (event_encode_json(ev, &rec->buf) != 0)
		return fail(rec, ENOMEM);
	strbuf_append(&rec->buf, "\n", 1);
	bool boundary = ev->type == EV_RUN_START || ev->type == EV_RUN_END;
	return boundary || rec->buf.len >= FLUSH_AT ? recorder_flush(rec) : 0;
}

int recorder_close(struct recorder *rec)
{
	int rc = recorder_flush(rec);
	int saved = errno;
	if (close(rec->fd) != 0 && rc == 0)
		rc = -1; /* errno from close: e.g. a deferred write error on NFS */
	else
		errno = saved;
	strbuf_free(&rec->buf);
	free(rec);
	return rc;
}
