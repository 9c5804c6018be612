/* The findings of a run: the rules' table, each rule after the one it
 * depends on, then most severe first; the helpers the rules share; and the
 * silent run (docs/diagnosis.md). */
#include "diagnosispriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE FIND__COUNT

/* The rules: a row per finding id, its name (metrics.json's id, the
 * OpenMetrics label), its severity (the rule may raise or lower it: docs/
 * diagnosis.md), how it is evaluated, and the rule whose result it reads
 * (evaluated first; NONE: none). */
static const struct diag_rule {
	const char *name;
	enum finding_severity severity;
	diag_rule_fn *evaluate;
	enum finding_id depends_on;
} rules[FIND__COUNT] = {
	[FIND_SILENT_RUN] = { "silent_run", SEV_CRITICAL, diag_rule_silent_run, NONE },
	[FIND_SILENT_SCHEDULER] = { "silent_scheduler", SEV_WARNING, diag_rule_silent_scheduler,
				    NONE },
	[FIND_TAIL] = { "tail", SEV_WARNING, diag_rule_tail, NONE },
	[FIND_SLOW_FILE] = { "slow_file", SEV_WARNING, diag_rule_slow_file, FIND_BAD_WORKER },
	[FIND_SLOW_SITE] = { "slow_site", SEV_WARNING, diag_rule_slow_site, FIND_BAD_WORKER },
	[FIND_BAD_WORKER] = { "bad_worker", SEV_WARNING, diag_rule_bad_worker, NONE },
	[FIND_SMALL_CHUNKS] = { "small_chunks", SEV_WARNING, diag_rule_small_chunks, NONE },
	[FIND_MEMORY_GROWTH] = { "memory_growth", SEV_WARNING, diag_rule_memory_growth, NONE },
	[FIND_MEMORY_PRESSURE] = { "memory_pressure", SEV_WARNING, diag_rule_memory_pressure,
				   NONE },
	[FIND_IO_BOUND] = { "io_bound", SEV_WARNING, diag_rule_io_bound, NONE },
	[FIND_IDLE_CLUSTER] = { "idle_cluster", SEV_WARNING, diag_rule_idle_cluster, NONE },
	[FIND_FAILURES] = { "failures", SEV_WARNING, diag_rule_failures, NONE },
	[FIND_CPU_STARVED] = { "cpu_starved", SEV_WARNING, diag_rule_cpu_starved, NONE },
	/* reads every finding before it: the last row, evaluated last */
	[FIND_SLOWER_THAN_BEFORE] = { "slower_than_before", SEV_WARNING,
				      diag_rule_slower_than_before, NONE },
};

const char *diagnosis_id_name(enum finding_id id)
{
	return (unsigned)id < FIND__COUNT ? rules[id].name : "unknown";
}

const char *diagnosis_severity_name(enum finding_severity s)
{
	return s == SEV_CRITICAL ? "critical" : s == SEV_WARNING ? "warning" : "info";
}

struct finding *diag_new(struct findings *out, enum finding_id id, double since, double cost)
{
	if (out->n >= FIND__COUNT)
		return NULL;
	struct finding *f = &out->f[out->n++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->severity = rules[id].severity;
	f->since = since;
	f->cost = cost;
	return f;
}

bool diag_host_of(const char *url, char *host, size_t size)
{
	const char *p = strstr(url, "://");
	if (!p || strncmp(url, "file://", 7) == 0)
		return false;
	p += 3;
	const char *at = strchr(p, '@'), *end = p + strcspn(p, "/:");
	if (at && at < end) /* root://user@host//: the user is not the site */
		p = at + 1, end = p + strcspn(p, "/:");
	size_t len = (size_t)(end - p);
	if (len == 0 || len >= size)
		return false;
	memcpy(host, p, len);
	host[len] = '\0';
	return true;
}

const struct rawchunk *const *diag_chunks(struct diag_eval *e, size_t *n)
{
	if (!e->chunked && e->r->raw.n) {
		e->chunks = malloc(e->r->raw.n * sizeof(*e->chunks));
		if (e->chunks)
			rawchunks_ordered(&e->r->raw, e->chunks);
		e->n_chunks = e->chunks ? e->r->raw.n : 0;
	}
	e->chunked = true;
	*n = e->n_chunks;
	return e->chunks;
}

/* When the run's tasks began to execute: its start, or the first scheduler
 * sample after it that saw a task executing, whichever is later. */
static double silent_since(const struct run *r)
{
	double from = r->started ? r->t_run_start : r->begun ? r->t_begin : -INFINITY;
	for (size_t i = 0; i < r->tl_executing.len; i++) {
		const struct tl_point *p = &r->tl_executing.pts[i];
		if (p->max >= 1 && p->t >= from)
			return p->t;
	}
	return isfinite(from) ? from : NAN;
}

/* The scheduler runs tasks, no chunk has come (while a listener waits for
 * them and no key alert explains it), for DIAG_SILENT_AFTER seconds. */
#define DIAG_SILENT_AFTER 15.0
#define DIAG_SILENT_FRESH 10.0
void diag_rule_silent_run(struct diag_eval *e)
{
	const struct run *r = e->r;
	const struct diagnosis_context *ctx = e->ctx;
	optnum busy = e->m->tasks_executing_now;
	bool fresh = r->tl_executing.has_last && ctx->now - r->tl_executing.t_last < DIAG_SILENT_FRESH;
	if (!ctx->listening || ctx->key_alert || r->ended || r->n_chunks > 0 || !fresh ||
	    !busy.valid || busy.value < 1)
		return;
	double since = silent_since(r);
	if (!(ctx->now - since >= DIAG_SILENT_AFTER))
		return;
	struct finding *f = diag_new(e->out, FIND_SILENT_RUN, since, 0);
	char d[FMT_LEN];
	snprintf(f->title, sizeof(f->title), "%.0f task%s run, no chunk came", busy.value,
		 diag_s(busy.value));
	snprintf(f->evidence, sizeof(f->evidence),
		 "the scheduler shows %.0f task%s executing; 0 chunks received in %s", busy.value,
		 diag_s(busy.value), format_duration(d, optnum_of(ctx->now - since)));
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "decorate process() and export ROASTOP_ADDR/KEY to the workers (the emitter line)");
}

/* Chunks come, and the scheduler's samples never showed a task executing
 * nor any task done: roastop polls another cluster than the one running. */
#define DIAG_SILENT_SAMPLES 3
void diag_rule_silent_scheduler(struct diag_eval *e)
{
	const struct run *r = e->r;
	const struct timeline *ex = &r->tl_executing;
	bool done = e->m->tasks_done_now.valid && e->m->tasks_done_now.value > 0;
	if (r->n_chunks < DIAG_MIN_CHUNKS || ex->n_samples < DIAG_SILENT_SAMPLES || ex->max >= 1 ||
	    done)
		return;
	struct finding *f = diag_new(e->out, FIND_SILENT_SCHEDULER, NAN, 0);
	snprintf(f->title, sizeof(f->title), "chunks arrive, the scheduler shows no task");
	snprintf(f->evidence, sizeof(f->evidence),
		 "%llu chunks received; %llu scheduler samples, none with a task executing",
		 (unsigned long long)r->n_chunks, (unsigned long long)ex->n_samples);
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "point roastop at the scheduler that runs the analysis (--dask)");
}

static int cmp_finding(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (x->severity != y->severity)
		return (int)y->severity - (int)x->severity;
	if (x->cost != y->cost)
		return (y->cost > x->cost) - (y->cost < x->cost);
	return (int)x->id - (int)y->id;
}

/* Rule id, after the rule it depends on. */
static void diag_run(struct diag_eval *e, enum finding_id id, bool *done)
{
	if (done[id])
		return;
	done[id] = true;
	if (rules[id].depends_on != NONE)
		diag_run(e, rules[id].depends_on, done);
	rules[id].evaluate(e);
}

void diagnosis_evaluate(const struct run *r, const struct metrics *m,
			const struct diagnosis_context *ctx, struct findings *out)
{
	struct diag_eval e = { .r = r, .m = m, .ctx = ctx, .out = out };
	bool done[FIND__COUNT] = { false };
	out->n = 0;
	for (int id = 0; id < FIND__COUNT; id++)
		diag_run(&e, (enum finding_id)id, done);
	diag_places_free(&e);
	free(e.chunks);
	qsort(out->f, out->n, sizeof(out->f[0]), cmp_finding);
}

void diagnosis_of_record(const struct findings *all, struct findings *out)
{
	out->n = 0;
	for (size_t i = 0; i < all->n; i++)
		if (all->f[i].id != FIND_SILENT_RUN)
			out->f[out->n++] = all->f[i];
}

const struct finding *diagnosis_top(const struct findings *fs)
{
	return fs && fs->n ? &fs->f[0] : NULL;
}
