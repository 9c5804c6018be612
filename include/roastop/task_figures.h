/* The Dask task figures of a run (docs/metrics.md, "Dask tasks"): pure
 * formulas over the task model's accumulated state (tasks.h), computed
 * once per measurement alongside the rest of struct metrics, so that
 * metrics.json, summary.txt and the task view read the same numbers. */
#ifndef ROASTOP_TASK_FIGURES_H
#define ROASTOP_TASK_FIGURES_H

#include "roastop/tasks.h"

/* One prefix's figures, at the prefix's index in the model. */
struct task_prefix_figures {
	/* failed tasks: the route's growth, or the stream's count when larger;
	 * null without the route */
	optnum erred;
	/* tasks of the prefix among those the route listed as executing; null
	 * without the route. partial: some executing tasks were not listed, so
	 * in_flight is a lower bound */
	optnum in_flight;
	bool in_flight_partial;
	optnum compute_p50, compute_p90, compute_p99, compute_max; /* seconds */
	optnum compute_seconds; /* summed over its tasks, records' or the totals' */
	/* per-task counts (transfers, disk reads, stragglers): null when every
	 * task of the prefix came from the scheduler's totals */
	optnum transfers, disk_reads, stragglers;
	optnum transfer_seconds, disk_read_seconds; /* summed; null when none */
	optnum straggler_after; /* the prefix's own threshold (tasks.h) */
};

struct task_figures {
	optnum erred; /* all prefixes' (null without the route) */
	optnum in_flight; /* executing now, listed or not (null without the route) */
	/* which of the route's listed running tasks (tasks.h, route.running)
	 * are past their prefix's threshold, and how many */
	bool running_straggler[TASKS_RUNNING_KEPT];
	size_t running_stragglers;
	size_t n; /* prefixes: the model's n */
	struct task_prefix_figures prefix[TASKS_MAX_PREFIXES];
};

/* Fills every figure of out from t. */
void task_figures_compute(const struct tasks *t, struct task_figures *out);

#endif
