#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "roastop/hist.h"

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

/* 100,000 log-uniform values over 1 ms .. 1,000 s: every quantile within
 * 1 % of the exact (nearest-rank) one. */
static void quantiles_within_one_percent(void **state)
{
	(void)state;
	enum { N = 100000 };
	static double xs[N];
	struct hist *h = malloc(sizeof(*h));
	hist_init(h);
	for (size_t i = 0; i < N; i++) {
		xs[i] = 1e-3 * pow(1e6, unit());
		assert_true(hist_add(h, xs[i]));
	}
	qsort(xs, N, sizeof(xs[0]), cmp);
	const double qs[] = { 0.01, 0.5, 0.9, 0.99, 0.999 };
	for (size_t k = 0; k < 5; k++) {
		double exact = xs[(size_t)ceil(qs[k] * N) - 1]; /* nearest rank */
		double got = hist_quantile(h, qs[k]).value;
		assert_true(fabs(got - exact) / exact < 0.01);
	}
	assert_near(hist_quantile(h, 0).value, xs[0], 0);
	assert_near(hist_quantile(h, 1).value, xs[N - 1], 0);
	free(h);
}

static void bad_values_ignored_and_extremes_counted(void **state)
{
	(void)state;
	struct hist *h = malloc(sizeof(*h));
	hist_init(h);
	assert_false(hist_quantile(h, 0.5).valid);
	assert_false(hist_add(h, -1));
	assert_false(hist_add(h, NAN));
	assert_false(hist_add(h, INFINITY));
	assert_true(hist_add(h, 0));
	assert_true(hist_add(h, 1e9));
	assert_int_equal(h->count, 2);
	assert_int_equal(h->underflow, 1);
	assert_int_equal(h->overflow, 1);
	assert_near(hist_quantile(h, 0.25).value, 0, 0);
	free(h);
}

/* Two chunks, 2.5 s and 4.5 s: p50 is the first, p99 the second. */
static void nearest_rank_on_few_values(void **state)
{
	(void)state;
	struct hist *h = malloc(sizeof(*h));
	hist_init(h);
	hist_add(h, 2.5);
	hist_add(h, 4.5);
	assert_true(fabs(hist_quantile(h, 0.5).value - 2.5) / 2.5 < 0.01);
	assert_true(fabs(hist_quantile(h, 0.99).value - 4.5) / 4.5 < 0.01);
	free(h);
}

static void merge_equals_adding_all(void **state)
{
	(void)state;
	struct hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *all = malloc(sizeof(*all));
	hist_init(a);
	hist_init(b);
	hist_init(all);
	for (int i = 1; i <= 1000; i++) {
		double x = i * 0.01;
		hist_add(i % 3 ? a : b, x);
		hist_add(all, x);
	}
	hist_merge(a, b);
	assert_int_equal(a->count, all->count);
	assert_memory_equal(a->buckets, all->buckets, sizeof(a->buckets));
	assert_near(hist_quantile(a, 0.5).value, hist_quantile(all, 0.5).value, 0);
	free(a);
	free(b);
	free(all);
}

static void rebin_keeps_every_count(void **state)
{
	(void)state;
	struct hist *h = malloc(sizeof(*h));
	hist_init(h);
	for (int i = 0; i < 500; i++)
		hist_add(h, 0.1 + i * 0.05);
	hist_add(h, 1e-9);
	uint64_t bins[20], total = 0;
	hist_rebin(h, 0.05, 50, bins, 20);
	for (int i = 0; i < 20; i++)
		total += bins[i];
	assert_int_equal(total, 501);
	assert_true(bins[0] >= 1);
	assert_true(hist_bucket_upper(10) > hist_bucket_lower(10));
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantiles_within_one_percent),
		cmocka_unit_test(bad_values_ignored_and_extremes_counted),
		cmocka_unit_test(nearest_rank_on_few_values),
		cmocka_unit_test(merge_equals_adding_all),
		cmocka_unit_test(rebin_keeps_every_count),
	};
	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
