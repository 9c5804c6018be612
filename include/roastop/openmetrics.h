/* The session's numbers as OpenMetrics text (GET /metrics): the newest
 * run's from the metrics module, the listener's and the server's counters.
 * Formatting only; names and units in docs/metrics.md, "OpenMetrics". A
 * number not measured has no sample (never 0). */
#ifndef ROASTOP_OPENMETRICS_H
#define ROASTOP_OPENMETRICS_H

#include "roastop/diagnosis.h"
#include "roastop/metrics.h"
#include "roastop/session.h"
#include "roastop/strbuf.h"
#include "roastop/source.h"

struct openmetrics_input {
	const struct session *ses;
	const struct session_run *row; /* the newest run's row; NULL: none yet */
	const struct metrics *m; /* its metrics (or the watch's); NULL: none */
	const struct findings *findings; /* the newest run's, of its snapshot; NULL: none */
	/* roastop's own: its ticks, and the diagnosis's evaluations (at most
	 * one per tick per open run, and one at a run's close); NULL: left out */
	const uint64_t *ticks, *diagnoses;
	/* the listener's statistics (udp_source_stats) and its name, the
	 * families' prefix ("udp": roastop_udp_datagrams); NULL: no listener
	 * (a replay) */
	const struct source_stats *listener;
	const char *listener_name;
	/* the HTTP server's counters (serve.h, serve_stats_counters); NULL:
	 * left out */
	const struct source_stats *server;
};

/* Appends the whole exposition, "# EOF" last. */
void openmetrics_write(const struct openmetrics_input *in, struct strbuf *out);

#endif
