/* The scheduler poller's answers, route by route, each saying how it did
 * (the round's table picks the next route: dask_round.c). */
#include "daskpriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/dask_json.h"
#include "roastop/strutil.h"

#define STATE_RETRY 5.0 /* seconds before asking again for an absent route */

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
	const char *name = x->route == R_STATE ? "roastop route" : dask_route_path(x->route);
	if (x->body.too_large)
		snprintf(buf, size, "%s: response over the size limit (%zu MiB)", name,
			 x->body.max >> 20);
	else if (d->redirect_why[0])
		snprintf(buf, size, "%s: %.170s", name, d->redirect_why);
	else if (code == 500 && x->route == R_IDENTITY)
		snprintf(buf, size, "identity.json 500 while tasks run (dask#8370)");
	else if (x->route != R_STATE || code != 404) /* 404: not installed yet */
		snprintf(buf, size, "%s HTTP %ld", name, code);
}

enum answer dask_on_state(struct dask *d, long code, const struct xfer *x)
{
	char err[160];
	if (code == 200) {
		enum dask_error e = dask_parse_state_facts(x->body.buf.data, x->body.buf.len, d->now,
							   &d->ev, &d->ev_fine, &d->ev_span,
							   &d->facts, err, sizeof(err));
		if (e == DASK_STALE_FACTS && d->facts.token) {
			/* another token, scheduler or worker count: never old facts
			 * against new numbers; ask again for the whole body */
			dask_facts_drop(&d->facts);
			d->st.facts_refetched++;
			return ANS_AGAIN;
		}
		if (e == DASK_OK) {
			bool tasks = dask_tasks_offered(x->body.buf.data, x->body.buf.len);
			/* the poller's first answer: told before its status, the
			 * stream is never opened; one already open is closed at the
			 * route's first answer (dask_on_tasks), the cursor then */
			if (tasks && !d->status_sent)
				dask_tasks_tell(d, true);
			dask_status_set(d, SRC_CONNECTED,
					"roastop route: workers and fine metrics");
			dask_deliver(d, &d->ev);
			dask_deliver(d, &d->ev_fine);
			dask_deliver(d, &d->ev_span);
			d->st.mode = "state";
			return tasks ? ANS_MORE : ANS_DID;
		}
		reject_count(d, e);
		snprintf(d->state_why, sizeof(d->state_why), "roastop route rejected (%s: %.120s)",
			 dask_error_name(e), err);
	} else {
		route_why(d, x, code, d->state_why, sizeof(d->state_why));
	}
	dask_tasks_gone(d);
	d->state_retry_at = d->now + STATE_RETRY; /* absent until the collector installs it */
	return ANS_FAILED;
}

void dask_totals_attach(struct dask *d)
{
	if (!d->totals_read || !d->totals.measured)
		return;
	if (dask_prefix_attach(&d->totals, &d->ev))
		d->st.prefix_answers++;
	else
		reject_count(d, DASK_NO_MEMORY);
}

/* identity.json did: connected, unless the route answered and was refused. */
static void identity_status(struct dask *d)
{
	char why[sizeof(d->reason)];
	if (!d->state_why[0]) {
		dask_status_set(d, SRC_CONNECTED,
				"identity.json (no roastop route: no fine metrics)");
		return;
	}
	snprintf(why, sizeof(why), "identity.json (no fine metrics); %s", d->state_why);
	dask_status_set(d, SRC_DEGRADED, why);
}

enum answer dask_on_identity(struct dask *d, long code, const struct xfer *x)
{
	char err[160];
	if (code == 200) {
		d->n_ep = 0;
		enum dask_error e = dask_parse_identity(x->body.buf.data, x->body.buf.len, d->now, &d->ev,
							ep_add, d, err, sizeof(err));
		if (e == DASK_OK) {
			identity_status(d);
			dask_wk_cache(d, &d->ev.u.sample);
			dask_totals_attach(d);
			dask_deliver(d, &d->ev);
			d->st.mode = "identity";
			return ANS_DID;
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
	return ANS_FAILED;
}

enum answer dask_on_prom(struct dask *d, long code, const struct xfer *x)
{
	struct prom_stats ps = { 0 };
	d->prom_code = code;
	enum dask_error e = code != 200 ? DASK_BAD_SHAPE
		: dask_parse_scheduler_prom(x->body.buf.data, x->body.buf.len, d->now, &d->ev, &ps);
	if (e == DASK_OK) {
		d->prom_workers = optnum_of(d->ev.u.sample.worker_count);
		d->prom_tasks = d->ev.u.sample.tasks_processing;
	} else if (code == 200 && ps.samples > 0) {
		reject_count(d, e); /* no sample at all: a Dask without prometheus_client */
	}
	if (d->cfg.prefix_totals && code == 200 && !d->totals_read) {
		struct prom_stats again = { 0 };
		enum dask_error te = dask_parse_prefix_prom(x->body.buf.data, x->body.buf.len, &d->totals,
							    &again);
		if (te == DASK_OUT_OF_RANGE)
			reject_count(d, te);
	}
	d->totals_read = true;
	return e == DASK_OK ? ANS_DID : ANS_FAILED;
}

enum answer dask_on_counts(struct dask *d, long code, const struct xfer *x)
{
	char err[160];
	if (code == 200) {
		enum dask_error e = dask_parse_counts(x->body.buf.data, x->body.buf.len, d->now, &d->ev,
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
	return ANS_DID;
}

enum answer dask_on_sitemap(struct dask *d, long code, const struct xfer *x)
{
	d->want_sitemap = false;
	int id = -1, prom = -1, counts = -1;
	if (code == 200)
		dask_parse_sitemap(x->body.buf.data, x->body.buf.len, &id, &prom, &counts);
	d->has_identity = id != 0; /* unknown: try it */
	d->has_prom = prom != 0;
	d->has_counts = counts != 0;
	d->has_state = true; /* installed at run time, so never in an old sitemap */
	return ANS_DID;
}
