/* Shared by the scheduler poller's files only: dask.c (transfers,
 * redirects, status), dask_round.c (the round's table), the handlers
 * (dask_routes.c, dask_tasks.c, dask_datagrams.c) and dask_workers.c (the
 * per-worker fallback). */
#ifndef ROASTOP_DASKPRIV_H
#define ROASTOP_DASKPRIV_H

#include <curl/curl.h>

#include "roastop/dask.h"
#include "roastop/dask_json.h"
#include "roastop/httpc.h"
#include "roastop/source.h"
#include "roastop/strbuf.h"

#define URL_MAX 2304
#define WK_URL 160 /* http://[v6 host]:port/metrics */

/* The scheduler's routes, the workers' /metrics, then what may follow an
 * answer besides a route: the round's end, or its beginning again. */
enum route {
	R_SITEMAP, R_STATE, R_TASKS, R_DATAGRAMS, R_IDENTITY, R_PROM, R_COUNTS,
	R_WORKER, R_END, R_BEGIN
};

/* How a route's answer did: the round's table picks the next route from it. */
enum answer {
	ANS_DID,
	ANS_MORE, /* did, and offers more (the route's task records) */
	ANS_AGAIN, /* to be asked again at once (facts gone stale) */
	ANS_FAILED,
};

/* The poller's counters: its block under metrics.json's "roastop". */
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
	 * delivered, dropped unread by the scheduler, answers cut at the cap,
	 * refused, answers read (the feed measured from the first) */
	uint64_t tasks, tasks_lost, tasks_capped, tasks_rejected, task_answers;
	uint64_t prefix_answers; /* samples with the per-prefix totals */
	const char *mode; /* "state", "identity", "prometheus", "counts", "lost", "-" */
};

struct xfer {
	CURL *easy;
	enum route route;
	bool busy;
	size_t worker; /* R_WORKER: index into d->wk */
	bool https; /* R_WORKER: asked over HTTPS */
	struct httpc_body body; /* capped at the route's */
	unsigned hops; /* same-origin redirects followed for this request */
};

/* What the last good identity.json said about a worker, for the fallback. */
struct wk {
	char id[256], name[128], host[64], url[WK_URL];
	optnum nthreads, memory_limit;
	struct dask_worker_prom now;
	bool fresh; /* answered in this round */
	double cpu_s, cpu_t; /* previous process_cpu_seconds_total and when */
	optnum cpu_percent;
};

struct endpoint {
	char id[256];
	char url[WK_URL];
};

/* The route's datagrams (dask_datagrams.c). */
struct dask_dg {
	struct dask_cursor at;
	double retry_at; /* when a route without them is asked again */
	double opened; /* monotonic: when the poller opened */
	/* payloads for another port (those taken are the listener's to
	 * count), dropped unread, answers cut at the cap, payloads refused,
	 * answers read and refused */
	uint64_t elsewhere, lost, capped, rejected, answers, answers_rejected;
	unsigned char buf[65508]; /* a UDP datagram's largest, rounded up to 3 */
};

struct dask {
	struct dask_config cfg;
	event_deliver_fn deliver;
	void *ctx;
	struct httpc *http;
	struct curl_slist *headers;
	int tick_tfd;
	struct xfer sched; /* the scheduler routes, one after another */
	struct xfer workers[DASK_WORKER_CONCURRENCY];
	struct event ev, ev_fine, ev_span, ev_status;
	struct dask_facts facts; /* the route's workers' facts, named by ?have= */
	struct dask_cursor tasks_at; /* the route's task records (dask_tasks.c) */
	bool tasks_told; /* task_stream was told they come from here */
	struct event ev_task;
	/* source_env.datagram, or NULL: datagrams.json is not asked */
	bool (*datagram)(void *ctx, const char *buf, size_t len, int port, double now);
	struct dask_dg dg;
	/* dashboards named by the identity.json being decoded */
	struct endpoint *ep;
	size_t n_ep, cap_ep;
	/* the workers' dashboards' scheme: the scheduler URL's at first
	 * (distributed configures every dashboard alike); turned over when a
	 * worker fails as a wrong scheme does, until one answers in HTTP */
	bool wk_https, wk_scheme_known;
	double round_t0; /* monotonic start of the round */
	/* the round */
	bool in_round;
	double now;
	bool want_sitemap;
	bool has_state, has_identity, has_prom, has_counts; /* /sitemap.json's; true if unknown */
	double state_retry_at;
	bool fallback; /* identity answered 500: prom + workers this round */
	optnum prom_workers, prom_tasks;
	/* this round's per-prefix totals, read with /metrics */
	bool totals_read;
	struct dask_prefix_totals totals;
	long prom_code; /* HTTP status of this round's /metrics */
	optnum counts_workers, counts_threads, counts_tasks; /* this round's counts.json */
	char identity_why[200]; /* why identity.json did not do this round */
	char state_why[200]; /* why the roastop route did not, when it last answered */
	char redirect_why[200]; /* the redirect this request did not follow */
	char redirected[URL_MAX]; /* the redirect this round followed */
	size_t wk_next, wk_pending;
	unsigned failures; /* consecutive rounds the scheduler could not be reached */
	enum { FLUSH_NONE, FLUSH_WANTED, FLUSH_RUNNING, FLUSH_DONE } flush;
	/* workers from the last good identity */
	struct wk *wk;
	size_t n_wk;
	/* status as last delivered */
	enum source_state state;
	char reason[320];
	bool status_sent;
	struct dask_stats st;
};

void dask_status_set(struct dask *d, enum source_state state, const char *reason);
void dask_xfer_start(struct dask *d, struct xfer *x, enum route r, const char *url);
void dask_deliver(struct dask *d, struct event *ev);

void dask_round_begin(struct dask *d);
void dask_round_end(struct dask *d, bool reached);
/* A scheduler route's answer (code: its HTTP status), or a worker's. */
void dask_round_answer(struct dask *d, long code, const struct xfer *x);
void dask_round_worker(struct dask *d, struct xfer *x, CURLcode rc, long code);
const char *dask_route_path(enum route r);

enum answer dask_on_sitemap(struct dask *d, long code, const struct xfer *x);
enum answer dask_on_state(struct dask *d, long code, const struct xfer *x);
enum answer dask_on_identity(struct dask *d, long code, const struct xfer *x);
enum answer dask_on_prom(struct dask *d, long code, const struct xfer *x);
enum answer dask_on_counts(struct dask *d, long code, const struct xfer *x);
void dask_totals_attach(struct dask *d);

bool dask_tasks_offered(const char *body, size_t len);
enum answer dask_on_tasks(struct dask *d, long code, const struct xfer *x);
void dask_tasks_gone(struct dask *d);
void dask_tasks_tell(struct dask *d, bool routed);

enum answer dask_on_datagrams(struct dask *d, long code, const struct xfer *x);
void dask_datagrams_stats(const struct dask *d, struct source_stats *out);

void dask_wk_cache(struct dask *d, const struct ev_sample *s);
/* Starts what it can of the workers' requests; true once all have answered. */
bool dask_workers_next(struct dask *d);
void dask_worker_done(struct dask *d, struct xfer *x, CURLcode rc, long code);
/* The round's sample from the fallback's numbers. */
void dask_fallback_finish(struct dask *d);

#endif
