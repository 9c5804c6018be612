/* The scheduler's and the workers' /metrics (Prometheus text, prom.c) ->
 * the figures the poller reads of them. */
#include "roastop/dask_json.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "roastop/arena.h"
#include "roastop/range.h"
#include "roastop/strutil.h"

/* Only the families read here are checked; a value out of range rejects
 * the whole body, and a sum is checked again before it is narrowed. */
struct sched_prom {
	bool has_workers, has_processing, out_of_range;
	double workers, processing;
};

static void sched_prom_sample(void *ctx, const struct prom_sample *s)
{
	struct sched_prom *p = ctx;
	if (strcmp(s->name, "dask_scheduler_workers") == 0) {
		p->has_workers = true; /* the states partition the scheduler's workers */
		p->out_of_range |= !range_ok(RANGE_WORKERS, s->value);
		p->workers += s->value;
	} else if (strcmp(s->name, "dask_scheduler_tasks") == 0) {
		const char *st = prom_label(s, "state");
		if (st && strcmp(st, "processing") == 0) {
			p->has_processing = true;
			p->out_of_range |= !range_ok(RANGE_TASKS, s->value);
			p->processing = s->value;
		}
	}
}

enum dask_error dask_parse_scheduler_prom(const char *body, size_t len, double t,
					  struct event *sample, struct prom_stats *st)
{
	event_reset(sample);
	sample->t = t;
	struct sched_prom p = { 0 };
	prom_parse(body, len, sched_prom_sample, &p, st);
	if (!p.has_workers)
		return DASK_BAD_SHAPE;
	/* states summing past the table's maximum: 8e9 once came out as 3.7e9 */
	if (p.out_of_range || !range_ok(RANGE_WORKERS, p.workers))
		return DASK_OUT_OF_RANGE;
	sample->type = EV_SAMPLE;
	struct ev_sample *s = &sample->u.sample;
	s->source = "prometheus";
	s->worker_count = (uint32_t)p.workers;
	s->tasks_processing = p.has_processing ? optnum_of(p.processing) : optnum_none();
	return DASK_OK;
}

struct worker_prom_acc {
	bool has_memory, out_of_range;
	optnum managed, unmanaged, spilled, threads, cpu_seconds;
};

/* The accumulator's slot for s, and the quantity it is (NULL: not read). */
static optnum *worker_prom_slot(struct worker_prom_acc *a, const struct prom_sample *s,
				enum range_qty *q)
{
	*q = RANGE_BYTES;
	if (strcmp(s->name, "dask_worker_memory_bytes") == 0) {
		const char *type = prom_label(s, "type");
		a->has_memory = true;
		if (!type)
			return NULL;
		if (strcmp(type, "managed") == 0)
			return &a->managed;
		if (strcmp(type, "unmanaged") == 0)
			return &a->unmanaged;
		return strcmp(type, "spilled") == 0 ? &a->spilled : NULL;
	}
	if (strcmp(s->name, "dask_worker_threads") == 0) {
		*q = RANGE_NTHREADS;
		return &a->threads;
	}
	*q = RANGE_CPU_SECONDS;
	return strcmp(s->name, "process_cpu_seconds_total") == 0 ? &a->cpu_seconds : NULL;
}

static void worker_prom_sample(void *ctx, const struct prom_sample *s)
{
	struct worker_prom_acc *a = ctx;
	enum range_qty q;
	optnum *slot = worker_prom_slot(a, s, &q);
	if (slot && !range_ok(q, s->value))
		a->out_of_range = true;
	else if (slot)
		*slot = optnum_of(s->value);
}

enum dask_error dask_parse_worker_prom(const char *body, size_t len, struct dask_worker_prom *out,
				       struct prom_stats *st)
{
	*out = (struct dask_worker_prom){ 0 };
	struct worker_prom_acc a = { 0 };
	prom_parse(body, len, worker_prom_sample, &a, st);
	if (!a.has_memory)
		return DASK_BAD_SHAPE;
	/* Dask's process memory is managed + unmanaged (spilled is on disk):
	 * with either part missing it is not measured, never a partial sum. */
	bool both = a.managed.valid && a.unmanaged.valid;
	double memory = both ? a.managed.value + a.unmanaged.value : 0;
	if (a.out_of_range || !range_ok(RANGE_BYTES, memory))
		return DASK_OUT_OF_RANGE;
	out->memory_bytes = both ? optnum_of(memory) : optnum_none();
	out->managed_bytes = a.managed;
	out->spilled_bytes = a.spilled;
	out->threads = a.threads;
	out->cpu_seconds = a.cpu_seconds;
	return DASK_OK;
}

/* ---- the per-prefix totals ----------------------------------------------- */

struct prefix_acc {
	struct dask_prefix_totals *out;
	bool bad;
};

/* The prefix's entry, new when it has none. NULL: left out (past the cap,
 * too long, not UTF-8), counted at its "memory" line: once a prefix. */
static struct dask_prefix_total *prefix_entry(struct prefix_acc *a, const char *name, bool done)
{
	struct dask_prefix_totals *o = a->out;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->p[i].name, name))
			return &o->p[i];
	if (o->n == EVENT_MAX_SECTIONS || strlen(name) >= DASK_PREFIX_LEN ||
	    !strutil_utf8_ok((const unsigned char *)name)) {
		o->left_out += done;
		return NULL;
	}
	struct dask_prefix_total *e = &o->p[o->n++];
	*e = (struct dask_prefix_total){ .done = optnum_none(), .compute = optnum_none() };
	memcpy(e->name, name, strlen(name) + 1);
	return e;
}

static void prefix_sample(void *ctx, const struct prom_sample *s)
{
	struct prefix_acc *a = ctx;
	bool done = !strcmp(s->name, DASK_PREFIX_FAMILY);
	if (!done && strcmp(s->name, DASK_COMPUTE_FAMILY))
		return;
	const char *name = prom_label(s, "task_prefix_name"), *state = prom_label(s, "state");
	if (!name || (done && (!state || strcmp(state, "memory"))))
		return;
	a->out->measured |= done;
	bool ok = done ? range_ok(RANGE_TASKS, s->value) && s->value == floor(s->value)
		       : range_ok(RANGE_CPU_SECONDS, s->value);
	a->bad |= !ok;
	struct dask_prefix_total *e = prefix_entry(a, name, done);
	if (e && ok)
		*(done ? &e->done : &e->compute) = optnum_of(s->value);
}

enum dask_error dask_parse_prefix_prom(const char *body, size_t len,
				       struct dask_prefix_totals *out, struct prom_stats *st)
{
	out->measured = false;
	out->n = 0;
	out->left_out = 0;
	struct prefix_acc a = { .out = out };
	prom_parse(body, len, prefix_sample, &a, st);
	/* a scheduler without a prefix yet serves the family's TYPE line alone */
	static const char type[] = "# TYPE " DASK_PREFIX_FAMILY " counter";
	out->measured |= len >= sizeof(type) && memmem(body, len, type, sizeof(type) - 1);
	if (a.bad)
		out->measured = false;
	return a.bad ? DASK_OUT_OF_RANGE : out->measured ? DASK_OK : DASK_BAD_SHAPE;
}

/* One list of the totals (done or compute) into the arena. */
static bool prefix_list(const struct dask_prefix_totals *pt, struct arena *mem, bool done,
			struct kv_num **out, size_t *n)
{
	*n = 0;
	*out = pt->n ? arena_alloc(mem, pt->n * sizeof(**out)) : NULL;
	if (pt->n && !*out)
		return false;
	for (size_t i = 0; i < pt->n; i++) {
		optnum v = done ? pt->p[i].done : pt->p[i].compute;
		if (!v.valid)
			continue;
		struct kv_num *kv = &(*out)[(*n)++];
		kv->key = arena_strdup(mem, pt->p[i].name);
		kv->value = v.value;
		if (!kv->key)
			return false;
	}
	return true;
}

bool dask_prefix_attach(const struct dask_prefix_totals *pt, struct event *ev)
{
	struct ev_sample *s = &ev->u.sample;
	if (!pt->measured)
		return true;
	if (prefix_list(pt, &ev->mem, true, &s->prefix_done, &s->n_prefix_done) &&
	    prefix_list(pt, &ev->mem, false, &s->prefix_compute, &s->n_prefix_compute)) {
		s->prefixes_left_out = optnum_of(pt->left_out);
		return true;
	}
	s->n_prefix_done = s->n_prefix_compute = 0;
	s->prefixes_left_out = optnum_none();
	return false;
}
