/* Bounded time series; see timeline.h for the contract. */
#include "roastop/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int timeline_init(struct timeline *tl, size_t cap)
{
	memset(tl, 0, sizeof(*tl));
	cap = cap < 4 ? 4 : cap + (cap & 1);
	tl->pts = calloc(cap, sizeof(*tl->pts));
	if (!tl->pts)
		return -1;
	tl->cap = cap;
	tl->per_bucket = 1;
	tl->min = INFINITY;
	tl->max = -INFINITY;
	return 0;
}

void timeline_free(struct timeline *tl)
{
	free(tl->pts);
	tl->pts = NULL;
	tl->cap = tl->len = 0;
}

static void point_merge(struct tl_point *a, const struct tl_point *b)
{
	uint32_t n = a->n + b->n;
	a->mean = (float)(((double)a->mean * a->n + (double)b->mean * b->n) / n);
	a->min = fminf(a->min, b->min);
	a->max = fmaxf(a->max, b->max);
	a->n = n;
	/* a gap inside the pair still shows: the merged bucket starts one */
	a->gap_before = a->gap_before || b->gap_before;
}

/* Halve the resolution: buckets merge in pairs. */
static void timeline_compact(struct timeline *tl)
{
	size_t j = 0;
	for (size_t i = 0; i + 1 < tl->len; i += 2, j++) {
		tl->pts[j] = tl->pts[i];
		point_merge(&tl->pts[j], &tl->pts[i + 1]);
	}
	if (tl->len & 1)
		tl->pts[j++] = tl->pts[tl->len - 1];
	tl->len = j;
	tl->per_bucket *= 2;
}

static void timeline_accumulate(struct timeline *tl, double t, double v)
{
	if (tl->frozen) {
		tl->t_last = t;
		tl->v_last = v;
		tl->has_last = true;
		return;
	}
	if (tl->has_last && t > tl->t_last) {
		tl->integral += 0.5 * (tl->v_last + v) * (t - tl->t_last);
		tl->covered += t - tl->t_last;
	}
	tl->n_samples++;
	tl->sum += v;
	tl->min = fmin(tl->min, v);
	tl->max = fmax(tl->max, v);
	tl->t_last = t;
	tl->v_last = v;
	tl->has_last = true;
}

bool timeline_push(struct timeline *tl, double t, double v)
{
	if (!isfinite(t) || !isfinite(v) || !tl->pts)
		return false;
	if (tl->len && t < tl->t_last)
		return false;
	bool gap = tl->gap_pending;
	timeline_accumulate(tl, t, v);
	tl->gap_pending = false;
	struct tl_point *last = tl->len ? &tl->pts[tl->len - 1] : NULL;
	if (last && !gap && last->n < tl->per_bucket) {
		point_merge(last, &(struct tl_point){ .mean = (float)v, .min = (float)v,
						      .max = (float)v, .n = 1 });
		return true;
	}
	if (tl->len == tl->cap)
		timeline_compact(tl);
	tl->pts[tl->len++] = (struct tl_point){ .t = t, .min = (float)v, .max = (float)v,
						.mean = (float)v, .n = 1, .gap_before = gap };
	return true;
}

void timeline_gap(struct timeline *tl)
{
	tl->has_last = false;
	if (tl->n_samples)
		tl->gap_pending = true;
}

optnum timeline_time_avg(const struct timeline *tl)
{
	if (tl->n_samples == 0)
		return optnum_none();
	if (tl->covered <= 0)
		return optnum_of(tl->sum / (double)tl->n_samples);
	return optnum_of(tl->integral / tl->covered);
}

optnum timeline_mean(const struct timeline *tl)
{
	return tl->n_samples ? optnum_of(tl->sum / (double)tl->n_samples) : optnum_none();
}

optnum timeline_max(const struct timeline *tl)
{
	return tl->n_samples ? optnum_of(tl->max) : optnum_none();
}

optnum timeline_min(const struct timeline *tl)
{
	return tl->n_samples ? optnum_of(tl->min) : optnum_none();
}

void timeline_restart_totals(struct timeline *tl)
{
	tl->n_samples = 0;
	tl->integral = tl->covered = tl->sum = 0;
	tl->min = INFINITY;
	tl->max = -INFINITY;
}

void timeline_freeze(struct timeline *tl, bool frozen)
{
	tl->frozen = frozen;
}
