#include "roastop/range.h"

#include <math.h>

static const struct range ranges[RANGE__COUNT] = {
	[RANGE_WORKERS] = { "workers", "workers", 0, RANGE_WORKERS_MAX, true },
	[RANGE_NTHREADS] = { "nthreads", "threads", 0, RANGE_NTHREADS_MAX, false },
	[RANGE_TOTAL_THREADS] = { "total_threads", "threads", 0, RANGE_TOTAL_THREADS_MAX, false },
	[RANGE_BYTES] = { "bytes", "bytes", 0, RANGE_BYTES_MAX, false },
	[RANGE_CPU_PERCENT] = { "cpu_percent", "%", 0, RANGE_CPU_PERCENT_MAX, false },
	[RANGE_CPU_SECONDS] = { "cpu_seconds", "s", 0, RANGE_CPU_SECONDS_MAX, false },
	[RANGE_TASKS] = { "tasks", "tasks", 0, RANGE_TASKS_MAX, false },
	[RANGE_FINE] = { "fine_value", "s, bytes or count", 0, RANGE_FINE_MAX, false },
	[RANGE_PID] = { "pid", "", 0, RANGE_PID_MAX, true },
	[RANGE_TASK_SECONDS] = { "task_seconds", "s", 0, RANGE_TASK_SECONDS_MAX, false },
	[RANGE_EPOCH] = { "epoch_time", "s", 0, RANGE_EPOCH_MAX, false },
	[RANGE_OCCUPANCY] = { "occupancy", "s", 0, RANGE_OCCUPANCY_MAX, false },
};

const struct range *range_of(enum range_qty q)
{
	return (unsigned)q < RANGE__COUNT ? &ranges[q] : NULL;
}

bool range_ok(enum range_qty q, double x)
{
	const struct range *r = range_of(q);
	return r && isfinite(x) && x >= r->lo && x <= r->hi && (!r->whole || x == floor(x));
}
