/* The scheduler poller's round as a table (docs/scheduler.md): a row per
 * route with its path, its query, the handler of its answer, and the route
 * that comes next from what the handler said. The handlers read answers
 * and never pick a route. */
#include "daskpriv.h"

#include <stdio.h>
#include <string.h>

#include "roastop/clock.h"
#include "roastop/timer.h"

/* ---- queries ------------------------------------------------------------ */

static bool url_query(char *url, size_t size, const char *key, const char *value)
{
	size_t n = strlen(url);
	int w = snprintf(url + n, size - n, "?%s=%s", key, value);
	return w >= 0 && (size_t)w < size - n;
}

/* The token of the facts kept (a URL-safe string, dask_json.h), so the
 * body leaves them out while they hold. */
static bool query_state(const struct dask *d, char *url, size_t size)
{
	return !d->facts.token || url_query(url, size, "have", d->facts.token);
}

/* ?since=<cursor> (URL-safe: hex, '-', '.', digits) after the first answer. */
static bool query_tasks(const struct dask *d, char *url, size_t size)
{
	return !d->tasks_at.since[0] || url_query(url, size, "since", d->tasks_at.since);
}

/* As tasks.json's; before the first answer, ?within= the seconds since
 * roastop opened: what workers logged before its first poll counts, an
 * earlier session's does not (durations on either side: no clock is
 * compared with another host's). */
static bool query_datagrams(const struct dask *d, char *url, size_t size)
{
	char within[32];
	if (d->dg.at.since[0])
		return url_query(url, size, "since", d->dg.at.since);
	snprintf(within, sizeof(within), "%.3f", clock_mono() - d->dg.opened);
	return url_query(url, size, "within", within);
}

/* ---- what comes next ---------------------------------------------------- */

/* No route this round: /metrics first when the per-prefix totals are
 * wanted, else identity.json (or /metrics without it). */
static enum route without_route(const struct dask *d)
{
	bool totals = d->cfg.prefix_totals && d->has_prom;
	return totals || !d->has_identity ? R_PROM : R_IDENTITY;
}

/* Without a sample from /metrics (no prometheus_client on the scheduler:
 * 200 and no samples) the counts come from counts.json, which every Dask
 * serves; then each known worker's /metrics. */
static enum route counts_or_workers(const struct dask *d)
{
	return !d->prom_workers.valid && d->has_counts ? R_COUNTS : R_WORKER;
}

static enum route after_state(const struct dask *d, enum answer a)
{
	switch (a) {
	case ANS_DID: return R_END;
	case ANS_MORE: return R_TASKS;
	case ANS_AGAIN: return R_STATE;
	default: return without_route(d);
	}
}

/* datagrams.json when a source takes datagrams and the route has not
 * lately said it has none. */
static enum route after_tasks(const struct dask *d, enum answer a)
{
	(void)a;
	return d->datagram && d->now >= d->dg.retry_at ? R_DATAGRAMS : R_END;
}

static enum route after_identity(const struct dask *d, enum answer a)
{
	if (a == ANS_DID)
		return R_END;
	return d->has_prom && !d->totals_read ? R_PROM : counts_or_workers(d);
}

/* identity.json after /metrics, which was read first for its totals. */
static enum route after_prom(const struct dask *d, enum answer a)
{
	(void)a;
	return !d->fallback && d->has_identity ? R_IDENTITY : counts_or_workers(d);
}

/* ---- the table ---------------------------------------------------------- */

/* What comes next: pick's choice, else then (after the sitemap the round
 * begins again as it should have begun). */
static const struct round_row {
	const char *path; /* after the dashboard's prefix */
	bool (*query)(const struct dask *d, char *url, size_t size); /* NULL: none */
	enum answer (*on)(struct dask *d, long code, const struct xfer *x);
	enum route (*pick)(const struct dask *d, enum answer a); /* NULL: then */
	enum route then;
} ROUND[] = {
	[R_SITEMAP] = { "sitemap.json", NULL, dask_on_sitemap, NULL, R_BEGIN },
	[R_STATE] = { "roastop/v1/state.json", query_state, dask_on_state, after_state, 0 },
	[R_TASKS] = { "roastop/v1/tasks.json", query_tasks, dask_on_tasks, after_tasks, 0 },
	[R_DATAGRAMS] = { "roastop/v1/datagrams.json", query_datagrams, dask_on_datagrams, NULL,
			  R_END },
	[R_IDENTITY] = { "json/identity.json", NULL, dask_on_identity, after_identity, 0 },
	[R_PROM] = { "metrics", NULL, dask_on_prom, after_prom, 0 },
	[R_COUNTS] = { "json/counts.json", NULL, dask_on_counts, NULL, R_WORKER },
};

const char *dask_route_path(enum route r)
{
	return r < R_WORKER ? ROUND[r].path : "metrics";
}

/* ---- the walk ----------------------------------------------------------- */

static void sched_start(struct dask *d, enum route r)
{
	char url[URL_MAX];
	const struct round_row *row = &ROUND[r];
	if (!httpc_url_join(url, sizeof(url), d->cfg.url, d->cfg.prefix, row->path) ||
	    (row->query && !row->query(d, url, sizeof(url)))) {
		dask_status_set(d, SRC_LOST, "scheduler URL too long");
		dask_round_end(d, false);
		return;
	}
	d->sched.hops = 0;
	d->redirect_why[0] = '\0';
	if (r == R_STATE)
		d->state_why[0] = '\0'; /* kept until the route is asked again */
	dask_xfer_start(d, &d->sched, r, url);
	if (!d->sched.busy) {
		dask_status_set(d, SRC_LOST, "cannot start an HTTP transfer");
		dask_round_end(d, false);
	}
}

/* The per-worker fallback: once every worker has answered, the round's
 * sample from what they said. */
static void workers_step(struct dask *d)
{
	if (dask_workers_next(d) && d->in_round) {
		dask_fallback_finish(d);
		dask_round_end(d, true);
	}
}

static void round_go(struct dask *d, enum route r)
{
	switch (r) {
	case R_END: dask_round_end(d, true); break;
	case R_BEGIN:
		d->in_round = false;
		dask_round_begin(d);
		break;
	case R_WORKER:
		d->wk_next = 0;
		d->wk_pending = 0;
		for (size_t i = 0; i < d->n_wk; i++)
			d->wk[i].fresh = false;
		workers_step(d);
		break;
	default: sched_start(d, r);
	}
}

void dask_round_answer(struct dask *d, long code, const struct xfer *x)
{
	const struct round_row *row = &ROUND[x->route];
	enum answer a = row->on(d, code, x);
	round_go(d, row->pick ? row->pick(d, a) : row->then);
}

void dask_round_worker(struct dask *d, struct xfer *x, CURLcode rc, long code)
{
	dask_worker_done(d, x, rc, code);
	workers_step(d);
}

void dask_round_begin(struct dask *d)
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
	d->totals_read = false;
	snprintf(d->identity_why, sizeof(d->identity_why), "identity.json not offered");
	d->redirected[0] = '\0';
	if (d->want_sitemap)
		round_go(d, R_SITEMAP);
	else
		round_go(d, d->has_state && d->now >= d->state_retry_at ? R_STATE : without_route(d));
}

void dask_round_end(struct dask *d, bool reached)
{
	d->in_round = false;
	if (d->flush == FLUSH_RUNNING)
		d->flush = FLUSH_DONE;
	d->failures = reached ? 0 : d->failures + 1;
	double took = clock_mono() - d->round_t0;
	double next = reached ? d->cfg.interval - took : timer_backoff(d->failures, DASK_BACKOFF_MAX);
	if (reached && next < 0) {
		d->st.overruns++; /* slower than the interval: the next round starts now */
		next = 0;
	}
	if (d->flush == FLUSH_WANTED || (reached && (d->tasks_at.more || d->dg.at.more)))
		next = 0; /* asked for during this round, or records left: now */
	if (!reached) {
		d->want_sitemap = true; /* it may come back as another Dask */
		d->st.mode = "lost";
	}
	timer_set(d->tick_tfd, next);
}
