/* metrics.json's roastop block beyond the run's own keys: the session's
 * counters, the HTTP server's, each source's block and the run's Dask
 * tasks (docs/metrics.md). Data in, JSON out: the app gathers what its
 * sources and server say and hands it over, so no exporter knows them;
 * it is rendered when the measurement is written. */
#ifndef ROASTOP_METRICS_EXTRA_H
#define ROASTOP_METRICS_EXTRA_H

#include "roastop/jsonw.h"
#include "roastop/metrics.h"
#include "roastop/session.h"
#include "roastop/source.h"

#define METRICS_EXTRA_RECORDED 16 /* sources of recorded events at most */

struct past_run;

struct metrics_extra_input {
	const struct session *ses;
	/* the "serve" block: written when serve_listen is set (serving: its
	 * counters, serve_stats_counters) or serve_failures > 0 (its error) */
	const char *serve_listen;
	struct source_stats serve_counters;
	const char *serve_error;
	uint64_t serve_failures;
	/* the sources of recorded events: their blocks, from their statistics */
	const char *recorded_names[METRICS_EXTRA_RECORDED];
	struct source_stats recorded_stats[METRICS_EXTRA_RECORDED];
	size_t n_recorded;
	/* the task model is written; tasks_feed: its feed's counters, when
	 * tasks_fed (metrics_tasks.h) */
	bool tasks, tasks_fed;
	struct source_typed tasks_feed;
	/* the run's last comparable run (history.h), when one was found */
	const struct past_run *previous;
};

/* The blocks for run r (may be NULL), its task figures from m, as members
 * of the object w is in. */
void metrics_extra_write(struct jsonw *w, const struct metrics_extra_input *in,
			 const struct run *r, const struct metrics *m);

#endif
