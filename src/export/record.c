#include "roastop/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "roastop/event_json.h"
#include "roastop/replay.h"
#include "roastop/fsutil.h"
#include "roastop/strbuf.h"

#define FLUSH_AT (64u * 1024u)

struct recorder {
	int fd;
	struct strbuf buf;
	uint64_t events;
	bool failed;
};

struct recorder *recorder_open(const char *path, char *err, size_t errsz)
{
	struct recorder *rec = calloc(1, sizeof(*rec));
	if (!rec) {
		snprintf(err, errsz, "record: out of memory");
		return NULL;
	}
	rec->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (rec->fd < 0) {
		snprintf(err, errsz, "cannot write recording %s: %s", path, strerror(errno));
		free(rec);
		return NULL;
	}
	strbuf_init(&rec->buf);
	strbuf_appendf(&rec->buf,
		       "{\"type\":\"recording\",\"format\":\"%s\",\"version\":%d,"
		       "\"roastop\":\"%s\",\"created\":%lld}\n",
		       REPLAY_FORMAT, REPLAY_VERSION, ROASTOP_VERSION, (long long)time(NULL));
	return rec;
}

int recorder_flush(struct recorder *rec)
{
	if (rec->failed)
		return -1;
	if (rec->buf.failed) {
		errno = ENOMEM;
		rec->failed = true;
		return -1;
	}
	if (fsutil_write_all(rec->fd, rec->buf.data, rec->buf.len) != 0) {
		rec->failed = true;
		return -1;
	}
	strbuf_reset(&rec->buf);
	return 0;
}

int recorder_write(struct recorder *rec, const struct event *ev)
{
	if (rec->failed)
		return -1;
	if (event_encode_json(ev, &rec->buf) != 0) {
		errno = ENOMEM;
		rec->failed = true;
		return -1;
	}
	strbuf_append(&rec->buf, "\n", 1);
	rec->events++;
	return rec->buf.len >= FLUSH_AT ? recorder_flush(rec) : 0;
}

uint64_t recorder_events(const struct recorder *rec)
{
	return rec->events;
}

int recorder_close(struct recorder *rec)
{
	int rc = recorder_flush(rec);
	int saved = errno;
	if (close(rec->fd) != 0 && rc == 0)
		rc = -1;
	else
		errno = saved;
	strbuf_free(&rec->buf);
	free(rec);
	return rc;
}
