/* metrics.json's roastop.tasks block and summary.txt's "Dask tasks"
 * section, both from the run's task figures (task_figures.h) and its task
 * model's lists (docs/metrics.md, "Dask tasks"). */
#ifndef ROASTOP_METRICS_TASKS_H
#define ROASTOP_METRICS_TASKS_H

#include "roastop/event.h"
#include "roastop/jsonw.h"
#include "roastop/source.h"
#include "roastop/strbuf.h"
#include "roastop/task_figures.h"

/* Has the feed (a task source's counters, typed: the route's poller's, or
 * /eventstream's) ever measured: connected, or answered? */
bool metrics_tasks_feed_measured(const struct source_typed *feed);
/* The feed's state for the task view: /eventstream's own ("connected",
 * "lost", ...), else the poller's source: "route" or "prometheus". */
const char *metrics_tasks_feed_state(const struct source_typed *feed);
/* feed: the latest statistics of the source delivering the tasks, typed,
 * NULL when none came. */
void metrics_tasks_json(struct jsonw *w, const struct tasks *t, const struct task_figures *fig,
			const struct source_typed *feed);
/* summary.txt's "Dask tasks" section, with the same figures: the ten
 * prefixes with most tasks and the latest straggler. */
void metrics_tasks_text(const struct tasks *t, const struct task_figures *fig,
			const struct source_typed *feed, struct strbuf *sb);

#endif
