/* A finished task's startstop -> an EV_TASK event: the Dask scheduler's
 * /eventstream messages (taskstream.c, the task stream source) and the
 * collector's task records (dask_json_tasks.c) are both read so. */
#ifndef ROASTOP_TASKSTREAM_H
#define ROASTOP_TASKSTREAM_H

#include "roastop/event.h"

#define TASKSTREAM_PREFIX_LEN 64u /* key_split's result is cut to this */

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

#endif
