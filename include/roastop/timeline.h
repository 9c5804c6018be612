/* A time series with bounded memory: at most `cap` points, each a bucket
 * holding min/max/mean of the raw samples it covers. When full, adjacent
 * buckets merge in pairs and each new bucket covers twice as many samples,
 * so resolution halves as the run grows. Integrals are exact regardless:
 * the trapezoid rule over every raw sample is accumulated as samples arrive.
 *
 * A gap (the source was lost) breaks the series: no trapezoid spans it, the
 * first point after it is flagged so views draw no line through it, and the
 * covered time excludes it. */
#ifndef ROASTOP_TIMELINE_H
#define ROASTOP_TIMELINE_H

#include "roastop/common.h"

struct tl_point {
	double t; /* time of the first raw sample in the bucket */
	float min, max, mean;
	uint32_t n; /* raw samples in the bucket */
	bool gap_before;
};

struct timeline {
	struct tl_point *pts;
	size_t cap; /* even, >= 4 */
	size_t len;
	uint32_t per_bucket; /* raw samples per bucket now: 1, 2, 4, ... */
	/* exact accumulators over every raw sample */
	uint64_t n_samples;
	double integral; /* sum of trapezoids, value x seconds */
	double covered; /* seconds covered by trapezoids */
	double max; /* over all raw samples */
	double sum; /* plain sum, for the mean of the samples (timeline_time_avg) */
	uint64_t n_unordered; /* of n_samples, those added out of order */
	double t_last, v_last;
	bool has_last; /* false at start and after a gap */
	bool gap_pending;
	/* the totals' window: samples and trapezoid parts outside it are drawn,
	 * not counted (a run's [start, end]) */
	double count_from, count_to;
};

/* 0 on success, -1 when out of memory. */
int timeline_init(struct timeline *tl, size_t cap);
void timeline_free(struct timeline *tl);
/* Samples must come in non-decreasing time; an earlier one is ignored
 * (returns false), as are non-finite values. */
bool timeline_push(struct timeline *tl, double t, double v);
/* A sample that came late (its time is before t_last): the order-free
 * totals (n_samples, sum, max) take it, frozen or not; no point, no
 * trapezoid, and v_last stays the latest in-order sample. From then on the
 * time average is the mean of the samples (see timeline_time_avg). */
void timeline_add_unordered(struct timeline *tl, double v);
void timeline_gap(struct timeline *tl);
/* Totals start again and count from time `from` on (-INFINITY: from the
 * last sample): the trapezoid across `from` counts from there, its value
 * at `from` interpolated, so no interval is lost and none is added.
 * Points are kept for drawing. */
void timeline_restart_totals(struct timeline *tl, double from);
/* Totals stop at time `at`: the trapezoid across it counts up to it
 * (interpolated), later samples are drawn, not counted. */
void timeline_freeze(struct timeline *tl, double at);
/* Totals count again, from the last sample on. */
void timeline_thaw(struct timeline *tl);
/* integral / covered; invalid when empty. Without a trapezoid (one sample,
 * samples at one instant or isolated by gaps) or with samples out of order,
 * the mean of the samples: trapezoids over the in-order ones alone could
 * span most of the run with two samples, where the mean of evenly spaced
 * polls is within a sample's worth of the truth. */
optnum timeline_time_avg(const struct timeline *tl);
optnum timeline_max(const struct timeline *tl);

#endif
