/* The task stream checked against the scheduler's own count.
 * distributed's /eventstream installs its plugin under one fixed name: a
 * second client's stream replaces the first's plugin, and the first stays
 * connected and silent. So at each poll the scheduler's counter of
 * transitions into "memory" (summed over the prefixes) is compared with the
 * compute tasks the stream brought since the same moment. The plugin writes
 * a task's message within the transition that counts it, so every task
 * counted by the check before has had its message by this one: a shortfall
 * is never a message still on its way. */
#ifndef ROASTOP_TASKCHECK_H
#define ROASTOP_TASKCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <poll.h>

#include "roastop/config.h"
#include "roastop/prom.h"

#define TASKCHECK_FAMILY "dask_scheduler_prefix_state_totals_total"

/* The scheduler's count and the stream's from one check (the base) on. */
struct taskcheck_window {
	bool based;
	double base_total, prev_total; /* the scheduler's count at the base, the check before */
	uint64_t base_stream; /* the stream's compute tasks at the base */
};

struct taskcheck {
	struct taskcheck_window conn; /* this connection's: whether to reconnect */
	/* the session's (this scheduler's): the shortfall written beside the
	 * counts, whichever connection it fell in */
	struct taskcheck_window session;
	uint64_t missed; /* the largest shortfall seen from session's base */
	uint64_t missed_before; /* shortfalls of the schedulers before (restarts) */
};

/* The scheduler's count of tasks into "memory" (0 when the family is
 * declared without a sample); false without the family or with a value
 * that is not a count. */
bool taskcheck_total(const char *body, size_t len, double *total, struct prom_stats *st);
/* One check, stream the compute tasks brought so far in the session: 0
 * while this connection keeps up; else the tasks it did not bring since its
 * base, which is dropped (the stream is to reconnect). A count that fell (a
 * new scheduler) begins again too. */
uint64_t taskcheck_observe(struct taskcheck *c, double total, uint64_t stream);
uint64_t taskcheck_missed(const struct taskcheck *c);
void taskcheck_reset(struct taskcheck *c);

/* The scheduler's /metrics fetched for the check, with the poller's TLS
 * options and headers. */
#define TASKCHECK_MAX_BODY (64u << 20)
struct taskcheck_fetch;
struct taskcheck_fetch *taskcheck_fetch_open(const struct app_config *cfg);
void taskcheck_fetch_close(struct taskcheck_fetch *f);
void taskcheck_fetch_start(struct taskcheck_fetch *f);
size_t taskcheck_fetch_pollfds(const struct taskcheck_fetch *f, struct pollfd *out, size_t max);
/* true once a GET finished with the count (*total); *failed when it
 * finished without it. */
bool taskcheck_fetch_dispatch(struct taskcheck_fetch *f, const struct pollfd *pfd, size_t n,
			      double *total, bool *failed);

#endif
