/* The findings of a run: each rule in turn, then most severe first; the
 * helpers the rules share; and the silent run (docs/diagnosis.md). */
#include "diagnosispriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const id_names[FIND__COUNT] = {
	"silent_run",  "silent_scheduler", "tail",	    "slow_file",      "slow_site",
	"bad_worker",  "small_chunks",	   "memory_growth", "memory_pressure", "io_bound",
	"idle_cluster", "failures",	   "cpu_starved",
};

const char *diagnosis_id_name(enum finding_id id)
{
	return (unsigned)id < FIND__COUNT ? id_names[id] : "unknown";
}

const char *diagnosis_severity_name(enum finding_severity s)
{
	return s == SEV_CRITICAL ? "critical" : s == SEV_WARNING ? "warning" : "info";
}

struct finding *diag_new(struct findings *out, enum finding_id id, enum finding_severity sev,
			 double since, double cost)
{
	if (out->n >= FIND__COUNT)
		return NULL;
	struct finding *f = &out->f[out->n++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->severity = sev;
	f->since = since;
	f->cost = cost;
	return f;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double diag_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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

bool diag_same_file(const char *key, const char *rc_file)
{
	size_t k = strlen(key), c = strlen(rc_file);
	return c > 0 && k >= c && strcmp(key + k - c, rc_file) == 0 &&
	       (k == c || c >= RAWCHUNKS_FILE_LEN - 1);
}

const struct rawchunk **diag_chunks(const struct run *r, size_t *n)
{
	*n = 0;
	if (r->raw.n == 0)
		return NULL;
	const struct rawchunk **o = malloc(r->raw.n * sizeof(*o));
	if (!o)
		return NULL;
	rawchunks_ordered(&r->raw, o);
	*n = r->raw.n;
	return o;
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
static void rule_silent_run(const struct run *r, const struct metrics *m,
			    const struct diagnosis_context *ctx, struct findings *out)
{
	optnum busy = m->tasks_executing_now;
	bool fresh = r->tl_executing.has_last && ctx->now - r->tl_executing.t_last < DIAG_SILENT_FRESH;
	if (!ctx->listening || ctx->key_alert || r->ended || r->n_chunks > 0 || !fresh ||
	    !busy.valid || busy.value < 1)
		return;
	double since = silent_since(r);
	if (!(ctx->now - since >= DIAG_SILENT_AFTER))
		return;
	struct finding *f = diag_new(out, FIND_SILENT_RUN, SEV_CRITICAL, since, 0);
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
static void rule_silent_scheduler(const struct run *r, const struct metrics *m,
				  struct findings *out)
{
	const struct timeline *ex = &r->tl_executing;
	bool done = m->tasks_done_now.valid && m->tasks_done_now.value > 0;
	if (r->n_chunks < DIAG_MIN_CHUNKS || ex->n_samples < DIAG_SILENT_SAMPLES || ex->max >= 1 ||
	    done)
		return;
	struct finding *f = diag_new(out, FIND_SILENT_SCHEDULER, SEV_WARNING, NAN, 0);
	snprintf(f->title, sizeof(f->title), "chunks arrive, the scheduler shows no task");
	snprintf(f->evidence, sizeof(f->evidence),
		 "%llu chunks received; %llu scheduler samples, none with a task executing",
		 (unsigned long long)r->n_chunks, (unsigned long long)ex->n_samples);
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "point roastop at the scheduler that runs the analysis (--dask)");
}

void diag_rule_silent(const struct run *r, const struct metrics *m,
		      const struct diagnosis_context *ctx, struct findings *out)
{
	rule_silent_run(r, m, ctx, out);
	rule_silent_scheduler(r, m, out);
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

void diagnosis_evaluate(const struct run *r, const struct metrics *m,
			const struct diagnosis_context *ctx, struct findings *out)
{
	out->n = 0;
	diag_rule_silent(r, m, ctx, out);
	diag_rule_tail(r, m, out);
	diag_rule_small_chunks(r, m, out);
	diag_rule_places(r, out);
	diag_rule_memory_growth(r, out);
	diag_rule_memory_pressure(r, out);
	diag_rule_cpu_use(r, m, out);
	diag_rule_idle_cluster(r, m, out);
	diag_rule_failures(r, out);
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
