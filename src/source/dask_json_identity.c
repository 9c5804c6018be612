/* Dask's /json/identity.json -> a sample with its worker rows, and the
 * workers' /metrics endpoints; the poller's fallback without the route. */
#include "roastop/dask_json.h"
#include "dask_jsonpriv.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <string.h>

#include "roastop/arena.h"
#include "roastop/range.h"
#include "roastop/strutil.h"

/* metrics.spilled_bytes is {"memory": m, "disk": d}: what went to disk. */
static optnum identity_spilled(struct dec *d, const cJSON *metrics)
{
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(metrics, "spilled_bytes");
	if (cJSON_IsObject(sp))
		return dask_dec_num(d, sp, "disk", RANGE_BYTES);
	return dask_dec_num(d, metrics, "spilled_bytes", RANGE_BYTES);
}

static void identity_metrics(struct dec *d, const cJSON *m, struct worker_sample *w)
{
	if (!m || cJSON_IsNull(m))
		return;
	if (!cJSON_IsObject(m)) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "workers{}.metrics: not an object");
		return;
	}
	w->memory_bytes = dask_dec_num(d, m, "memory", RANGE_BYTES);
	w->cpu_percent = dask_dec_num(d, m, "cpu", RANGE_CPU_PERCENT);
	w->managed_bytes = dask_dec_num(d, m, "managed_bytes", RANGE_BYTES);
	w->spilled_bytes = identity_spilled(d, m);
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(m, "task_counts");
	if (cJSON_IsObject(tc)) { /* an empty object means nothing is executing */
		optnum ex = dask_dec_num(d, tc, "executing", RANGE_TASKS);
		w->executing = ex.valid ? ex : optnum_of(0);
	}
}

static void identity_endpoint(const cJSON *o, const struct worker_sample *w,
			      dask_endpoint_fn fn, void *ctx)
{
	const cJSON *svc = cJSON_GetObjectItemCaseSensitive(o, "services");
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(svc, "dashboard");
	/* written so that a NaN fails it too: the cast below needs the range */
	if (!fn || !w->host || !cJSON_IsNumber(port) ||
	    !(port->valuedouble >= 1 && port->valuedouble <= 65535))
		return;
	fn(ctx, w->id, w->host, (int)port->valuedouble);
}

static void identity_worker(struct dec *d, const cJSON *o, struct worker_sample *w)
{
	if (!cJSON_IsObject(o)) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "workers{}: not an object");
		return;
	}
	if (!o->string || strlen(o->string) > EVENT_MAX_STRING ||
	    !strutil_utf8_ok((const unsigned char *)o->string)) {
		dask_dec_fail(d, DASK_BAD_FIELD, "workers{}: bad address key");
		return;
	}
	w->id = arena_strdup(d->mem, o->string);
	if (!w->id)
		dask_dec_fail(d, DASK_NO_MEMORY, "out of memory");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
	/* names may be ints */
	w->name = cJSON_IsNumber(name) ? NULL : dask_dec_strval(d, name, "name");
	w->host = dask_dec_str(d, o, "host");
	w->status = dask_dec_str(d, o, "status");
	w->nthreads = dask_dec_num(d, o, "nthreads", RANGE_NTHREADS);
	w->memory_limit = dask_dec_num(d, o, "memory_limit", RANGE_BYTES);
	identity_metrics(d, cJSON_GetObjectItemCaseSensitive(o, "metrics"), w);
}

static void identity_workers(struct dec *d, const cJSON *obj, struct ev_sample *s,
			     dask_endpoint_fn fn, void *ctx)
{
	s->workers = dask_dec_list(d, obj, true, "workers", sizeof(*s->workers));
	const cJSON *o;
	cJSON_ArrayForEach(o, obj)
	{
		if (d->error != DASK_OK)
			return;
		struct worker_sample *w = &s->workers[s->n_workers++];
		identity_worker(d, o, w);
		if (d->error == DASK_OK)
			identity_endpoint(o, w, fn, ctx);
	}
}

struct endpoint_sink {
	dask_endpoint_fn fn;
	void *ctx;
};

static void identity_read(struct dec *d, const cJSON *root, struct event *const evs[],
			  void *ctx)
{
	const struct endpoint_sink *sink = ctx;
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
	if (!cJSON_IsString(type) || strcmp(type->valuestring, "Scheduler") != 0) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "type: not \"Scheduler\"");
		return;
	}
	struct ev_sample *s = &evs[0]->u.sample;
	evs[0]->type = EV_SAMPLE;
	s->source = "identity";
	s->scheduler_id = dask_dec_str(d, root, "id");
	s->total_threads = dask_dec_num(d, root, "total_threads", RANGE_TOTAL_THREADS);
	identity_workers(d, cJSON_GetObjectItemCaseSensitive(root, "workers"), s, sink->fn,
			 sink->ctx);
	s->worker_count = (uint32_t)s->n_workers;
}

enum dask_error dask_parse_identity(const char *body, size_t len, double t, struct event *sample,
				    dask_endpoint_fn fn, void *ctx, char *err, size_t errsz)
{
	struct event *const evs[] = { sample };
	struct endpoint_sink sink = { fn, ctx };
	return dask_dec_document(body, len, t, evs, 1, identity_read, &sink, err, errsz);
}
