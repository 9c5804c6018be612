/* The Dask scheduler's task stream: its /eventstream WebSocket
 * (distributed/http/scheduler/info.py, EventstreamHandler, fed by
 * distributed/diagnostics/websocket.py's WebsocketPlugin), one JSON message
 * per startstop of every finished task: key, worker, action ("compute",
 * "transfer", "disk-read", "disk-write"), start, stop, status. libwebsockets
 * does the protocol; its sockets are driven from roastop's own poll() loop
 * (the external-poll callbacks), never blocking. A lost or refused stream is
 * retried with exponential backoff. Messages over TASKSTREAM_MAX_MESSAGE or
 * not of the expected shape are refused whole and counted. */
#ifndef ROASTOP_TASKSTREAM_H
#define ROASTOP_TASKSTREAM_H

#include <poll.h>

#include "roastop/event.h"

#define TASKSTREAM_MAX_FDS 8
/* A transition message is ~500 bytes; a task with many transfers a few KiB. */
#define TASKSTREAM_MAX_MESSAGE (64u << 10)
#define TASKSTREAM_BACKOFF_MAX 30.0
#define TASKSTREAM_PREFIX_LEN 64u /* key_split's result is cut to this */

struct taskstream_config {
	const char *url; /* http(s)://host:port[/prefix] of the dashboard */
	const char *prefix; /* --dashboard-prefix, or NULL */
};

enum taskstream_result {
	TSP_TASK = 0, /* a task transition: *out filled */
	TSP_OTHER, /* a well-formed message of another kind (add_worker, ...) */
	TSP_ERR_JSON, /* not JSON, or not an object */
	TSP_ERR_SHAPE, /* a transition without key, action, start or stop */
	TSP_ERR_RANGE, /* times not finite, or stop before start */
	TSP_ERR_TEXT, /* a key, worker, action or status that is not UTF-8 (a
		       * recording could not replay it) */
	TSP__COUNT
};

struct taskstream_stats {
	uint64_t connects, disconnects; /* streams opened; lost or refused */
	uint64_t messages, bytes; /* whole messages received */
	uint64_t tasks; /* transitions delivered as events */
	uint64_t too_large; /* messages over TASKSTREAM_MAX_MESSAGE, dropped */
	uint64_t rejected_by[TSP__COUNT]; /* refused by the parser, by reason */
	uint64_t checks; /* checks against the scheduler's count (taskcheck.h) */
	uint64_t behind; /* checks that found the stream behind: each reconnects */
	uint64_t missed; /* finished tasks it did not bring, at least: the counts' shortfall */
	uint64_t unchecked; /* /metrics fetches that gave nothing to check against */
	const char *state; /* "connecting", "connected", "lost" */
};

struct taskstream;

struct taskstream *taskstream_open(const struct taskstream_config *cfg, event_deliver_fn fn,
				   void *ctx, char *err, size_t errsz);
void taskstream_close(struct taskstream *ts);
size_t taskstream_pollfds(const struct taskstream *ts, struct pollfd *out, size_t max);
/* Call after every poll(), ready or not: it also runs reconnects and
 * libwebsockets' timers. */
void taskstream_dispatch(struct taskstream *ts, const struct pollfd *pfd, size_t n, double now);
/* Milliseconds poll() may sleep for the stream's sake (-1: forever). */
int taskstream_timeout_ms(struct taskstream *ts);
/* At the stop: applies what is already in the socket, in a few passes that
 * never wait, so that a busy stream cannot hold the exit. */
void taskstream_drain(struct taskstream *ts, double now);
/* The scheduler's count of finished tasks (taskcheck_total), checked
 * against the stream while it is connected: the tasks it missed (0 while it
 * keeps up); when some, it is dropped and reconnects after a backoff that
 * grows while it keeps falling behind. */
uint64_t taskstream_check(struct taskstream *ts, double total);
bool taskstream_connected(const struct taskstream *ts);

/* A finished task's startstop as its JSON values (NULL: absent), from
 * /eventstream or the collector's route (docs/scheduler.md): key (a string
 * or a tuple's array), action, start, stop, worker, status. */
struct cJSON;
struct taskstream_fields {
	const struct cJSON *key, *action, *start, *stop, *worker, *status;
};

/* The fields into an EV_TASK event (strings in ev's arena; the event reset
 * before): TSP_TASK, or why not. Every task source builds its events so. */
enum taskstream_result taskstream_task(struct event *ev, const struct taskstream_fields *f);
/* One message into an EV_TASK event (strings in ev's arena). */
enum taskstream_result taskstream_parse(const char *buf, size_t len, struct event *ev);
/* dask.utils.key_split of a key's first string: the task prefix. */
void taskstream_key_split(const char *key, char *out, size_t outsz);
const char *taskstream_result_name(enum taskstream_result r);

#endif
