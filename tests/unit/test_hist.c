#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "roastop/hist.h"

#include <math.h>

uint32_t hist_bucket_fast(double x);
uint32_t hist_bucket_by_log(double x);

/* xorshift64, fixed seed: the same values on every run */
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double unit(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static struct hist *hist_new(void)
{
	struct hist *h = malloc(sizeof(*h));
	assert_non_null(h);
	hist_init(h);
	return h;
}

static bool within(double got, double want, double rel)
{
	return fabs(got - want) <= rel * fabs(want);
}

enum { N = 100000 };

/* Nearest rank in integers: the ceil(permille * N / 1000)-th smallest. */
static double exact_quantile(const double *sorted, size_t permille)
{
	size_t k = (permille * N + 999) / 1000;
	return sorted[k - 1];
}

/* Fills h with N log-uniform values over [lo, hi], checks the 1 % bound at
 * every permille against the exactly sorted values. */
static void check_log_uniform(double lo, double hi)
{
	static double xs[N];
	struct hist *h = hist_new();
	for (size_t i = 0; i < N; i++) {
		xs[i] = lo * pow(hi / lo, unit());
		assert_true(hist_add(h, xs[i]));
	}
	qsort(xs, N, sizeof(xs[0]), cmp);
	const size_t named[] = { 500, 900, 990 }; /* p50, p90, p99 */
	for (size_t k = 0; k < 3; k++) {
		double want = exact_quantile(xs, named[k]);
		assert_true(within(hist_quantile(h, (double)named[k] / 1000).value, want, 0.01));
	}
	for (size_t p = 1; p < 1000; p++) {
		double want = exact_quantile(xs, p);
		assert_true(within(hist_quantile(h, (double)p / 1000).value, want, 0.01));
	}
	assert_true(hist_quantile(h, 0).value == xs[0]);
	assert_true(hist_quantile(h, 1).value == xs[N - 1]);
	assert_int_equal(h->underflow + h->overflow, 0);
	free(h);
}

/* 100,000 log-uniform chunk durations over 1 ms .. 1,000 s. */
static void quantiles_within_one_percent(void **state)
{
	(void)state;
	check_log_uniform(1e-3, 1e3);
}

/* The whole promised range, HIST_MIN .. HIST_MAX: the top decade holds
 * event counts of big chunks and must not pile into one bucket. */
static void quantiles_within_one_percent_over_full_range(void **state)
{
	(void)state;
	check_log_uniform(HIST_MIN, HIST_MAX);
}

/* 2e6, 3e6, 5e6 (events per chunk): the median is the middle one. */
static void top_decade_is_resolved(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	hist_add(h, 2e6);
	hist_add(h, 3e6);
	hist_add(h, 5e6);
	assert_true(within(hist_quantile(h, 0.5).value, 3e6, 0.01));
	assert_true(hist_add(h, HIST_MAX));
	assert_int_equal(h->overflow, 0);
	assert_true(h->hi < HIST_BUCKETS);
	assert_true(hist_bucket_upper(h->hi) >= HIST_MAX);
	assert_true(within(hist_quantile(h, 0.75).value, 5e6, 0.01));
	free(h);
}

/* Every value lands in a bucket whose (lower, upper] holds it, and each
 * bucket is a factor 1.02 wide. */
static void bucket_geometry_holds_each_value(void **state)
{
	(void)state;
	for (double x = HIST_MIN * 1.001; x <= HIST_MAX; x *= 1.37) {
		struct hist *h = hist_new();
		assert_true(hist_add(h, x));
		assert_int_equal(h->lo, h->hi);
		assert_true(hist_bucket_lower(h->lo) < x * (1 + 1e-12));
		assert_true(x <= hist_bucket_upper(h->lo) * (1 + 1e-12));
		assert_near(hist_bucket_upper(h->lo) / hist_bucket_lower(h->lo), 1.02, 1e-12);
		free(h);
	}
}

static void bad_values_ignored_and_extremes_counted(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	assert_false(hist_quantile(h, 0.5).valid);
	assert_false(hist_add(h, -1));
	assert_false(hist_add(h, NAN));
	assert_false(hist_add(h, INFINITY));
	assert_int_equal(h->count, 0);
	assert_true(hist_add(h, 0));
	assert_true(hist_add(h, 1));
	assert_true(hist_add(h, 2));
	assert_true(hist_add(h, 1e9));
	assert_int_equal(h->count, 4);
	assert_int_equal(h->underflow, 1);
	assert_int_equal(h->overflow, 1);
	/* ranks 1..4 are 0 (underflow), 1, 2, 1e9 (overflow) */
	assert_true(hist_quantile(h, 0.25).value == 0); /* underflow -> min */
	assert_true(within(hist_quantile(h, 0.5).value, 1, 0.01));
	assert_true(within(hist_quantile(h, 0.75).value, 2, 0.01));
	assert_true(hist_quantile(h, 0.9).value == 1e9); /* overflow -> max */
	assert_false(hist_quantile(h, -0.1).valid);
	assert_false(hist_quantile(h, 1.1).valid);
	assert_false(hist_quantile(h, NAN).valid);
	free(h);
}

/* Two chunks, 2.5 s and 4.5 s: p50 is the first, p99 the second. */
static void nearest_rank_on_few_values(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	hist_add(h, 2.5);
	hist_add(h, 4.5);
	assert_true(within(hist_quantile(h, 0.5).value, 2.5, 0.01));
	assert_true(within(hist_quantile(h, 0.99).value, 4.5, 0.01));
	free(h);
}

/* 1..100: the q-th quantile is q*100 itself. 0.07 * 100 is 7.000000000000001
 * in doubles; a plain ceil would pick 8, 14 % off. */
static void rank_survives_float_rounding(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	for (int i = 1; i <= 100; i++)
		hist_add(h, i);
	const int ps[] = { 7, 14, 28, 29, 50, 57, 90, 99 };
	for (size_t k = 0; k < ROASTOP_ARRAY_LEN(ps); k++)
		assert_true(within(hist_quantile(h, ps[k] / 100.0).value, ps[k], 0.01));
	assert_true(hist_quantile(h, 0.001).value == 1); /* rank 1: clamped to min */
	free(h);
}

/* One value: every quantile is that value exactly (clamped to min/max). */
static void single_value_is_exact(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	hist_add(h, 3.0);
	for (double q = 0; q <= 1; q += 0.125)
		assert_true(hist_quantile(h, q).value == 3.0);
	free(h);
}

/* 3 display bins over [1, 1000): [1,10) [10,100) [100,1000).
 * 0 (underflow) and 0.5 fall in the first, 5000 and 1e8 (overflow) in
 * the last: {1 + 1 + 5, 2, 1 + 1 + 1}. */
static void rebin_hand_computed(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	for (int i = 0; i < 5; i++)
		hist_add(h, 3);
	hist_add(h, 30);
	hist_add(h, 31);
	hist_add(h, 300);
	hist_add(h, 0);
	hist_add(h, 0.5);
	hist_add(h, 5000);
	hist_add(h, 1e8);
	uint64_t bins[3];
	hist_rebin(h, 1, 1000, bins, 3);
	assert_int_equal(bins[0], 7);
	assert_int_equal(bins[1], 2);
	assert_int_equal(bins[2], 3);
	bins[1] = 99;
	hist_rebin(h, 0, 1000, bins, 3); /* bad range: all zero, no crash */
	assert_int_equal(bins[0] + bins[1] + bins[2], 0);
	hist_rebin(h, 1, 1000, NULL, 0);
	free(h);
}

static void rebin_keeps_every_count(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	for (int i = 0; i < 500; i++)
		hist_add(h, 0.1 + i * 0.05);
	hist_add(h, 1e-9);
	uint64_t bins[20], total = 0;
	hist_rebin(h, 0.05, 50, bins, 20);
	for (int i = 0; i < 20; i++)
		total += bins[i];
	assert_int_equal(total, 501);
	assert_true(bins[0] >= 1);
	free(h);
}

/* The table lookup hist_add uses gives the bucket the log() definition
 * gives: within 64 doubles either side of every bucket boundary, at both
 * ends of the range, and at a million values spread over it. */
static void bucket_lookup_agrees_with_log(void **state)
{
	(void)state;
	for (uint32_t i = 1; i < HIST_BUCKETS; i++) {
		double x = HIST_MIN * pow(1.02, (double)i - 1.0), y = x;
		for (int k = 0; k < 64; k++) {
			x = nextafter(x, 0);
			y = nextafter(y, INFINITY);
			if (x >= HIST_MIN)
				assert_int_equal(hist_bucket_fast(x), hist_bucket_by_log(x));
			if (y <= HIST_MAX)
				assert_int_equal(hist_bucket_fast(y), hist_bucket_by_log(y));
		}
	}
	assert_int_equal(hist_bucket_fast(HIST_MIN), 0);
	assert_int_equal(hist_bucket_fast(HIST_MAX), hist_bucket_by_log(HIST_MAX));
	uint64_t r = 88172645463325252ull;
	for (int n = 0; n < 1000000; n++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		double u = (double)(r >> 11) / 9007199254740992.0;
		double x = HIST_MIN * pow(HIST_MAX / HIST_MIN, u);
		if (x >= HIST_MIN && x <= HIST_MAX)
			assert_int_equal(hist_bucket_fast(x), hist_bucket_by_log(x));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantiles_within_one_percent),
		cmocka_unit_test(quantiles_within_one_percent_over_full_range),
		cmocka_unit_test(top_decade_is_resolved),
		cmocka_unit_test(bucket_geometry_holds_each_value),
		cmocka_unit_test(bad_values_ignored_and_extremes_counted),
		cmocka_unit_test(nearest_rank_on_few_values),
		cmocka_unit_test(rank_survives_float_rounding),
		cmocka_unit_test(single_value_is_exact),
		cmocka_unit_test(rebin_hand_computed),
		cmocka_unit_test(rebin_keeps_every_count),
		cmocka_unit_test(bucket_lookup_agrees_with_log),
	};
	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
