/* The Dask scheduler poller (docs/scheduler.md), driven from roastop's poll()
 * loop. Each round asks the routes of its table (dask_round.c), richest
 * first, and delivers EV_SAMPLE, EV_FINE and EV_STATUS events. Redirects
 * are followed only within --scheduler's origin: --header values never
 * reach another host, and https is never downgraded. */
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
	bool prefix_totals; /* without the route, the per-prefix totals of /metrics */
};

struct dask;

/* NULL (err set) when curl or the timers cannot be set up. */
struct dask *dask_open(const struct dask_config *cfg, event_deliver_fn fn, void *ctx, char *err,
		       size_t errsz);
void dask_close(struct dask *d);

size_t dask_pollfds(const struct dask *d, struct pollfd *out, size_t max);
/* now: the wall clock that stamps events. */
void dask_dispatch(struct dask *d, const struct pollfd *pfd, size_t n, double now);


#endif
