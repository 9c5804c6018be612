/* The task stream checked against the scheduler's own count (issue 33).
 * distributed's /eventstream installs its scheduler plugin under one fixed
 * name ("websocket"): a second client's stream replaces the first's plugin
 * and either one closing removes it, and the first stream then stays
 * connected and silent. So at each poll the scheduler's Prometheus counter
 * of transitions into "memory" (dask_scheduler_prefix_state_totals_total
 * {state="memory"}, TaskPrefix.state_counts, summed over the prefixes) is
 * compared with the compute tasks the stream brought since the same moment.
 * The plugin writes a task's message within the transition that counts it,
 * so every task the scheduler had counted by the check before has had its
 * message by this one; fewer messages than that is a stream that missed
 * tasks, never a false alarm from a message still on its way. */
#ifndef ROASTOP_TASKCHECK_H
#define ROASTOP_TASKCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <poll.h>

#include "roastop/config.h"
#include "roastop/prom.h"

#define TASKCHECK_FAMILY "dask_scheduler_prefix_state_totals_total"

/* Counting from a base: the scheduler's count and the stream's from one
 * check on. */
struct taskcheck_window {
	bool based; /* a base was taken */
	double base_total; /* the scheduler's count at the base */
	double prev_total; /* ... at the check before */
	uint64_t base_stream; /* the stream's compute tasks at the base */
};

struct taskcheck {
	/* from the first check of this connection: whether to reconnect */
	struct taskcheck_window conn;
	/* from the first check of the session (of this scheduler): the
	 * shortfall written beside the counts, whichever connection it fell in
	 * (a stream lost for a while misses tasks too) */
	struct taskcheck_window session;
	uint64_t missed; /* the largest shortfall seen from session's base */
	uint64_t missed_before; /* shortfalls of the schedulers before (restarts) */
};

/* The scheduler's count of tasks into "memory", summed over its prefixes (0
 * when the family is declared without a sample: no prefix yet); false when
 * the body does not have the family (no prometheus_client on the
 * scheduler, an older Dask) or a value that is not a count. */
bool taskcheck_total(const char *body, size_t len, double *total, struct prom_stats *st);
/* One check: total as above, stream the compute tasks the stream has
 * brought so far (over the whole session, across reconnects). 0 while this
 * connection keeps up; else the tasks the scheduler finished since its
 * base that it did not bring, and its base is dropped (the stream is to
 * reconnect; the next check begins again). A count that fell (a new
 * scheduler) begins again too. */
uint64_t taskcheck_observe(struct taskcheck *c, double total, uint64_t stream);
/* Finished tasks the stream did not bring in the session, at least. */
uint64_t taskcheck_missed(const struct taskcheck *c);
/* Forget this connection's base: the stream (re)connected. */
void taskcheck_reset(struct taskcheck *c);

/* The scheduler's /metrics, fetched for the check through the shared HTTP
 * client with the poller's TLS options and headers (same origin), no
 * redirect followed, at most TASKCHECK_MAX_BODY. */
#define TASKCHECK_MAX_BODY (64u << 20)
struct taskcheck_fetch;
/* NULL when the URL does not fit or curl cannot start. */
struct taskcheck_fetch *taskcheck_fetch_open(const struct app_config *cfg);
void taskcheck_fetch_close(struct taskcheck_fetch *f);
/* Starts a GET unless one is running. */
void taskcheck_fetch_start(struct taskcheck_fetch *f);
size_t taskcheck_fetch_pollfds(const struct taskcheck_fetch *f, struct pollfd *out, size_t max);
/* poll()'s answer for what pollfds gave. true once a GET finished with the
 * count (*total); *failed true when it finished without it (HTTP error,
 * transport, no such family: nothing to check against). */
bool taskcheck_fetch_dispatch(struct taskcheck_fetch *f, const struct pollfd *pfd, size_t n,
			      double *total, bool *failed);

#endif
