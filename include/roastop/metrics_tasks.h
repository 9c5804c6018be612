/* metrics.json's roastop.tasks block and summary.txt's "Dask tasks"
 * section, both from the run's task figures (task_figures.h) and its task
 * model's lists (docs/metrics.md, "Dask tasks"). */
#ifndef ROASTOP_METRICS_TASKS_H
#define ROASTOP_METRICS_TASKS_H

#include "roastop/event.h"
#include "roastop/jsonw.h"
#include "roastop/strbuf.h"
#include "roastop/task_figures.h"

/* Has the feed (a task source's counters: the route's poller, "scheduler",
 * or /eventstream's, "task_stream") ever measured: connected, or answered? */
bool metrics_tasks_feed_measured(const struct ev_counters *feed);
/* The feed's state for the task view: /eventstream's own ("connected",
 * "lost", ...), or "route" for the poller's records. */
const char *metrics_tasks_feed_state(const struct ev_counters *feed);
/* feed: the latest statistics of the source delivering the tasks (its
 * counters are its own block), NULL when none came. */
void metrics_tasks_json(struct jsonw *w, const struct tasks *t, const struct task_figures *fig,
			const struct ev_counters *feed);
/* summary.txt's "Dask tasks" section, with the same figures: the ten
 * prefixes with most tasks and the latest straggler. */
void metrics_tasks_text(const struct tasks *t, const struct task_figures *fig,
			const struct ev_counters *feed, struct strbuf *sb);

#endif
