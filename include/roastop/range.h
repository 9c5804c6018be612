/* The range of every scheduler quantity, read by the live decoders
 * (dask_json.c) and the recording decoder (event_field.c) alike, so that
 * what a live session accepts its recording replays (docs/recording.md,
 * "Ranges"). Every minimum is 0. */
#ifndef ROASTOP_RANGE_H
#define ROASTOP_RANGE_H

#include "roastop/common.h"

/* Maxima as constants: event_field.c's tables are static initialisers. */
#define RANGE_WORKERS_MAX 1e7 /* workers of one scheduler; fits uint32 */
#define RANGE_NTHREADS_MAX 1e6 /* threads of one worker */
#define RANGE_TOTAL_THREADS_MAX 1e9 /* threads over all workers */
#define RANGE_BYTES_MAX 1e15 /* memory of one worker, bytes */
#define RANGE_CPU_PERCENT_MAX 1e6 /* one worker, 100 per busy core */
#define RANGE_CPU_SECONDS_MAX 1e12 /* process_cpu_seconds_total of one worker */
#define RANGE_TASKS_MAX 1e15 /* task counts */
#define RANGE_FINE_MAX 1e18 /* one cumulative fine-metrics value (seconds, bytes, count) */
#define RANGE_PID_MAX 1e9 /* a worker's process id (as a chunk's pid) */
#define RANGE_TASK_SECONDS_MAX 1e9 /* how long one task has been running */
#define RANGE_EPOCH_MAX 1e11 /* a time: seconds since 1970 */
#define RANGE_OCCUPANCY_MAX 1e12 /* seconds of work the scheduler expects of one worker */

enum range_qty {
	RANGE_WORKERS,
	RANGE_NTHREADS,
	RANGE_TOTAL_THREADS,
	RANGE_BYTES,
	RANGE_CPU_PERCENT,
	RANGE_CPU_SECONDS,
	RANGE_TASKS,
	RANGE_FINE,
	RANGE_PID,
	RANGE_TASK_SECONDS,
	RANGE_EPOCH,
	RANGE_OCCUPANCY,
	RANGE__COUNT
};

struct range {
	const char *name, *unit;
	double lo, hi;
	bool whole; /* only whole numbers: the recording holds it as an integer */
};

/* The row of q (NULL for a q out of the enum). */
const struct range *range_of(enum range_qty q);
/* Is x finite, within q's range and whole where q is? NaN and infinities
 * are not. */
bool range_ok(enum range_qty q, double x);

#endif
