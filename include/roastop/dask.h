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

struct dask_stats {
	uint64_t rounds, overruns; /* rounds started; rounds slower than the interval */
	uint64_t requests, failures; /* HTTP transfers; failed ones (transport or status) */
	uint64_t http_500; /* identity.json 500s (dask#8370) */
	uint64_t rejected; /* bodies refused by the decoders */
	uint64_t rejected_by[DASK__COUNT]; /* the same, by reason (dask_error_name) */
	uint64_t out_of_range; /* numbers outside range.h's table: bodies refused, rates dropped */
	uint64_t too_large; /* bodies over their route's cap */
	uint64_t redirects, redirects_refused; /* followed (same origin); not followed */
	uint64_t bytes; /* body bytes received */
	uint64_t facts_refetched; /* route bodies asked again whole: kept facts not theirs */
	/* the route's task records (docs/scheduler.md, "Task records"):
	 * startstops delivered; records the scheduler's buffer dropped before
	 * they were read; answers cut at the route's cap (the rest read at
	 * once after); rows or answers refused; answers read (the feed
	 * measured from the first: its count is then a number, not n/a) */
	uint64_t tasks, tasks_lost, tasks_capped, tasks_rejected, task_answers;
	/* samples delivered with the scheduler's per-prefix totals (the feed
	 * measured without the route: docs/scheduler.md) */
	uint64_t prefix_answers;
	const char *mode; /* "state", "identity", "prometheus", "counts", "lost", "-" */
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
