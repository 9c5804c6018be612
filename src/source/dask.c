/* The scheduler poller (dask.h): its transfers through the shared HTTP
 * client, redirects and status, and the source (dask_source); a timerfd of
 * its own paces the rounds and the backoff. */
#include "roastop/clock.h"
#include "roastop/dask.h"
#include "roastop/source.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "roastop/dask_json.h"
#include "roastop/httpc.h"
#include "roastop/strbuf.h"
#include "roastop/strutil.h"
#include "roastop/timer.h"

#include "daskpriv.h"

#define BODY_KEEP (1u << 20) /* a body buffer grown past this is freed after use */
#define HTTP_TOO_LARGE 413 /* what a body cut at its route's cap counts as */
/* the round's timer, curl's, and every socket curl may ask for */
_Static_assert(2 + HTTPC_MAX_SOCKS <= SOURCE_MAX_FDS, "the poller's descriptors fit a source's");

/* ---- status ------------------------------------------------------------- */

/* A redirect followed this round is named in whatever the status says. */
void dask_status_set(struct dask *d, enum source_state state, const char *reason)
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

/* headers: only for the scheduler; a hub token must not travel in clear to
 * every worker's dashboard. */
static bool xfer_init(struct dask *d, struct xfer *x, bool headers)
{
	x->easy = curl_easy_init();
	if (!x->easy)
		return false;
	strbuf_init(&x->body.buf);
	CURL *e = x->easy;
	httpc_easy_defaults(e, d->cfg.interval, d->cfg.cacert, d->cfg.insecure, &x->body);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	if (headers)
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, d->headers);
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
	if (x->body.buf.cap > BODY_KEEP)
		strbuf_free(&x->body.buf);
	else
		strbuf_reset(&x->body.buf);
}

void dask_xfer_start(struct dask *d, struct xfer *x, enum route r, const char *url)
{
	x->route = r;
	x->busy = true;
	x->body.too_large = false;
	x->body.max = route_max_body(r);
	xfer_shrink(x);
	curl_easy_setopt(x->easy, CURLOPT_URL, url);
	curl_easy_setopt(x->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->body.max);
	d->st.requests++;
	if (httpc_add(d->http, x->easy) != 0) {
		x->busy = false;
		d->st.failures++;
	}
}

void dask_deliver(struct dask *d, struct event *ev)
{
	if (ev->type != EV_NONE)
		d->deliver(d->ctx, ev);
}

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
		dask_xfer_start(d, x, x->route, d->redirected);
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
	x->body.too_large |= rc == CURLE_FILESIZE_EXCEEDED; /* declared over the cap */
	if (x->body.too_large) {
		d->st.too_large++;
		code = HTTP_TOO_LARGE; /* a refused body: the next source may do */
	} else if (rc != CURLE_OK || code == 0) {
		d->st.failures++;
		char why[200];
		snprintf(why, sizeof(why), "%s: %s", dask_route_path(x->route),
			 curl_easy_strerror(rc));
		dask_status_set(d, SRC_LOST, why);
		dask_round_end(d, false);
		return;
	} else if (http_redirect(code) && sched_redirect(d, x)) {
		return;
	}
	d->st.bytes += x->body.buf.len;
	if (code != 200)
		d->st.failures++;
	dask_round_answer(d, code, x);
}

static void xfer_done(void *ctx, CURL *e, CURLcode rc, long code)
{
	struct dask *d = ctx;
	struct xfer *x = NULL;
	curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x);
	x->busy = false;
	strbuf_append(&x->body.buf, "", 0); /* NUL-terminated even when empty */
	if (x->route == R_WORKER)
		dask_round_worker(d, x, rc, code);
	else
		sched_done(d, rc, code);
	if (!x->busy)
		xfer_shrink(x);
}

static bool dask_setup(struct dask *d, char *err, size_t errsz)
{
	if (!httpc_headers(&d->headers, d->cfg.headers, d->cfg.n_headers))
		return false;
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
	d->wk_https = strncasecmp(cfg->url, "https://", 8) == 0;
	d->st.mode = "-";
	event_init(&d->ev);
	event_init(&d->ev_fine);
	event_init(&d->ev_span);
	event_init(&d->ev_status);
	event_init(&d->ev_task);
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
	strbuf_free(&x->body.buf);
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
	event_free(&d->ev_task);
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
		dask_round_begin(d); /* dask_round_end arms the next one */
	}
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
				  .n_headers = c->n_headers, .prefix_totals = !c->task_stream };
	struct dask *d = dask_open(&dc, env->deliver, env->ctx, err, errsz);
	if (!d)
		return NULL;
	d->datagram = env->datagram;
	d->dg.opened = clock_mono();
	/* the dashboard's root as polled: behind a gateway or a proxy the
	 * prefix says where the cluster is (/clusters/NAME), the host does not */
	char root[2048];
	bool joined = httpc_url_join(root, sizeof(root), c->scheduler_url, c->dashboard_prefix, "");
	fprintf(stderr, "roastop: polling the Dask scheduler at %s every %gs\n",
		joined ? root : c->scheduler_url, c->interval);
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

/* A run started: its collector has just installed the roastop route, so
 * poll now (a lost scheduler keeps its backoff). A run ended: one more
 * round, so the measurement holds the scheduler's last word; busy until
 * that round has ended. */
static void dask_on_event(void *src, const struct event *ev)
{
	struct dask *d = src;
	if (ev->type == EV_RUN_START) {
		d->state_retry_at = 0;
		if (!d->in_round && d->failures == 0)
			timer_set(d->tick_tfd, 0);
	} else if (ev->type == EV_RUN_END) {
		d->flush = FLUSH_WANTED;
		if (!d->in_round)
			timer_set(d->tick_tfd, 0);
	}
}

static bool dask_busy(const void *src)
{
	const struct dask *d = src;
	return d->flush == FLUSH_WANTED || d->flush == FLUSH_RUNNING;
}

static const char *dask_source_target(const void *d)
{
	return ((const struct dask *)d)->cfg.url;
}

static void dask_source_stats(const void *d, struct source_stats *out)
{
	const struct dask_stats *st = &((const struct dask *)d)->st;
	out->state_key = "mode";
	snprintf(out->state, sizeof(out->state), "%s", st->mode);
	source_count(out, NULL, "rounds", st->rounds);
	source_count(out, NULL, "overruns", st->overruns);
	source_count(out, NULL, "requests", st->requests);
	source_count(out, NULL, "failures", st->failures);
	source_count(out, NULL, "identity_500", st->http_500);
	source_count(out, NULL, "rejected", st->rejected);
	source_count(out, NULL, "out_of_range", st->out_of_range);
	source_count(out, NULL, "too_large", st->too_large);
	source_count(out, NULL, "bytes", st->bytes);
	source_count(out, NULL, "redirects", st->redirects);
	source_count(out, NULL, "redirects_refused", st->redirects_refused);
	source_count(out, NULL, "facts_refetched", st->facts_refetched);
	source_count(out, NULL, "tasks", st->tasks);
	source_count(out, NULL, "tasks_lost", st->tasks_lost);
	source_count(out, NULL, "tasks_capped", st->tasks_capped);
	source_count(out, NULL, "tasks_rejected", st->tasks_rejected);
	source_count(out, NULL, "task_answers", st->task_answers);
	source_count(out, NULL, "prefix_answers", st->prefix_answers);
	for (int e = DASK_OK + 1; e < DASK__COUNT; e++)
		source_count(out, "rejected_by", dask_error_name(e), st->rejected_by[e]);
	dask_datagrams_stats(d, out);
}

static const struct source_field dask_source_fields[] = {
	SOURCE_FIELD(NULL, "tasks", tasks),
	SOURCE_FIELD(NULL, "tasks_lost", tasks_lost),
	SOURCE_FIELD(NULL, "tasks_capped", tasks_capped),
	SOURCE_FIELD(NULL, "tasks_rejected", tasks_rejected),
	SOURCE_FIELD(NULL, "task_answers", task_answers),
	SOURCE_FIELD(NULL, "prefix_answers", prefix_answers),
	{ 0 },
};

static void dask_source_close(void *d)
{
	dask_close(d);
}

static const struct source_run_hooks dask_hooks = {
	.on_event = dask_on_event,
	.busy = dask_busy,
};

const struct source_ops dask_source = {
	.name = "scheduler",
	.wanted = dask_wanted,
	.open = dask_source_open,
	.pollfds = dask_source_pollfds,
	.dispatch = dask_source_dispatch,
	.stats = dask_source_stats,
	.role = SOURCE_TASK_ROUTE,
	.fields = dask_source_fields,
	.target = dask_source_target,
	.close = dask_source_close,
	.tasks = true, /* the route's task records (dask_tasks.c) */
	.run_hooks = &dask_hooks,
};
