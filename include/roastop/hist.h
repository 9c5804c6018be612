/* Log-bucket histogram (DDSketch-style) of positive values such as chunk
 * durations: fixed memory, any quantile within 1 % relative error
 * for values in [HIST_MIN, HIST_MAX]. Values below HIST_MIN (including 0)
 * count in an underflow bucket, above HIST_MAX in an overflow bucket. */
#ifndef ROASTOP_HIST_H
#define ROASTOP_HIST_H

#include "roastop/common.h"

#define HIST_MIN 1e-6 /* seconds */
#define HIST_MAX 1e7
/* gamma = 1.02: a bucket's representative is within (gamma - 1) / (gamma + 1)
 * = 0.99 % of every value in it. Bucket i covers (gamma^(i-1), gamma^i] x
 * HIST_MIN, so HIST_MAX needs i = ceil(ln(1e13) / ln(1.02)) = 1512. */
#define HIST_BUCKETS 1513

struct hist {
	uint64_t count;
	uint64_t underflow; /* x < HIST_MIN */
	uint64_t overflow; /* x > HIST_MAX */
	double min, max; /* exact */
	uint32_t lo, hi; /* lowest and highest bucket in use (when count > underflow + overflow) */
	uint64_t buckets[HIST_BUCKETS];
};

void hist_init(struct hist *h);
/* Negative and non-finite values are ignored and return false. */
bool hist_add(struct hist *h, double x);
/* q in [0, 1]; invalid when empty or q is out of range. Nearest rank: the
 * ceil(q * count)-th smallest value, within 1 %, clamped to [min, max].
 * Exact at q = 0 and q = 1 (min/max). */
optnum hist_quantile(const struct hist *h, double q);
/* Bucket geometry, for drawing: the value range (lower, upper] of bucket i. */
double hist_bucket_lower(uint32_t i);
double hist_bucket_upper(uint32_t i);
/* Re-bin into n_bins log-spaced display bins between lo and hi (inclusive
 * of under/overflow in the first/last bin); counts are written to out. */
void hist_rebin(const struct hist *h, double lo, double hi, uint64_t *out, size_t n_bins);

#endif
