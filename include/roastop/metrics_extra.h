/* metrics.json's roastop block beyond the run's own keys: the session's
 * counters, the HTTP server's, each source's block and the run's Dask
 * tasks (docs/metrics.md). Data in, JSON out: the app gathers what its
 * sources and server say and hands it over, so no exporter knows them. */
#ifndef ROASTOP_METRICS_EXTRA_H
#define ROASTOP_METRICS_EXTRA_H

#include <cjson/cJSON.h>

#include "roastop/session.h"
#include "roastop/source.h"

#define METRICS_EXTRA_RECORDED 16 /* sources of recorded events at most */

struct metrics_extra_input {
	const struct session *ses;
	/* the "serve" block: written when serve_listen is set (serving: its
	 * counters, serve_stats_counters) or serve_failures > 0 (its error) */
	const char *serve_listen;
	const struct source_stats *serve_counters;
	const char *serve_error;
	uint64_t serve_failures;
	/* the sources of recorded events: their blocks, from their statistics */
	const char *recorded_names[METRICS_EXTRA_RECORDED];
	struct source_stats recorded_stats[METRICS_EXTRA_RECORDED];
	size_t n_recorded;
	/* the task model is written (its feed's counters, or NULL) */
	bool tasks;
	const struct ev_counters *tasks_feed;
};

/* The block for run r (may be NULL); NULL when out of memory. */
cJSON *metrics_extra_json(const struct metrics_extra_input *in, const struct run *r);

#endif
