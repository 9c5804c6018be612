/* Buckets as hist.h has them (bucket 0 holds HIST_MIN itself). Nearest-rank
 * quantiles pick the bucket of the exact quantile, so they carry its
 * representative's 0.99 % bound. */
#include "roastop/hist.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define HIST_GAMMA 1.02
/* 1 / ln(1.02), written out so hist_add needs no second log() at -O0 */
#define HIST_INV_LN_GAMMA 50.4983497918439

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = INFINITY;
	h->max = -INFINITY;
	h->lo = HIST_BUCKETS;
}

/* x in [HIST_MIN, HIST_MAX]; the clamps only absorb rounding in log(). The
 * definition of a bucket; bucket_of finds the same answer without log(). */
static uint32_t bucket_exact(double x)
{
	double i = ceil(log(x * (1.0 / HIST_MIN)) * HIST_INV_LN_GAMMA);
	if (!(i > 0))
		return 0;
	if (i >= HIST_BUCKETS)
		return HIST_BUCKETS - 1;
	return (uint32_t)i;
}

/* hist_add runs for every chunk, three times, and log() was most of it. A
 * cell is a range of doubles sharing exponent and top CELL_BITS mantissa
 * bits: at most 1/128 wide, narrower than a bucket (2 %), so a cell holds at
 * most one bucket boundary. cell_bucket is the bucket where a cell starts,
 * bucket_start the smallest double of each bucket, both found with
 * bucket_exact, so the lookup agrees with it on every double (the unit test
 * checks the boundaries and a million values). */
#define CELL_BITS 7
#define CELL_SHIFT (52 - CELL_BITS)

static uint64_t bits_of(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof(u));
	return u;
}

static double double_of(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof(x));
	return x;
}

static uint16_t *cell_bucket;
static double bucket_start[HIST_BUCKETS + 1]; /* [1 .. HIST_BUCKETS]; INFINITY past the top */
static uint64_t cell_first;
static pthread_once_t cells_once = PTHREAD_ONCE_INIT;

/* The smallest double x in [HIST_MIN, HIST_MAX] with bucket_exact(x) >= b,
 * for b <= bucket_exact(HIST_MAX) (bucket_exact is non-decreasing; positive
 * doubles order as their bits). */
static double start_of(uint32_t b)
{
	uint64_t lo = bits_of(HIST_MIN), hi = bits_of(HIST_MAX);
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (bucket_exact(double_of(mid)) >= b)
			hi = mid;
		else
			lo = mid + 1;
	}
	return double_of(lo);
}

static void cells_fill(void)
{
	uint32_t top = bucket_exact(HIST_MAX);
	for (uint32_t b = 1; b <= HIST_BUCKETS; b++)
		bucket_start[b] = b <= top ? start_of(b) : INFINITY;
	cell_first = bits_of(HIST_MIN) >> CELL_SHIFT;
	uint64_t cells = (bits_of(HIST_MAX) >> CELL_SHIFT) - cell_first + 1;
	cell_bucket = malloc(cells * sizeof(*cell_bucket));
	for (uint64_t c = 0; cell_bucket && c < cells; c++) {
		double x = double_of((cell_first + c) << CELL_SHIFT);
		cell_bucket[c] = (uint16_t)bucket_exact(x < HIST_MIN ? HIST_MIN : x);
	}
}

static uint32_t bucket_of(double x)
{
	pthread_once(&cells_once, cells_fill);
	if (!cell_bucket)
		return bucket_exact(x); /* no memory for the table */
	uint32_t b = cell_bucket[(bits_of(x) >> CELL_SHIFT) - cell_first];
	return x >= bucket_start[b + 1] ? b + 1 : b;
}

/* For the unit test: the lookup against the definition. */
uint32_t hist_bucket_fast(double x);
uint32_t hist_bucket_by_log(double x);
uint32_t hist_bucket_fast(double x)
{
	return bucket_of(x);
}

uint32_t hist_bucket_by_log(double x)
{
	return bucket_exact(x);
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

double hist_bucket_lower(uint32_t i)
{
	return HIST_MIN * pow(HIST_GAMMA, (double)i - 1.0);
}

double hist_bucket_upper(uint32_t i)
{
	return HIST_MIN * pow(HIST_GAMMA, (double)i);
}

static double bucket_value(uint32_t i)
{
	return 2.0 * hist_bucket_upper(i) / (HIST_GAMMA + 1.0);
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

/* 0-based index of the ceil(q n)-th smallest value. q n is rounded once
 * and q itself is a rounded decimal, so a product a few ulps above an
 * integer (0.07 x 100 = 7.000000000000001) is taken as that integer. */
static uint64_t nearest_rank(double q, uint64_t n)
{
	double r = q * (double)n, k = floor(r);
	if (r - k > 4 * DBL_EPSILON * r)
		k += 1;
	if (k < 1)
		return 0;
	if (k >= (double)n)
		return n - 1;
	return (uint64_t)k - 1;
}

optnum hist_quantile(const struct hist *h, double q)
{
	if (h->count == 0 || !(q >= 0 && q <= 1))
		return optnum_none();
	if (q == 0)
		return optnum_of(h->min);
	if (q == 1)
		return optnum_of(h->max);
	uint64_t rank = nearest_rank(q, h->count);
	if (rank < h->underflow)
		return optnum_of(h->min);
	uint64_t seen = h->underflow;
	for (uint32_t i = h->lo; i <= h->hi && i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (rank < seen)
			return optnum_of(clamp(bucket_value(i), h->min, h->max));
	}
	return optnum_of(h->max); /* the rank is in the overflow */
}

/* Display bins: log-spaced between lo and hi; a source bucket goes whole
 * into the bin of its representative value (buckets are 2 % wide, far
 * narrower than a screen column); under/overflow land in the end bins. */
void hist_rebin(const struct hist *h, double lo, double hi, uint64_t *out, size_t n_bins)
{
	if (n_bins == 0)
		return;
	memset(out, 0, n_bins * sizeof(*out));
	if (!(lo > 0) || !(hi > lo) || !isfinite(hi))
		return;
	double scale = (double)n_bins / log(hi / lo);
	out[0] += h->underflow;
	out[n_bins - 1] += h->overflow;
	for (uint32_t i = h->lo; i <= h->hi && i < HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		double pos = floor(log(bucket_value(i) / lo) * scale);
		size_t b = pos < 0 ? 0 : (pos >= (double)n_bins ? n_bins - 1 : (size_t)pos);
		out[b] += h->buckets[i];
	}
}
