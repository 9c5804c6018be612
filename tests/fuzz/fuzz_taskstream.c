/* Hostile /eventstream messages through the task stream's parser and the
 * tasks model: never a crash, a message is taken whole or not at all, and
 * every task taken has finite times in order and a prefix. */
#include <stdlib.h>

#include "roastop/tasks.h"
#include "roastop/taskstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct event ev;
static struct tasks model;
static bool ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		event_init(&ev);
		tasks_init(&model);
		ready = true;
	}
	enum taskstream_result r = taskstream_parse((const char *)data, size, &ev);
	if (r != TSP_TASK) {
		if (ev.type != EV_NONE || (unsigned)r >= TSP__COUNT)
			abort();
		return 0;
	}
	const struct ev_task *t = &ev.u.task;
	if (!t->key || !t->prefix || !t->prefix[0] || !t->action || !event_task_times_ok(t))
		abort();
	tasks_apply(&model, t, 0);
	if (model.n > TASKS_MAX_PREFIXES)
		abort();
	return 0;
}
