/* Rules on memory: one worker's memory growing chunk after chunk (a leak),
 * and workers near their limit, spilling or paused (docs/diagnosis.md). */
#include "diagnosispriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Growth: at least DIAG_LEAK_MIN_CHUNKS chunks on the worker, its memory
 * after them up by DIAG_LEAK_MIN_MB or more from before its first without
 * its largest single step (a cache filled at once by one chunk is no
 * growth), and up after at least DIAG_LEAK_RISING of its chunks. */
#define DIAG_LEAK_MIN_CHUNKS 6
#define DIAG_LEAK_MIN_MB 256.0
#define DIAG_LEAK_RISING 0.7
/* Pressure: a worker's memory at DIAG_MEM_NEAR_PERCENT of its limit or
 * more in the latest sample, or any bytes spilled, or paused. */
#define DIAG_MEM_NEAR_PERCENT 85.0

struct growth {
	const char *worker;
	double first, prev, last, since;
	double top; /* the largest rise over one chunk */
	uint64_t n, up;
};

static size_t growth_collect(const struct rawchunk *const *c, size_t nc, struct growth *g)
{
	size_t k = 0;
	for (size_t i = 0; i < nc; i++) {
		double before = c[i]->v[RC_MEM_BEFORE_MB], after = c[i]->v[RC_MEM_AFTER_MB];
		if (!c[i]->worker[0] || isnan(after))
			continue;
		size_t j = 0;
		while (j < k && strcmp(g[j].worker, c[i]->worker) != 0)
			j++;
		if (j == k && k == DIAG_MAX_PLACES)
			continue;
		if (j == k) {
			g[k++] = (struct growth){ .worker = c[i]->worker, .since = c[i]->v[RC_T_END],
						  .first = isnan(before) ? after : before };
			g[j].prev = g[j].first;
		} else if (after > g[j].prev) {
			g[j].up++;
		}
		g[j].top = fmax(g[j].top, after - g[j].prev);
		g[j].prev = g[j].last = after;
		g[j].n++;
	}
	return k;
}

static bool growth_holds(const struct growth *g)
{
	return g->n >= DIAG_LEAK_MIN_CHUNKS && g->last - g->first - g->top >= DIAG_LEAK_MIN_MB &&
	       (double)g->up >= DIAG_LEAK_RISING * (double)(g->n - 1);
}

void diag_rule_memory_growth(struct diag_eval *e)
{
	size_t nc;
	const struct rawchunk *const *c = diag_chunks(e, &nc);
	struct growth *g = c ? malloc(DIAG_MAX_PLACES * sizeof(*g)) : NULL;
	size_t n = g ? growth_collect(c, nc, g) : 0;
	const struct growth *w = NULL;
	for (size_t i = 0; i < n; i++)
		if (growth_holds(&g[i]) && (!w || g[i].last - g[i].first > w->last - w->first))
			w = &g[i];
	if (w) {
		double grew = w->last - w->first;
		struct finding *f = diag_new(e->out, FIND_MEMORY_GROWTH, w->since, 0);
		char a[FMT_LEN], b[FMT_LEN], d[FMT_LEN];
		snprintf(f->title, sizeof(f->title), "memory grows chunk after chunk on %s", w->worker);
		snprintf(f->evidence, sizeof(f->evidence),
			 "from %s before its first chunk to %s after its %llu chunks (+%s a chunk), "
			 "up after %llu of them",
			 format_mib(a, optnum_of(w->first)), format_mib(b, optnum_of(w->last)),
			 (unsigned long long)w->n, format_mib(d, optnum_of(grew / (double)w->n)),
			 (unsigned long long)w->up);
		snprintf(f->suggestion, sizeof(f->suggestion),
			 "process() keeps something per chunk (a global list, a cache): return it in "
			 "the output instead");
	}
	free(g);
}

/* When the worker's memory first reached the near-limit share, from its
 * history's peaks; NAN when the history does not show it. */
static double pressure_since(const struct worker_agg *w)
{
	double lim = w->memory_limit.valid ? w->memory_limit.value : NAN;
	for (uint32_t i = 0; i < w->hist.len; i++)
		if (100.0 * w->hist.pts[i].mem / lim >= DIAG_MEM_NEAR_PERCENT)
			return w->hist.t0 + w->hist.pts[i].t;
	return NAN;
}

static double pressure_rank(const struct worker_agg *w, double *pct)
{
	optnum p = run_memory_percent(w->memory_bytes, w->memory_limit);
	*pct = p.valid ? p.value : NAN;
	bool spill = w->spilled_bytes.valid && w->spilled_bytes.value > 0;
	bool paused = strcmp(w->status, "paused") == 0;
	if (!w->present || (!paused && !spill && !(*pct >= DIAG_MEM_NEAR_PERCENT)))
		return -1;
	return (paused ? 2000 : 0) + (spill ? 1000 : 0) + (isnan(*pct) ? 0 : *pct);
}

static void pressure_write(struct finding *f, const char *name, const struct worker_agg *w, double pct)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], d[FMT_LEN];
	snprintf(f->title, sizeof(f->title), "memory pressure on %s%s", name,
		 strcmp(w->status, "paused") == 0 ? " (paused)" : "");
	snprintf(f->evidence, sizeof(f->evidence),
		 "%s of its %s limit (%s); %s spilled to disk; status %s", format_bytes(a, w->memory_bytes),
		 format_bytes(b, w->memory_limit), format_num(c, optnum_of(pct), "%.0f%%"),
		 format_bytes(d, w->spilled_bytes), w->status[0] ? w->status : "n/a");
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "more memory per worker (fewer threads per worker), or smaller chunks");
}

void diag_rule_memory_pressure(struct diag_eval *e)
{
	const struct run *r = e->r;
	const struct worker_agg *w = NULL;
	const char *name = NULL;
	double best = -1, pct = NAN;
	for (size_t i = 0; i < r->workers.count; i++) {
		const struct worker_agg *x = strmap_val_at(&r->workers, i);
		double p, rank = pressure_rank(x, &p);
		if (rank > best)
			best = rank, w = x, pct = p, name = strmap_key_at(&r->workers, i);
	}
	if (!w)
		return;
	struct finding *f = diag_new(e->out, FIND_MEMORY_PRESSURE, pressure_since(w), 0);
	if (strcmp(w->status, "paused") == 0)
		f->severity = SEV_CRITICAL;
	pressure_write(f, w->name[0] ? w->name : name, w, pct);
}
