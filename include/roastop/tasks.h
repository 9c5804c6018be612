/* A run's Dask tasks from the task stream (EV_TASK): per task prefix the
 * count of finished and erred tasks, a compute-time histogram, the time in
 * transfers and disk reads; stragglers among the finished tasks. Bounded
 * by the caps (a prefix past TASKS_MAX_PREFIXES counts in the totals only)
 * and charged to the session's pool; docs/metrics.md, "Dask tasks". The
 * figures reported are computed in task_figures.h. */
#ifndef ROASTOP_TASKS_H
#define ROASTOP_TASKS_H

#include "roastop/common.h"
#include "roastop/event.h"
#include "roastop/hist.h"
#include "roastop/strmap.h"

#define TASKS_MAX_PREFIXES 256u
#define TASKS_STRAGGLERS_KEPT 16u
#define TASKS_NAME_LEN 64u
#define TASKS_KEY_LEN 128u
#define TASKS_STRAGGLER_MIN 10u /* finished tasks before anyone is judged */
/* The task-stream view's lanes: the latest compute tasks of each worker
 * (64 workers x 128 tasks x 24 bytes = 192 KiB, allocated on the first task). */
#define TASKS_LANES 64u
#define TASKS_LANE_KEPT 128u

struct tasks_prefix {
	char name[TASKS_NAME_LEN];
	uint64_t count, erred; /* finished compute startstops; status other than OK */
	struct hist compute; /* seconds */
	double transfer_s, disk_read_s; /* summed */
	uint64_t transfers, disk_reads;
	uint64_t stragglers;
	double erred_route; /* the route's failed tasks: their growth in this model's time */
	/* of count, those from the scheduler's per-prefix totals (no per-task
	 * record: no duration, transfer or straggler of theirs is known) */
	uint64_t from_totals;
	double compute_s; /* compute seconds summed, from records or totals */
	bool compute_measured;
};

struct tasks_straggler {
	char key[TASKS_KEY_LEN], prefix[TASKS_NAME_LEN], worker[TASKS_NAME_LEN];
	double seconds, threshold, t;
};

struct tasks_slot {
	double start, stop;
	uint32_t prefix; /* index in prefixes; TASKS_MAX_PREFIXES: past the cap */
};

struct tasks_lane {
	char worker[TASKS_NAME_LEN];
	uint64_t n; /* tasks taken; the latest TASKS_LANE_KEPT are in slot (a ring) */
	struct tasks_slot slot[TASKS_LANE_KEPT];
};

/* A task executing now, from the collector's route. */
struct tasks_running {
	char key[TASKS_KEY_LEN], prefix[TASKS_NAME_LEN], worker[TASKS_NAME_LEN];
	double seconds; /* running this long at the sample's time */
};
#define TASKS_RUNNING_KEPT 16u

/* A prefix's failed count in the route's latest list (since the route's
 * install, the collector's run start: docs/scheduler.md). */
struct tasks_erred_seen {
	char prefix[TASKS_NAME_LEN];
	double n;
};
#define TASKS_ERRED_SEEN 64u /* the route lists at most 64 (route.py ERRED_MAX) */

/* A prefix's totals in the scheduler's latest /metrics (since it started). */
struct tasks_total_seen {
	char prefix[TASKS_NAME_LEN];
	double done, compute; /* NAN: not in the list */
};

/* What only the scheduler knows, from the route's samples. */
struct tasks_route {
	bool erred_measured; /* a sample has carried the failed tasks */
	uint64_t erred_left_out; /* prefixes with failed tasks the route did not list */
	/* the latest list of counts, each sample's growth measured against
	 * it; kept when the model is cleared (a run's start), so a failure
	 * between the start and the next poll counts */
	double seen_since; /* the list's erred_since (its counts start there); NAN: none */
	size_t n_seen;
	struct tasks_erred_seen seen[TASKS_ERRED_SEEN];
	bool running_measured; /* the latest sample carried the running tasks */
	uint64_t running_count; /* executing now: listed + not listed */
	size_t n_running;
	struct tasks_running running[TASKS_RUNNING_KEPT]; /* the oldest first */
	/* The scheduler's per-prefix totals (a watch without the route or the
	 * stream), kept like seen (based: a list was taken; the first is a
	 * base only, its tasks finished before the watch) */
	bool totals_measured, totals_based;
	uint64_t totals_left_out; /* prefixes past the list's cap */
	size_t n_totals;
	struct tasks_total_seen totals[TASKS_MAX_PREFIXES];
};

struct tasks {
	struct tasks_prefix *prefixes; /* n of cap (doubling up to TASKS_MAX_PREFIXES) */
	size_t n, cap;
	struct tasks_lane *lanes; /* n_lanes of TASKS_LANES, allocated on the first task */
	size_t n_lanes;
	struct hist all; /* compute seconds of every task */
	uint64_t count, erred, prefix_overflow;
	uint64_t from_totals; /* of count, from the scheduler's per-prefix totals */
	/* times the pool (or the heap) refused a new prefix or the lanes: that
	 * task is in the totals only */
	uint64_t pool_refused;
	struct strmap_pool *pool; /* charged with the table and lanes; NULL: none */
	uint64_t stragglers;
	struct tasks_straggler straggler[TASKS_STRAGGLERS_KEPT]; /* ring */
	double t_first, t_last; /* the first and latest task's stop; NAN: none */
	struct tasks_route route;
};

void tasks_init(struct tasks *ts);
void tasks_free(struct tasks *ts);
/* Charges the model's memory, present and future, to pool (NULL: none). */
void tasks_set_pool(struct tasks *ts, struct strmap_pool *pool);
/* Forgets every task (a run's start), keeping the pool and the route's
 * latest lists, against which the next sample's growth is the run's. */
void tasks_clear(struct tasks *ts);
/* Takes from's latest failed-task counts (the route's), against which ts
 * measures the next sample's growth. */
void tasks_route_inherit(struct tasks *ts, const struct tasks *from);
/* Do s's failed tasks count from the install ts counts from (a run that
 * ended takes no later install's: the next run's)? */
bool tasks_route_own(const struct tasks *ts, const struct ev_sample *s);
/* One EV_TASK. False when it could not be held (out of memory). */
bool tasks_apply(struct tasks *ts, const struct ev_task *t, double now);
/* A scheduler sample: each prefix's growth in failed tasks, finished
 * tasks and compute seconds since the list before, and the tasks
 * executing now (unmeasured without the route). */
void tasks_apply_sample(struct tasks *ts, const struct ev_sample *s);
/* The scheduler is lost: the tasks in flight are not measured until the
 * route's next sample (the failed tasks stay: a count that grew did). */
void tasks_route_lost(struct tasks *ts);
/* Straggler threshold for prefix p (NULL: all): max(3 x p90, p99), invalid
 * until TASKS_STRAGGLER_MIN have finished. */
optnum tasks_straggler_after(const struct tasks *ts, const struct tasks_prefix *p);
/* p's threshold when known, else that of all tasks. */
optnum tasks_judged_after(const struct tasks *ts, const struct tasks_prefix *p);
const struct tasks_prefix *tasks_prefix_find(const struct tasks *ts, const char *name);
const struct tasks_straggler *tasks_straggler_at(const struct tasks *ts, size_t i);
size_t tasks_straggler_count(const struct tasks *ts);
/* The i-th latest task of a lane (i = 0: the latest), or NULL. */
const struct tasks_slot *tasks_lane_slot(const struct tasks_lane *l, size_t i);

#endif
