/* Hostile scheduler bodies through every Dask decoder: never a crash, a
 * body is taken whole or not at all (no event left half-filled), and every
 * event taken live replays from its recorded line (one range table). An
 * input with a NUL byte is also two route bodies: the first's facts kept,
 * the second read against them (version 3's body without facts). Each
 * input is also a tasks.json and a datagrams.json answer (dask_parse_tasks,
 * dask_parse_datagrams: one cursor reading). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/dask_json.h"
#include "roastop/event_json.h"
#include "roastop/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct event sample, fine, span, back, task;
static struct dask_facts facts;
static struct strbuf line;
static bool ready;

static void check_replays(const struct event *ev)
{
	if (ev->type == EV_NONE)
		return;
	strbuf_reset(&line);
	if (event_encode_json(ev, &line) != 0 ||
	    event_decode_json(line.data, line.len, &back) != DEC_OK)
		abort();
}

static void endpoint(void *ctx, const char *worker, const char *host, int port)
{
	(void)ctx;
	if (!worker || !host || port < 1 || port > 65535)
		abort();
}

static void check_sample(const struct event *ev)
{
	const struct ev_sample *s = &ev->u.sample;
	if (s->n_workers > EVENT_MAX_LIST || (s->n_workers && !s->workers))
		abort();
	for (size_t i = 0; i < s->n_workers; i++)
		if (!s->workers[i].id)
			abort();
}

/* A task record taken is a whole task event that replays from its line. */
static void task_taken(void *ctx, const struct event *ev)
{
	(void)ctx;
	if (ev->type != EV_TASK || !ev->u.task.key || !isfinite(ev->t))
		abort();
	check_replays(ev);
}

static void check_tasks(const char *text, size_t size)
{
	struct dask_tasks_answer a;
	bool ok = dask_parse_tasks(text, size, 1e9, &task, task_taken, NULL, &a);
	if (!ok && (a.tasks || a.at.since[0] || a.at.more))
		abort();
	if (ok && (!a.at.since[0] || strlen(a.at.since) >= sizeof(a.at.since)))
		abort();
}

/* A datagrams.json payload handed is a port in range with its text, or
 * neither. */
static void payload_taken(void *ctx, int port, const char *text)
{
	size_t *n = ctx;
	if ((text != NULL) != (port >= 1 && port <= 65535))
		abort();
	++*n;
}

static void check_datagrams(const char *text, size_t size)
{
	struct dask_cursor at;
	size_t n = 0;
	bool ok = dask_parse_datagrams(text, size, &at, payload_taken, &n);
	if (!ok && (n || at.since[0] || at.more))
		abort();
	if (ok && (!at.since[0] || strlen(at.since) >= sizeof(at.since)))
		abort();
}

static void check_state(enum dask_error e)
{
	if (e != DASK_OK && (sample.type || fine.type || span.type))
		abort();
	if (e == DASK_OK) {
		check_sample(&sample);
		check_replays(&sample);
		check_replays(&fine);
		check_replays(&span);
	}
}

static void check_kept(const char *text, size_t size)
{
	const char *nul = memchr(text, 0, size);
	if (!nul)
		return;
	size_t first = (size_t)(nul - text);
	char err[160];
	dask_facts_drop(&facts); /* each input on its own */
	check_state(dask_parse_state_facts(text, first, 1, &sample, &fine, &span, &facts, err,
					   sizeof(err)));
	if (facts.n > EVENT_MAX_LIST || (facts.n && (!facts.rows || !facts.token)))
		abort();
	check_state(dask_parse_state_facts(nul + 1, size - first - 1, 1, &sample, &fine, &span,
					   &facts, err, sizeof(err)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		event_init(&sample);
		event_init(&fine);
		event_init(&span);
		event_init(&back);
		event_init(&task);
		strbuf_init(&line);
		dask_facts_init(&facts);
		ready = true;
	}
	const char *text = (const char *)data;
	char err[160];
	check_state(dask_parse_state(text, size, 1, &sample, &fine, &span, err, sizeof(err)));
	check_kept(text, size);
	check_tasks(text, size);
	check_datagrams(text, size);
	enum dask_error e = dask_parse_identity(text, size, 1, &sample, endpoint, NULL, err, sizeof(err));
	if (e != DASK_OK && sample.type)
		abort();
	if (e == DASK_OK) {
		check_sample(&sample);
		check_replays(&sample);
	}
	e = dask_parse_counts(text, size, 1, &sample, err, sizeof(err));
	if (e != DASK_OK && sample.type)
		abort();
	if (e == DASK_OK) {
		check_sample(&sample);
		check_replays(&sample);
	}
	struct prom_stats st;
	if (dask_parse_scheduler_prom(text, size, 1, &sample, &st) == DASK_OK) {
		/* per-prefix totals the decoder took are ones a recording takes */
		static struct dask_prefix_totals pt;
		if (dask_parse_prefix_prom(text, size, &pt, &st) == DASK_OK &&
		    dask_prefix_attach(&pt, &sample) && !event_sample_tasks_ok(&sample.u.sample))
			abort();
		check_replays(&sample);
	}
	struct dask_worker_prom w;
	dask_parse_worker_prom(text, size, &w, &st);
	int identity, prom, counts; /* each -1 (no usable sitemap), 0 or 1 */
	dask_parse_sitemap(text, size, &identity, &prom, &counts);
	if (identity < -1 || identity > 1 || prom < -1 || prom > 1 || counts < -1 || counts > 1)
		abort();
	return 0;
}
