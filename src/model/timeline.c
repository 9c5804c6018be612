/* A compaction (O(cap)) happens once per cap/2 new points: amortised O(1)
 * per sample. A merged pair is flagged gap_before when either half was, so
 * a gap inside the pair is drawn at most one bucket early instead of
 * vanishing. The totals are separate from the points: a restart or a
 * freeze changes which samples they count, never what is drawn. */
#include "roastop/timeline.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TL_MIN_CAP 4
#define TL_MAX_PER_BUCKET (UINT32_MAX / 2 + 1)

int timeline_init(struct timeline *tl, size_t cap)
{
	memset(tl, 0, sizeof(*tl));
	tl->per_bucket = 1;
	tl->max = -INFINITY;
	tl->count_from = -INFINITY;
	tl->count_to = INFINITY;
	if (cap > SIZE_MAX / 2 / sizeof(*tl->pts))
		return -1;
	cap = cap < TL_MIN_CAP ? TL_MIN_CAP : cap + (cap & 1);
	tl->pts = calloc(cap, sizeof(*tl->pts));
	if (!tl->pts)
		return -1;
	tl->cap = cap;
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
	double n = (double)a->n + (double)b->n;
	a->mean = (float)(((double)a->mean * a->n + (double)b->mean * b->n) / n);
	a->min = fminf(a->min, b->min);
	a->max = fmaxf(a->max, b->max);
	a->n += b->n;
	a->gap_before = a->gap_before || b->gap_before;
}

/* Halve the resolution; an odd last point is kept as it is. */
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
	if (tl->per_bucket < TL_MAX_PER_BUCKET)
		tl->per_bucket *= 2;
}

static void timeline_count(struct timeline *tl, double v)
{
	tl->n_samples++;
	tl->sum += v;
	if (v > tl->max)
		tl->max = v;
}

/* The part of the trapezoid from the last sample to (t, v) that lies in
 * [count_from, count_to], its ends interpolated: a window edge between two
 * polls cuts the trapezoid there instead of moving to a poll. */
static void timeline_trapezoid(struct timeline *tl, double t, double v)
{
	double a = fmax(tl->t_last, tl->count_from), b = fmin(t, tl->count_to);
	if (!(b > a))
		return;
	double slope = (v - tl->v_last) / (t - tl->t_last);
	double va = tl->v_last + slope * (a - tl->t_last);
	double vb = tl->v_last + slope * (b - tl->t_last);
	tl->integral += 0.5 * (va + vb) * (b - a);
	tl->covered += b - a;
}

/* The exact accumulators: a trapezoid joins consecutive samples unless a
 * gap came between them (has_last is false then); a sample outside the
 * window still draws and is the edge of the trapezoid across it. */
static void timeline_accumulate(struct timeline *tl, double t, double v)
{
	if (tl->has_last && t > tl->t_last)
		timeline_trapezoid(tl, t, v);
	if (t >= tl->count_from && t <= tl->count_to)
		timeline_count(tl, v);
	tl->t_last = t;
	tl->v_last = v;
	tl->has_last = true;
}

/* Points are floats to halve their memory; a finite double past the float
 * range saturates instead of becoming inf (and the exact accumulators
 * keep the double). */
static float to_float(double v)
{
	return v > FLT_MAX ? FLT_MAX : (v < -FLT_MAX ? -FLT_MAX : (float)v);
}

static void timeline_append(struct timeline *tl, double t, double v, bool gap)
{
	if (tl->len == tl->cap)
		timeline_compact(tl);
	float f = to_float(v);
	tl->pts[tl->len++] = (struct tl_point){
		.t = t, .min = f, .max = f, .mean = f, .n = 1, .gap_before = gap,
	};
}

bool timeline_push(struct timeline *tl, double t, double v)
{
	if (!isfinite(t) || !isfinite(v) || !tl->pts)
		return false;
	/* t_last is the last sample's time even when totals were restarted
	 * or frozen; len says whether there was one */
	if (tl->len && t < tl->t_last)
		return false;
	bool gap = tl->gap_pending;
	timeline_accumulate(tl, t, v);
	tl->gap_pending = false;
	struct tl_point *last = tl->len ? &tl->pts[tl->len - 1] : NULL;
	if (!last || gap || last->n >= tl->per_bucket) {
		timeline_append(tl, t, v, gap);
		return true;
	}
	float f = to_float(v);
	point_merge(last, &(struct tl_point){ .min = f, .max = f, .mean = f, .n = 1 });
	return true;
}

void timeline_add_unordered(struct timeline *tl, double v)
{
	if (!isfinite(v))
		return;
	timeline_count(tl, v);
	tl->n_unordered++;
}

void timeline_gap(struct timeline *tl)
{
	tl->has_last = false;
	if (tl->len)
		tl->gap_pending = true;
}

void timeline_restart_totals(struct timeline *tl, double from)
{
	tl->n_samples = tl->n_unordered = 0;
	tl->integral = tl->covered = tl->sum = 0;
	tl->max = -INFINITY;
	tl->count_from = from;
}

void timeline_freeze(struct timeline *tl, double at)
{
	tl->count_to = at;
}

void timeline_thaw(struct timeline *tl)
{
	/* the trapezoid from the last frozen sample on counts whole */
	tl->count_from = fmax(tl->count_from, tl->has_last ? tl->t_last : -INFINITY);
	tl->count_to = INFINITY;
}

optnum timeline_time_avg(const struct timeline *tl)
{
	if (tl->n_samples == 0)
		return optnum_none();
	if (!(tl->covered > 0) || tl->n_unordered)
		return optnum_of(tl->sum / (double)tl->n_samples);
	return optnum_of(tl->integral / tl->covered);
}

optnum timeline_max(const struct timeline *tl)
{
	return tl->n_samples ? optnum_of(tl->max) : optnum_none();
}
