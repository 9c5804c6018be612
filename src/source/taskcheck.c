#include "roastop/taskcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/httpc.h"
#include "roastop/strbuf.h"

struct tc_sum {
	bool seen, bad;
	double total;
};

static void tc_sample(void *ctx, const struct prom_sample *s)
{
	struct tc_sum *a = ctx;
	if (strcmp(s->name, TASKCHECK_FAMILY) != 0)
		return;
	const char *state = prom_label(s, "state");
	if (!state || strcmp(state, "memory") != 0)
		return;
	a->seen = true;
	if (!isfinite(s->value) || s->value < 0 || s->value > 1e15)
		a->bad = true;
	else
		a->total += s->value;
}

bool taskcheck_total(const char *body, size_t len, double *total, struct prom_stats *st)
{
	struct tc_sum a = { 0 };
	prom_parse(body, len, tc_sample, &a, st);
	/* a scheduler without a prefix yet serves the family's TYPE line alone:
	 * 0 tasks, not "no such family" */
	static const char type[] = "# TYPE " TASKCHECK_FAMILY " counter";
	a.seen |= len >= sizeof(type) && memmem(body, len, type, sizeof(type) - 1);
	if (!a.seen || a.bad || a.total > 1e15)
		return false;
	*total = a.total;
	return true;
}

void taskcheck_reset(struct taskcheck *c)
{
	memset(&c->conn, 0, sizeof(c->conn));
}

uint64_t taskcheck_missed(const struct taskcheck *c)
{
	return c->missed_before + c->missed;
}

/* The window's shortfall at this check (0 when none); *rebased when this
 * check took its base (the first, or the count fell: a new scheduler). */
static double tc_shortfall(struct taskcheck_window *w, double total, uint64_t stream,
			   bool *rebased)
{
	*rebased = !w->based || total < w->prev_total || stream < w->base_stream;
	if (*rebased) {
		*w = (struct taskcheck_window){ .based = true, .base_total = total,
						.prev_total = total, .base_stream = stream };
		return 0;
	}
	double due = w->prev_total - w->base_total; /* counted by the check before */
	double brought = (double)(stream - w->base_stream);
	w->prev_total = total;
	return brought < due ? due - brought : 0;
}

uint64_t taskcheck_observe(struct taskcheck *c, double total, uint64_t stream)
{
	bool rebased;
	double s = tc_shortfall(&c->session, total, stream, &rebased);
	if (rebased) {
		c->missed_before += c->missed;
		c->missed = 0;
	}
	if (s > (double)c->missed)
		c->missed = (uint64_t)s;
	double d = tc_shortfall(&c->conn, total, stream, &rebased);
	if (d <= 0)
		return 0;
	taskcheck_reset(c);
	return (uint64_t)d;
}

/* ---- the fetch ----------------------------------------------------------- */

struct taskcheck_fetch {
	struct httpc *http;
	CURL *easy;
	struct curl_slist *headers;
	struct httpc_body body;
	bool busy, done, ok;
	double total;
};

static void tc_done(void *ctx, CURL *easy, CURLcode result, long code)
{
	(void)easy;
	struct taskcheck_fetch *f = ctx;
	struct prom_stats st = { 0 };
	f->busy = false;
	f->done = true;
	f->ok = result == CURLE_OK && code == 200 && f->body.buf.len > 0 &&
		taskcheck_total(f->body.buf.data, f->body.buf.len, &f->total, &st);
}

static bool tc_setup(struct taskcheck_fetch *f, const struct app_config *cfg)
{
	CURL *e = f->easy;
	char url[2048];
	if (!httpc_headers(&f->headers, cfg->headers, cfg->n_headers))
		return false;
	httpc_easy_defaults(e, cfg->interval, cfg->cacert, cfg->insecure, &f->body);
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)TASKCHECK_MAX_BODY);
	if (f->headers)
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, f->headers);
	return httpc_url_join(url, sizeof(url), cfg->scheduler_url, cfg->dashboard_prefix,
			     "metrics") &&
	       curl_easy_setopt(e, CURLOPT_URL, url) == CURLE_OK;
}

struct taskcheck_fetch *taskcheck_fetch_open(const struct app_config *cfg)
{
	struct taskcheck_fetch *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	strbuf_init(&f->body.buf);
	f->body.max = TASKCHECK_MAX_BODY;
	f->easy = curl_easy_init();
	f->http = f->easy ? httpc_open(tc_done, f) : NULL;
	if (!f->http || !tc_setup(f, cfg)) {
		taskcheck_fetch_close(f);
		return NULL;
	}
	return f;
}

void taskcheck_fetch_close(struct taskcheck_fetch *f)
{
	if (!f)
		return;
	if (f->http)
		httpc_close(f->http);
	if (f->easy)
		curl_easy_cleanup(f->easy);
	curl_slist_free_all(f->headers);
	strbuf_free(&f->body.buf);
	free(f);
}

void taskcheck_fetch_start(struct taskcheck_fetch *f)
{
	if (f->busy)
		return;
	strbuf_reset(&f->body.buf);
	f->busy = httpc_add(f->http, f->easy) == 0;
	f->done = !f->busy;
	f->ok = false;
}

size_t taskcheck_fetch_pollfds(const struct taskcheck_fetch *f, struct pollfd *out, size_t max)
{
	return httpc_pollfds(f->http, out, max);
}

bool taskcheck_fetch_dispatch(struct taskcheck_fetch *f, const struct pollfd *pfd, size_t n,
			      double *total, bool *failed)
{
	if (n)
		httpc_dispatch(f->http, pfd, n);
	*failed = f->done && !f->ok;
	bool got = f->done && f->ok;
	if (got)
		*total = f->total;
	f->done = false;
	return got;
}
