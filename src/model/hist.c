/* Log-bucket histogram: bucket i holds (gamma^(i-1), gamma^i] * HIST_MIN.
 * With gamma = 1.02 a value's representative 2 gamma^i / (gamma + 1) is
 * within (gamma - 1) / (gamma + 1) < 0.99 % of every value in the bucket.
 * ln(HIST_MAX / HIST_MIN) / ln(1.02) = 1395.4 buckets, so 1400 suffice. */
#include "roastop/hist.h"

#include <math.h>
#include <string.h>

#define HIST_GAMMA 1.02

static double inv_log_gamma(void)
{
	static double v;
	if (v == 0.0)
		v = 1.0 / log(HIST_GAMMA);
	return v;
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = INFINITY;
	h->max = -INFINITY;
	h->lo = HIST_BUCKETS;
}

static uint32_t bucket_of(double x)
{
	double i = ceil(log(x / HIST_MIN) * inv_log_gamma());
	if (i < 0)
		return 0;
	if (i >= HIST_BUCKETS)
		return HIST_BUCKETS - 1;
	return (uint32_t)i;
}

bool hist_add(struct hist *h, double x)
{
	if (!isfinite(x) || x < 0)
		return false;
	h->count++;
	if (x < h->min)
		h->min = x;
	if (x > h->max)
		h->max = x;
	if (x < HIST_MIN) {
		h->underflow++;
		return true;
	}
	if (x > HIST_MAX) {
		h->overflow++;
		return true;
	}
	uint32_t b = bucket_of(x);
	h->buckets[b]++;
	if (b < h->lo)
		h->lo = b;
	if (b > h->hi)
		h->hi = b;
	return true;
}

void hist_merge(struct hist *a, const struct hist *b)
{
	if (b->count == 0)
		return;
	a->count += b->count;
	a->underflow += b->underflow;
	a->overflow += b->overflow;
	a->min = fmin(a->min, b->min);
	a->max = fmax(a->max, b->max);
	for (uint32_t i = 0; i < HIST_BUCKETS; i++)
		a->buckets[i] += b->buckets[i];
	if (b->lo < a->lo)
		a->lo = b->lo;
	if (b->hi > a->hi)
		a->hi = b->hi;
}

double hist_bucket_lower(uint32_t i)
{
	return i == 0 ? 0.0 : HIST_MIN * pow(HIST_GAMMA, (double)i - 1.0);
}

double hist_bucket_upper(uint32_t i)
{
	return HIST_MIN * pow(HIST_GAMMA, (double)i);
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

/* Nearest rank: the ceil(q * count)-th smallest value (1-based), so the p99
 * of two chunks is the larger one. */
optnum hist_quantile(const struct hist *h, double q)
{
	if (h->count == 0 || !(q >= 0 && q <= 1))
		return optnum_none();
	if (q == 0)
		return optnum_of(h->min);
	if (q == 1)
		return optnum_of(h->max);
	uint64_t rank = (uint64_t)ceil(q * (double)h->count) - 1; /* 0-based */
	if (rank < h->underflow)
		return optnum_of(h->min);
	uint64_t seen = h->underflow;
	for (uint32_t i = h->lo; i <= h->hi && i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (rank < seen) {
			double rep = 2.0 * hist_bucket_upper(i) / (HIST_GAMMA + 1.0);
			return optnum_of(clamp(rep, h->min, h->max));
		}
	}
	return optnum_of(h->max);
}

/* Display bins: log-spaced between lo and hi; a source bucket is placed by
 * its representative value; under/overflow land in the end bins. */
void hist_rebin(const struct hist *h, double lo, double hi, uint64_t *out, size_t n_bins)
{
	memset(out, 0, n_bins * sizeof(*out));
	if (n_bins == 0 || !(lo > 0) || !(hi > lo))
		return;
	double scale = (double)n_bins / log(hi / lo);
	out[0] += h->underflow;
	out[n_bins - 1] += h->overflow;
	for (uint32_t i = h->lo; i <= h->hi && i < HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		double rep = 2.0 * hist_bucket_upper(i) / (HIST_GAMMA + 1.0);
		double pos = floor(log(rep / lo) * scale);
		size_t b = pos < 0 ? 0 : (pos >= (double)n_bins ? n_bins - 1 : (size_t)pos);
		out[b] += h->buckets[i];
	}
}
