/* metrics.json's roastop.tasks block: the task stream's model and counters
 * (docs/metrics.md, "Dask tasks"). */
#ifndef ROASTOP_METRICS_TASKS_H
#define ROASTOP_METRICS_TASKS_H

#include <cjson/cJSON.h>

#include "roastop/strbuf.h"
#include "roastop/event.h"
#include "roastop/tasks.h"

/* feed: the latest statistics of the source delivering the tasks (its
 * counters are its own block, roastop.task_stream), NULL when none came. */
void metrics_tasks_json(cJSON *parent, const struct tasks *t, const struct ev_counters *feed);
/* summary.txt's "Dask tasks" section, formatted from the block above (NULL:
 * nothing): the ten prefixes with most tasks and the latest straggler. */
void metrics_tasks_text(const cJSON *tasks, struct strbuf *sb);

#endif
