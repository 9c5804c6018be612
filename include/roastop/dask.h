/* The Dask scheduler poller: libcurl's multi interface driven from roastop's
 * one poll() loop, so a slow or huge response never stalls UDP ingest or
 * the screen. Each round (every interval) asks the routes of its table
 * (src/source/dask_round.c), richest source first: the collector's route,
 * identity.json, the scheduler's /metrics, counts.json, each worker's
 * /metrics; and delivers EV_SAMPLE, EV_FINE and EV_STATUS ("scheduler": connected,
 * degraded and why, lost) events. Redirects are followed by hand and only
 * within the origin (scheme, host, port) of --scheduler: --header values
 * never reach another host, and https is never downgraded. An unreachable scheduler is retried with
 * exponential backoff; the LOST status makes the run model leave a gap. */
#ifndef ROASTOP_DASK_H
#define ROASTOP_DASK_H

#include <poll.h>

#include "roastop/dask_json.h"
#include "roastop/event.h"

#define DASK_WORKER_POLL_MAX 512 /* larger clusters: no per-worker fallback */
#define DASK_WORKER_CONCURRENCY 16
#define DASK_BACKOFF_MAX 30.0 /* seconds between retries of a lost scheduler */
#define DASK_WORKER_MAX_BODY (1u << 20) /* a worker's /metrics: ~5 KB; 16 at a time */
#define DASK_MAX_REDIRECTS 3 /* same-origin hops followed per request */

struct dask_config {
	const char *url; /* http(s)://host:port of the dashboard */
	const char *prefix; /* --dashboard-prefix (e.g. /proxy/8787), or NULL */
	double interval; /* seconds between rounds */
	const char *cacert; /* CA bundle for https, or NULL */
	bool insecure; /* no TLS verification (off by default) */
	const char *const *headers; /* "Name: value", sent with every request */
	size_t n_headers;
	/* without the route, read the scheduler's per-prefix totals off its
	 * /metrics each round (off with --task-stream, whose tasks they are) */
	bool prefix_totals;
};

struct dask;

/* NULL (err set) when curl or the timers cannot be set up. The first round
 * starts at once. */
struct dask *dask_open(const struct dask_config *cfg, event_deliver_fn fn, void *ctx, char *err,
		       size_t errsz);
void dask_close(struct dask *d);

/* The descriptors to watch, written to out (at most max); returns how many. */
size_t dask_pollfds(const struct dask *d, struct pollfd *out, size_t max);
/* Handles poll()'s answer for the descriptors dask_pollfds gave. now is the
 * wall clock (seconds since the epoch) that stamps events. */
void dask_dispatch(struct dask *d, const struct pollfd *pfd, size_t n, double now);


#endif
