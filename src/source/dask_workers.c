/* The poller's per-worker fallback: while identity.json answers 500, each
 * worker's /metrics, as the last good identity.json named them, make the
 * round's sample. */
#include "daskpriv.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/dask_json.h"
#include "roastop/range.h"
#include "roastop/strutil.h"

static const char *ep_find(const struct dask *d, const char *id)
{
	for (size_t i = 0; i < d->n_ep; i++)
		if (strcmp(d->ep[i].id, id) == 0)
			return d->ep[i].url;
	return "";
}

/* Keeps what a good identity said, for rounds in which it answers 500. */
void dask_wk_cache(struct dask *d, const struct ev_sample *s)
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

/* A worker's /metrics (kept as identity.json named it, http://host:port)
 * in the scheme the workers' dashboards are taken to answer in. */
static void worker_url(const struct dask *d, const char *url, char *buf, size_t size)
{
	if (d->wk_https && strncmp(url, "http://", 7) == 0)
		snprintf(buf, size, "https://%s", url + 7);
	else
		strutil_copy(buf, size, url);
}

/* Did this request fail as one in the wrong scheme does? TLS to a plain
 * server: connected, no handshake (a timeout); plain HTTP to a TLS server:
 * reset or nothing. A refused connection says nothing of the scheme. */
static bool scheme_mismatch(const struct xfer *x, CURLcode rc)
{
	if (!x->https)
		return rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING ||
		       rc == CURLE_WEIRD_SERVER_REPLY;
	if (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR)
		return true;
	/* a local port: the TCP connection was made (curl leaves the connect
	 * time at 0 when the handshake times out) */
	long local_port = 0;
	curl_off_t handshake = 0;
	curl_easy_getinfo(x->easy, CURLINFO_LOCAL_PORT, &local_port);
	curl_easy_getinfo(x->easy, CURLINFO_APPCONNECT_TIME_T, &handshake);
	return rc == CURLE_OPERATION_TIMEDOUT && local_port > 0 && handshake == 0;
}

bool dask_workers_next(struct dask *d)
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
		char url[WK_URL + 1];
		worker_url(d, d->wk[x->worker].url, url, sizeof(url));
		x->https = d->wk_https;
		dask_xfer_start(d, x, R_WORKER, url);
		if (x->busy)
			d->wk_pending++;
	}
	return d->wk_pending == 0 && d->wk_next >= d->n_wk;
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

void dask_worker_done(struct dask *d, struct xfer *x, CURLcode rc, long code)
{
	d->wk_pending--;
	if (rc == CURLE_OK) /* an HTTP answer: this is the dashboards' scheme */
		d->wk_scheme_known = true;
	else if (!d->wk_scheme_known && x->https == d->wk_https && scheme_mismatch(x, rc))
		d->wk_https = !d->wk_https; /* once for the requests of one scheme */
	struct wk *w = &d->wk[x->worker];
	struct prom_stats ps = { 0 };
	d->st.bytes += x->body.buf.len;
	enum dask_error e = rc != CURLE_OK || code != 200
		? DASK_BAD_SHAPE : dask_parse_worker_prom(x->body.buf.data, x->body.buf.len, &w->now, &ps);
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
}

/* Where this round's fallback numbers came from, for the status line. */
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

/* A sample from the scheduler's counts (/metrics, else counts.json) and
 * what each known worker's /metrics said. */
void dask_fallback_finish(struct dask *d)
{
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
		dask_status_set(d, SRC_DEGRADED, why);
		return;
	}
	s->worker_count = count.valid ? (uint32_t)count.value : (uint32_t)s->n_workers;
	if (s->n_workers != s->worker_count)
		s->n_workers = 0; /* a partial list would read as departures */
	fallback_why(d, s, why, sizeof(why));
	dask_status_set(d, SRC_DEGRADED, why);
	d->st.mode = s->source;
	dask_totals_attach(d);
	dask_deliver(d, &d->ev);
}
