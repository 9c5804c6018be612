/* The scheduler poller (see dask.h for the sources and their order).
 *
 * The transfers go through the shared HTTP client (httpc.h: libcurl multi
 * in the app's poll loop); a timerfd of its own paces the rounds and the
 * backoff. It is a source (source.h): dask_source at the end. */
#include "roastop/clock.h"
#include "roastop/dask.h"
#include "roastop/source.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "roastop/dask_json.h"
#include "roastop/httpc.h"
#include "roastop/range.h"
#include "roastop/strbuf.h"
#include "roastop/strutil.h"
#include "roastop/timer.h"

#define URL_MAX 2304
#define CONNECT_TIMEOUT_MS 3000L
#define STATE_RETRY 5.0 /* seconds before asking again for an absent route */
#define WK_URL 160 /* http://[v6 host]:port/metrics */
#define BODY_KEEP (1u << 20) /* a body buffer grown past this is freed after use */
#define HTTP_TOO_LARGE 413 /* what a body cut at its route's cap counts as */
/* the round's timer, curl's, and every socket curl may ask for */
_Static_assert(2 + HTTPC_MAX_SOCKS <= SOURCE_MAX_FDS, "the poller's descriptors fit a source's");

enum route { R_SITEMAP, R_STATE, R_IDENTITY, R_PROM, R_COUNTS, R_WORKER };

static const char *const ROUTE_PATH[] = {
	[R_SITEMAP] = "sitemap.json",
	[R_STATE] = "roastop/v1/state.json",
	[R_IDENTITY] = "json/identity.json",
	[R_PROM] = "metrics",
	[R_COUNTS] = "json/counts.json",
};

struct xfer {
	CURL *easy;
	enum route route;
	bool busy;
	size_t worker; /* R_WORKER: index into d->wk */
	struct strbuf body;
	size_t max_body; /* the route's cap */
	bool too_large;
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
	/* dashboards named by the identity.json being decoded */
	struct endpoint *ep;
	size_t n_ep, cap_ep;
	double round_t0; /* monotonic start of the round */
	/* the round */
	bool in_round;
	double now;
	bool want_sitemap;
	bool has_state, has_identity, has_prom, has_counts; /* /sitemap.json's; true if unknown */
	double state_retry_at;
	bool fallback; /* identity answered 500: prom + workers this round */
	optnum prom_workers, prom_tasks;
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

/* ---- small pure helpers ------------------------------------------------- */

bool dask_url_join(char *buf, size_t size, const char *base, const char *prefix,
		   const char *route)
{
	size_t bl = strlen(base);
	while (bl > 0 && base[bl - 1] == '/')
		bl--;
	const char *p = prefix ? prefix : "";
	while (*p == '/')
		p++;
	size_t pl = strlen(p);
	while (pl > 0 && p[pl - 1] == '/')
		pl--;
	while (*route == '/')
		route++;
	int n = pl ? snprintf(buf, size, "%.*s/%.*s/%s", (int)bl, base, (int)pl, p, route)
		   : snprintf(buf, size, "%.*s/%s", (int)bl, base, route);
	return n >= 0 && (size_t)n < size;
}

double dask_backoff(unsigned failures)
{
	if (failures == 0)
		return 0.0;
	double s = ldexp(1.0, (int)(failures > 16 ? 16 : failures) - 1);
	return s < DASK_BACKOFF_MAX ? s : DASK_BACKOFF_MAX;
}

static void round_end(struct dask *d, bool reached);
static void workers_begin(struct dask *d);
static void counts_or_workers(struct dask *d);

/* ---- status ------------------------------------------------------------- */

/* A redirect followed this round is named in whatever the status says. */
static void status_set(struct dask *d, enum source_state state, const char *reason)
{
	char full[sizeof(d->reason)];
	if (d->redirected[0])
		snprintf(full, sizeof(full), "%s (redirected to %.120s)", reason, d->redirected);
	else
		strutil_copy(full, sizeof(full), reason);
	if (d->status_sent && d->state == state && strcmp(d->reason, full) == 0)
		return;
	d->status_sent = true;
	d->state = state;
	strutil_copy(d->reason, sizeof(d->reason), full);
	struct event *ev = &d->ev_status;
	event_reset(ev);
	ev->type = EV_STATUS;
	ev->t = d->now;
	ev->u.status = (struct ev_status){ .source = "scheduler", .state = state,
					   .reason = d->reason, .gaps_timelines = { 1, true } };
	d->deliver(d->ctx, ev);
}

/* ---- curl plumbing ------------------------------------------------------ */

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *userp)
{
	struct xfer *x = userp;
	size_t n = size * nmemb;
	if (x->body.len + n > x->max_body) {
		x->too_large = true;
		return 0; /* aborts the transfer */
	}
	strbuf_append(&x->body, ptr, n);
	return x->body.failed ? 0 : n;
}

/* headers: only for the scheduler; a hub token must not travel in clear to
 * every worker's dashboard. */
static bool xfer_init(struct dask *d, struct xfer *x, bool headers)
{
	x->easy = curl_easy_init();
	if (!x->easy)
		return false;
	strbuf_init(&x->body);
	CURL *e = x->easy;
	double timeout = d->cfg.interval * 2 < 10 ? 10 : d->cfg.interval * 2;
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	/* curl would carry --header values to any host a redirect names (it
	 * strips only Authorization and Cookie) and follow https -> http: the
	 * scheduler's redirects are followed by hand (sched_redirect). */
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_USERAGENT, "roastop/" ROASTOP_VERSION);
	if (headers)
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, d->headers);
	if (d->cfg.cacert)
		curl_easy_setopt(e, CURLOPT_CAINFO, d->cfg.cacert);
	if (d->cfg.insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	return true;
}

/* JSON bodies become a tree (dask_json.h's budget); Prometheus text is
 * parsed as it stands, so only the buffer counts. */
static size_t route_max_body(enum route r)
{
	switch (r) {
	case R_PROM: return DASK_MAX_BODY;
	case R_WORKER: return DASK_WORKER_MAX_BODY;
	default: return DASK_MAX_JSON_BODY;
	}
}

/* A rare big body's pages go back rather than wait for the next body
 * (the scheduler's routes run one after another in one buffer). */
static void xfer_shrink(struct xfer *x)
{
	if (x->body.cap > BODY_KEEP)
		strbuf_free(&x->body);
	else
		strbuf_reset(&x->body);
}

static void xfer_start(struct dask *d, struct xfer *x, enum route r, const char *url)
{
	x->route = r;
	x->busy = true;
	x->too_large = false;
	x->max_body = route_max_body(r);
	xfer_shrink(x);
	curl_easy_setopt(x->easy, CURLOPT_URL, url);
	curl_easy_setopt(x->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->max_body);
	d->st.requests++;
	if (httpc_add(d->http, x->easy) != 0) {
		x->busy = false;
		d->st.failures++;
	}
}

/* The route asked with the token of the facts kept (a URL-safe string,
 * dask_json.h), so the body leaves them out while they hold. */
static bool state_have(const struct dask *d, enum route r, char *url, size_t size)
{
	if (r != R_STATE || !d->facts.token)
		return true;
	size_t n = strlen(url);
	return (size_t)snprintf(url + n, size - n, "?have=%s", d->facts.token) < size - n;
}

static void sched_start(struct dask *d, enum route r)
{
	char url[URL_MAX];
	if (!dask_url_join(url, sizeof(url), d->cfg.url, d->cfg.prefix, ROUTE_PATH[r]) ||
	    !state_have(d, r, url, sizeof(url))) {
		status_set(d, SRC_LOST, "scheduler URL too long");
		round_end(d, false);
		return;
	}
	d->sched.hops = 0;
	d->redirect_why[0] = '\0';
	if (r == R_STATE)
		d->state_why[0] = '\0'; /* kept until the route is asked again */
	xfer_start(d, &d->sched, r, url);
	if (!d->sched.busy) {
		status_set(d, SRC_LOST, "cannot start an HTTP transfer");
		round_end(d, false);
	}
}

/* ---- the round ---------------------------------------------------------- */

static void round_begin(struct dask *d)
{
	if (d->in_round)
		return;
	d->in_round = true;
	if (d->flush == FLUSH_WANTED)
		d->flush = FLUSH_RUNNING;
	d->round_t0 = clock_mono();
	d->st.rounds++;
	d->fallback = false;
	d->prom_workers = d->prom_tasks = optnum_none();
	d->counts_workers = d->counts_threads = d->counts_tasks = optnum_none();
	d->prom_code = 0;
	snprintf(d->identity_why, sizeof(d->identity_why), "identity.json not offered");
	d->redirected[0] = '\0';
	if (d->want_sitemap)
		sched_start(d, R_SITEMAP);
	else if (d->has_state && d->now >= d->state_retry_at)
		sched_start(d, R_STATE);
	else
		sched_start(d, d->has_identity ? R_IDENTITY : R_PROM);
}

static void round_end(struct dask *d, bool reached)
{
	d->in_round = false;
	if (d->flush == FLUSH_RUNNING)
		d->flush = FLUSH_DONE;
	d->failures = reached ? 0 : d->failures + 1;
	double took = clock_mono() - d->round_t0;
	double next = reached ? d->cfg.interval - took : dask_backoff(d->failures);
	if (reached && next < 0) {
		d->st.overruns++; /* slower than the interval: the next round starts now */
		next = 0;
	}
	if (d->flush == FLUSH_WANTED)
		next = 0; /* asked for during this round: the last one begins now */
	if (!reached) {
		d->want_sitemap = true; /* it may come back as another Dask */
		d->st.mode = "lost";
	}
	timer_set(d->tick_tfd, next);
}

static void deliver(struct dask *d, struct event *ev)
{
	if (ev->type != EV_NONE)
		d->deliver(d->ctx, ev);
}

/* identity.json's services.dashboard of each worker, while it is decoded. */
static void ep_add(void *ctx, const char *worker, const char *host, int port)
{
	struct dask *d = ctx;
	if (d->n_ep == d->cap_ep) {
		size_t cap = d->cap_ep ? 2 * d->cap_ep : 16;
		struct endpoint *ep = cap <= DASK_WORKER_POLL_MAX ? realloc(d->ep, cap * sizeof(*ep)) : NULL;
		if (!ep)
			return;
		d->ep = ep;
		d->cap_ep = cap;
	}
	struct endpoint *e = &d->ep[d->n_ep];
	bool v6 = strchr(host, ':') != NULL;
	int n = snprintf(e->url, sizeof(e->url), "http://%s%s%s:%d/metrics", v6 ? "[" : "", host,
			 v6 ? "]" : "", port);
	if (n < 0 || (size_t)n >= sizeof(e->url) || strlen(worker) >= sizeof(e->id))
		return;
	strutil_copy(e->id, sizeof(e->id), worker);
	d->n_ep++;
}

/* Keeps what a good identity said, for rounds in which it answers 500. */
static void wk_cache(struct dask *d, const struct ev_sample *s);

static void reject_count(struct dask *d, enum dask_error e)
{
	d->st.rejected++;
	d->st.rejected_by[e]++;
	d->st.out_of_range += e == DASK_OUT_OF_RANGE;
}

/* Why a route that answered did not do: a cut body, a refused redirect,
 * an HTTP status; "" when there is nothing to say. */
static void route_why(const struct dask *d, const struct xfer *x, long code, char *buf,
		      size_t size)
{
	const char *name = x->route == R_STATE ? "roastop route" : ROUTE_PATH[x->route];
	if (x->too_large)
		snprintf(buf, size, "%s: response over the size limit (%zu MiB)", name,
			 x->max_body >> 20);
	else if (d->redirect_why[0])
		snprintf(buf, size, "%s: %.170s", name, d->redirect_why);
	else if (code == 500 && x->route == R_IDENTITY)
		snprintf(buf, size, "identity.json 500 while tasks run (dask#8370)");
	else if (x->route != R_STATE || code != 404) /* 404: not installed yet */
		snprintf(buf, size, "%s HTTP %ld", name, code);
}

static void on_state(struct dask *d, long code, const struct xfer *x)
{
	char err[160];
	if (code == 200) {
		enum dask_error e = dask_parse_state_facts(x->body.data, x->body.len, d->now,
							   &d->ev, &d->ev_fine, &d->ev_span,
							   &d->facts, err, sizeof(err));
		if (e == DASK_STALE_FACTS && d->facts.token) {
			/* another token, scheduler or worker count: never old facts
			 * against new numbers; ask again for the whole body */
			dask_facts_drop(&d->facts);
			d->st.facts_refetched++;
			sched_start(d, R_STATE);
			return;
		}
		if (e == DASK_OK) {
			status_set(d, SRC_CONNECTED, "roastop route: workers and fine metrics");
			deliver(d, &d->ev);
			deliver(d, &d->ev_fine);
			deliver(d, &d->ev_span);
			d->st.mode = "state";
			round_end(d, true);
			return;
		}
		reject_count(d, e);
		snprintf(d->state_why, sizeof(d->state_why), "roastop route rejected (%s: %.120s)",
			 dask_error_name(e), err);
	} else {
		route_why(d, x, code, d->state_why, sizeof(d->state_why));
	}
	d->state_retry_at = d->now + STATE_RETRY; /* absent until the collector installs it */
	sched_start(d, d->has_identity ? R_IDENTITY : R_PROM);
}

/* identity.json did: connected, unless the route answered and was refused. */
static void identity_status(struct dask *d)
{
	char why[sizeof(d->reason)];
	if (!d->state_why[0]) {
		status_set(d, SRC_CONNECTED, "identity.json (no roastop route: no fine metrics)");
		return;
	}
	snprintf(why, sizeof(why), "identity.json (no fine metrics); %s", d->state_why);
	status_set(d, SRC_DEGRADED, why);
}

static void on_identity(struct dask *d, long code, const struct xfer *x)
{
	char err[160];
	if (code == 200) {
		d->n_ep = 0;
		enum dask_error e = dask_parse_identity(x->body.data, x->body.len, d->now, &d->ev,
							ep_add, d, err, sizeof(err));
		if (e == DASK_OK) {
			identity_status(d);
			wk_cache(d, &d->ev.u.sample);
			deliver(d, &d->ev);
			d->st.mode = "identity";
			round_end(d, true);
			return;
		}
		d->n_ep = 0; /* what the rejected body had named: nothing of it is kept */
		reject_count(d, e);
		snprintf(d->identity_why, sizeof(d->identity_why),
			 "identity.json rejected (%s: %.120s)", dask_error_name(e), err);
	} else {
		d->st.http_500 += code == 500; /* dask#8370: tuple keys while tasks run */
		route_why(d, x, code, d->identity_why, sizeof(d->identity_why));
	}
	d->fallback = true;
	if (d->has_prom)
		sched_start(d, R_PROM);
	else
		counts_or_workers(d);
}

static void workers_next(struct dask *d);
static void fallback_finish(struct dask *d);

/* Without a sample from /metrics (no prometheus_client on the scheduler:
 * 200 and no samples) the counts come from counts.json, which every Dask
 * serves; then each known worker's /metrics. */
static void counts_or_workers(struct dask *d)
{
	if (!d->prom_workers.valid && d->has_counts)
		sched_start(d, R_COUNTS);
	else
		workers_begin(d);
}

static void workers_begin(struct dask *d)
{
	d->wk_next = 0;
	d->wk_pending = 0;
	for (size_t i = 0; i < d->n_wk; i++)
		d->wk[i].fresh = false;
	workers_next(d);
}

static void on_prom(struct dask *d, long code, const struct xfer *x)
{
	struct prom_stats ps = { 0 };
	d->prom_code = code;
	enum dask_error e = code != 200 ? DASK_BAD_SHAPE
		: dask_parse_scheduler_prom(x->body.data, x->body.len, d->now, &d->ev, &ps);
	if (e == DASK_OK) {
		d->prom_workers = optnum_of(d->ev.u.sample.worker_count);
		d->prom_tasks = d->ev.u.sample.tasks_processing;
	} else if (code == 200 && ps.samples > 0) {
		reject_count(d, e); /* no sample at all: a Dask without prometheus_client */
	}
	counts_or_workers(d);
}

static void on_counts(struct dask *d, long code, const struct xfer *x)
{
	char err[160];
	if (code == 200) {
		enum dask_error e = dask_parse_counts(x->body.data, x->body.len, d->now, &d->ev,
						      err, sizeof(err));
		if (e == DASK_OK) {
			const struct ev_sample *s = &d->ev.u.sample;
			d->counts_workers = optnum_of(s->worker_count);
			d->counts_threads = s->total_threads;
			d->counts_tasks = s->tasks_processing;
		} else {
			reject_count(d, e);
		}
	}
	workers_begin(d);
}

static void on_sitemap(struct dask *d, long code, const struct xfer *x)
{
	d->want_sitemap = false;
	int id = -1, prom = -1, counts = -1;
	if (code == 200)
		dask_parse_sitemap(x->body.data, x->body.len, &id, &prom, &counts);
	d->has_identity = id != 0; /* unknown: try it */
	d->has_prom = prom != 0;
	d->has_counts = counts != 0;
	d->has_state = true; /* installed at run time, so never in an old sitemap */
	d->in_round = false;
	round_begin(d);
}

/* scheme://host:port of url, the port filled in when implied. */
static bool url_origin(const char *url, char *buf, size_t size)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL;
	bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
		  curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
		  curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
		  curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK;
	if (ok) {
		int n = snprintf(buf, size, "%s://%s:%s", scheme, host, port);
		ok = n > 0 && (size_t)n < size;
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return ok;
}

static const char ANOTHER_ORIGIN[] = "another origin";

static bool http_redirect(long code)
{
	return code == 301 || code == 302 || code == 303 || code == 307 || code == 308;
}

/* Follows a redirect of the scheduler's within the origin of --scheduler
 * (the --header values are meant for it alone), at most DASK_MAX_REDIRECTS
 * hops. Otherwise says why in redirect_why and returns false: the route
 * then falls back as for any other HTTP status. */
static bool sched_redirect(struct dask *d, struct xfer *x)
{
	char *target = NULL, base[URL_MAX], to[URL_MAX];
	curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &target);
	bool known = target && url_origin(d->cfg.url, base, sizeof(base)) &&
		     url_origin(target, to, sizeof(to));
	bool same = known && strcasecmp(base, to) == 0;
	bool web = known &&
		   (strncasecmp(to, "http://", 7) == 0 || strncasecmp(to, "https://", 8) == 0);
	const char *why = !known			 ? "no usable Location"
			  : !web			 ? "not http or https"
			  : x->hops >= DASK_MAX_REDIRECTS ? "too many redirects"
			  : same			 ? NULL
			  : strncasecmp(base, "https:", 6) == 0 && strncasecmp(to, "https:", 6) != 0
				  ? "https -> http"
				  : ANOTHER_ORIGIN;
	if (!why) {
		x->hops++;
		d->st.redirects++;
		strutil_copy(d->redirected, sizeof(d->redirected), target);
		xfer_start(d, x, x->route, d->redirected);
		if (x->busy)
			return true;
		why = "cannot start an HTTP transfer";
	}
	d->st.redirects_refused++;
	int n = snprintf(d->redirect_why, sizeof(d->redirect_why),
			 "redirect to %.90s not followed: %s", target ? target : "?", why);
	if (why == ANOTHER_ORIGIN && n > 0 && (size_t)n < sizeof(d->redirect_why))
		snprintf(d->redirect_why + n, sizeof(d->redirect_why) - (size_t)n,
			 "; use --scheduler %.60s", to);
	return false;
}

static void sched_done(struct dask *d, CURLcode rc, long code)
{
	struct xfer *x = &d->sched;
	x->too_large |= rc == CURLE_FILESIZE_EXCEEDED; /* declared over the cap */
	if (x->too_large) {
		d->st.too_large++;
		code = HTTP_TOO_LARGE; /* a refused body: the next source may do */
	} else if (rc != CURLE_OK || code == 0) {
		d->st.failures++;
		char why[200];
		snprintf(why, sizeof(why), "%s: %s", ROUTE_PATH[x->route], curl_easy_strerror(rc));
		status_set(d, SRC_LOST, why);
		round_end(d, false);
		return;
	} else if (http_redirect(code) && sched_redirect(d, x)) {
		return;
	}
	d->st.bytes += x->body.len;
	if (code != 200)
		d->st.failures++;
	switch (x->route) {
	case R_SITEMAP: on_sitemap(d, code, x); break;
	case R_STATE: on_state(d, code, x); break;
	case R_IDENTITY: on_identity(d, code, x); break;
	case R_PROM: on_prom(d, code, x); break;
	case R_COUNTS: on_counts(d, code, x); break;
	case R_WORKER: break;
	}
}

/* ---- the per-worker fallback -------------------------------------------- */

static const char *ep_find(const struct dask *d, const char *id)
{
	for (size_t i = 0; i < d->n_ep; i++)
		if (strcmp(d->ep[i].id, id) == 0)
			return d->ep[i].url;
	return "";
}

static void wk_cache(struct dask *d, const struct ev_sample *s)
{
	if (s->n_workers > DASK_WORKER_POLL_MAX) {
		d->n_wk = 0;
		return;
	}
	struct wk *nw = s->n_workers ? calloc(s->n_workers, sizeof(*nw)) : NULL;
	if (s->n_workers && !nw)
		return;
	for (size_t i = 0; i < s->n_workers; i++) {
		const struct worker_sample *w = &s->workers[i];
		strutil_copy(nw[i].id, sizeof(nw[i].id), w->id);
		strutil_copy(nw[i].name, sizeof(nw[i].name), w->name);
		strutil_copy(nw[i].host, sizeof(nw[i].host), w->host);
		nw[i].nthreads = w->nthreads;
		nw[i].memory_limit = w->memory_limit;
		strutil_copy(nw[i].url, sizeof(nw[i].url), ep_find(d, w->id));
		for (size_t j = 0; j < d->n_wk; j++) /* keep the CPU baseline */
			if (strcmp(d->wk[j].id, nw[i].id) == 0) {
				nw[i].cpu_s = d->wk[j].cpu_s;
				nw[i].cpu_t = d->wk[j].cpu_t;
			}
	}
	free(d->wk);
	d->wk = nw;
	d->n_wk = s->n_workers;
}

static void workers_next(struct dask *d)
{
	for (size_t k = 0; k < DASK_WORKER_CONCURRENCY && d->wk_next < d->n_wk; k++) {
		struct xfer *x = &d->workers[k];
		if (x->busy)
			continue;
		while (d->wk_next < d->n_wk && !d->wk[d->wk_next].url[0])
			d->wk_next++;
		if (d->wk_next == d->n_wk)
			break;
		x->worker = d->wk_next++;
		xfer_start(d, x, R_WORKER, d->wk[x->worker].url);
		if (x->busy)
			d->wk_pending++;
	}
	if (d->wk_pending == 0 && d->wk_next >= d->n_wk)
		fallback_finish(d);
}

/* CPU % from two readings of the counter; a rate outside range.h's table
 * (a counter that leapt) is not measured, and counted. */
static optnum worker_cpu_rate(struct dask *d, const struct wk *w)
{
	double pct = 100.0 * (w->now.cpu_seconds.value - w->cpu_s) / (d->now - w->cpu_t);
	if (range_ok(RANGE_CPU_PERCENT, pct))
		return optnum_of(pct);
	d->st.out_of_range++;
	return optnum_none();
}

static void worker_done(struct dask *d, struct xfer *x, CURLcode rc, long code)
{
	d->wk_pending--;
	struct wk *w = &d->wk[x->worker];
	struct prom_stats ps = { 0 };
	d->st.bytes += x->body.len;
	enum dask_error e = rc != CURLE_OK || code != 200
		? DASK_BAD_SHAPE : dask_parse_worker_prom(x->body.data, x->body.len, &w->now, &ps);
	if (e == DASK_OUT_OF_RANGE) {
		d->st.rejected++;
		d->st.out_of_range++;
	}
	if (e != DASK_OK) {
		d->st.failures++;
	} else {
		w->fresh = true;
		w->cpu_percent = optnum_none();
		if (w->now.cpu_seconds.valid && w->cpu_t > 0 && d->now > w->cpu_t &&
		    w->now.cpu_seconds.value >= w->cpu_s)
			w->cpu_percent = worker_cpu_rate(d, w);
		if (w->now.cpu_seconds.valid) {
			w->cpu_s = w->now.cpu_seconds.value;
			w->cpu_t = d->now;
		}
	}
	workers_next(d);
}

/* Where this round's fallback numbers came from, for the status line:
 * the scheduler's /metrics, counts.json, or the workers' rows. */
static void fallback_why(const struct dask *d, const struct ev_sample *s, char *buf, size_t size)
{
	char metrics[48] = "";
	if (!d->prom_workers.valid && d->has_prom)
		snprintf(metrics, sizeof(metrics), ", /metrics HTTP %ld: no sample", d->prom_code);
	const char *counts = d->prom_workers.valid ? "workers and processing from /metrics"
			     : d->counts_workers.valid ? "workers, threads and processing from counts.json"
						       : "workers from their /metrics";
	snprintf(buf, size, "%.110s%s: %s%s%s%.60s", d->identity_why, metrics, counts,
		 s->n_workers ? "; memory and CPU from workers' /metrics" : "",
		 d->state_why[0] ? "; " : "", d->state_why);
}

/* identity.json answered 500: a sample from the scheduler's counts
 * (/metrics, else counts.json) and what each known worker's /metrics said. */
static void fallback_finish(struct dask *d)
{
	if (!d->in_round)
		return;
	event_reset(&d->ev);
	d->ev.type = EV_SAMPLE;
	d->ev.t = d->now;
	struct ev_sample *s = &d->ev.u.sample;
	s->source = d->prom_workers.valid || !d->counts_workers.valid ? "prometheus" : "counts";
	s->tasks_processing = d->prom_tasks.valid ? d->prom_tasks : d->counts_tasks;
	s->total_threads = d->counts_threads;
	size_t n = 0;
	for (size_t i = 0; i < d->n_wk; i++)
		n += d->wk[i].fresh;
	s->workers = n ? arena_alloc(&d->ev.mem, n * sizeof(*s->workers)) : NULL;
	for (size_t i = 0; s->workers && i < d->n_wk; i++) {
		const struct wk *w = &d->wk[i];
		if (!w->fresh)
			continue;
		s->workers[s->n_workers++] = (struct worker_sample){
			.id = w->id, .name = w->name[0] ? w->name : NULL, .host = w->host,
			.nthreads = w->now.threads.valid ? w->now.threads : w->nthreads,
			.memory_bytes = w->now.memory_bytes, .memory_limit = w->memory_limit,
			.cpu_percent = w->cpu_percent, .managed_bytes = w->now.managed_bytes,
			.spilled_bytes = w->now.spilled_bytes,
		};
	}
	optnum count = d->prom_workers.valid ? d->prom_workers : d->counts_workers;
	char why[sizeof(d->reason)];
	if (!count.valid && s->n_workers == 0) {
		snprintf(why, sizeof(why), "%.170s, /metrics HTTP %ld: no sample%s%.110s",
			 d->identity_why, d->prom_code, d->state_why[0] ? "; " : "", d->state_why);
		status_set(d, SRC_DEGRADED, why);
		round_end(d, true);
		return;
	}
	s->worker_count = count.valid ? (uint32_t)count.value : (uint32_t)s->n_workers;
	if (s->n_workers != s->worker_count)
		s->n_workers = 0; /* a partial list would read as departures */
	fallback_why(d, s, why, sizeof(why));
	status_set(d, SRC_DEGRADED, why);
	d->st.mode = s->source;
	deliver(d, &d->ev);
	round_end(d, true);
}

/* A transfer finished (httpc.h). */
static void xfer_done(void *ctx, CURL *e, CURLcode rc, long code)
{
	struct dask *d = ctx;
	struct xfer *x = NULL;
	curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x);
	x->busy = false;
	strbuf_append(&x->body, "", 0); /* NUL-terminated even when empty */
	if (x->route == R_WORKER)
		worker_done(d, x, rc, code);
	else
		sched_done(d, rc, code);
	if (!x->busy)
		xfer_shrink(x);
}

/* ---- public ------------------------------------------------------------- */

static bool dask_setup(struct dask *d, char *err, size_t errsz)
{
	for (size_t i = 0; i < d->cfg.n_headers; i++) {
		struct curl_slist *h = curl_slist_append(d->headers, d->cfg.headers[i]);
		if (!h)
			return false;
		d->headers = h;
	}
	d->http = httpc_open(xfer_done, d);
	d->tick_tfd = timer_open(0, 0);
	if (!d->http || d->tick_tfd < 0) {
		snprintf(err, errsz, "scheduler poller: cannot set up curl or timers");
		return false;
	}
	if (!xfer_init(d, &d->sched, true))
		return false;
	for (size_t i = 0; i < DASK_WORKER_CONCURRENCY; i++)
		if (!xfer_init(d, &d->workers[i], false))
			return false;
	return true;
}

struct dask *dask_open(const struct dask_config *cfg, event_deliver_fn fn, void *ctx, char *err,
		       size_t errsz)
{
	struct dask *d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	d->cfg = *cfg;
	if (d->cfg.interval <= 0)
		d->cfg.interval = 1.0;
	d->deliver = fn;
	d->ctx = ctx;
	d->tick_tfd = -1;
	d->want_sitemap = true;
	d->st.mode = "-";
	event_init(&d->ev);
	event_init(&d->ev_fine);
	event_init(&d->ev_span);
	event_init(&d->ev_status);
	dask_facts_init(&d->facts);
	snprintf(err, errsz, "scheduler poller: out of memory");
	if (!dask_setup(d, err, errsz)) {
		dask_close(d);
		return NULL;
	}
	timer_set(d->tick_tfd, 0);
	return d;
}

static void xfer_free(struct dask *d, struct xfer *x)
{
	if (!x->easy)
		return;
	if (x->busy)
		httpc_remove(d->http, x->easy);
	curl_easy_cleanup(x->easy);
	strbuf_free(&x->body);
}

void dask_close(struct dask *d)
{
	if (!d)
		return;
	xfer_free(d, &d->sched);
	for (size_t i = 0; i < DASK_WORKER_CONCURRENCY; i++)
		xfer_free(d, &d->workers[i]);
	httpc_close(d->http);
	curl_slist_free_all(d->headers);
	if (d->tick_tfd >= 0)
		close(d->tick_tfd);
	event_free(&d->ev);
	event_free(&d->ev_fine);
	dask_facts_free(&d->facts);
	event_free(&d->ev_span);
	event_free(&d->ev_status);
	free(d->ep);
	free(d->wk);
	free(d);
}

size_t dask_pollfds(const struct dask *d, struct pollfd *out, size_t max)
{
	if (max < 2)
		return 0;
	out[0] = (struct pollfd){ .fd = d->tick_tfd, .events = POLLIN };
	return 1 + httpc_pollfds(d->http, out + 1, max - 1);
}

void dask_dispatch(struct dask *d, const struct pollfd *pfd, size_t n, double now)
{
	d->now = now;
	if (n > 1)
		httpc_dispatch(d->http, pfd + 1, n - 1);
	if (n > 0 && (pfd[0].revents & POLLIN)) {
		timer_drain(d->tick_tfd);
		round_begin(d); /* round_end arms the next one */
	}
}

void dask_wake(struct dask *d)
{
	d->state_retry_at = 0;
	if (!d->in_round && d->failures == 0)
		timer_set(d->tick_tfd, 0); /* a lost scheduler keeps its backoff */
}

void dask_flush(struct dask *d)
{
	d->flush = FLUSH_WANTED;
	if (!d->in_round)
		timer_set(d->tick_tfd, 0);
}

bool dask_flushing(const struct dask *d)
{
	return d->flush == FLUSH_WANTED || d->flush == FLUSH_RUNNING;
}

void dask_get_stats(const struct dask *d, struct dask_stats *st)
{
	*st = d->st;
}

/* ---- the source (source.h) ---- */

static bool dask_wanted(const struct app_config *c)
{
	return !c->replay_path && c->scheduler_url;
}

static void *dask_source_open(const struct source_env *env, char *err, size_t errsz)
{
	const struct app_config *c = env->cfg;
	struct dask_config dc = { .url = c->scheduler_url, .prefix = c->dashboard_prefix,
				  .interval = c->interval, .cacert = c->cacert,
				  .insecure = c->insecure, .headers = c->headers,
				  .n_headers = c->n_headers };
	struct dask *d = dask_open(&dc, env->deliver, env->ctx, err, errsz);
	if (d)
		fprintf(stderr, "roastop: polling the Dask scheduler at %s every %gs\n",
			c->scheduler_url, c->interval);
	return d;
}

static size_t dask_source_pollfds(const void *d, struct pollfd *out, size_t max)
{
	return dask_pollfds(d, out, max);
}

static void dask_source_dispatch(void *d, const struct pollfd *pfd, size_t n, double now)
{
	dask_dispatch(d, pfd, n, now);
}

/* A run's start and end from its collector: look for the route the
 * collector has just installed; take the scheduler's last word. */
static void dask_on_event(void *d, const struct event *ev)
{
	if (ev->type == EV_RUN_START)
		dask_wake(d);
	else if (ev->type == EV_RUN_END)
		dask_flush(d);
}

static bool dask_busy(const void *d)
{
	return dask_flushing(d);
}

/* The scheduler's address as given, for the header. */
static const char *dask_source_target(const void *d)
{
	return ((const struct dask *)d)->cfg.url;
}

static void dask_source_stats(const void *d, struct source_stats *out)
{
	struct dask_stats st;
	dask_get_stats(d, &st);
	out->state_key = "mode";
	snprintf(out->state, sizeof(out->state), "%s", st.mode);
	source_count(out, NULL, "rounds", st.rounds);
	source_count(out, NULL, "overruns", st.overruns);
	source_count(out, NULL, "requests", st.requests);
	source_count(out, NULL, "failures", st.failures);
	source_count(out, NULL, "identity_500", st.http_500);
	source_count(out, NULL, "rejected", st.rejected);
	source_count(out, NULL, "out_of_range", st.out_of_range);
	source_count(out, NULL, "too_large", st.too_large);
	source_count(out, NULL, "bytes", st.bytes);
	source_count(out, NULL, "redirects", st.redirects);
	source_count(out, NULL, "redirects_refused", st.redirects_refused);
	source_count(out, NULL, "facts_refetched", st.facts_refetched);
	for (int e = DASK_OK + 1; e < DASK__COUNT; e++)
		source_count(out, "rejected_by", dask_error_name(e), st.rejected_by[e]);
}

static void dask_source_close(void *d)
{
	dask_close(d);
}

const struct source_ops dask_source = {
	.name = "scheduler",
	.wanted = dask_wanted,
	.open = dask_source_open,
	.pollfds = dask_source_pollfds,
	.dispatch = dask_source_dispatch,
	.on_event = dask_on_event,
	.busy = dask_busy,
	.stats = dask_source_stats,
	.target = dask_source_target,
	.close = dask_source_close,
};
