#include "test_util.h"

#include "roastop/stats.h"

static void empty_is_invalid(void **state)
{
	(void)state;
	struct stats s;
	stats_init(&s);
	assert_false(stats_mean(&s).valid);
	assert_false(stats_min(&s).valid);
	assert_false(stats_std(&s).valid);
}

/* 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7 */
static void welford_matches_hand_computation(void **state)
{
	(void)state;
	const double xs[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct stats s;
	stats_init(&s);
	for (size_t i = 0; i < 8; i++)
		stats_add(&s, xs[i]);
	assert_near(stats_mean(&s).value, 5.0, 1e-12);
	assert_near(stats_std(&s).value, sqrt(32.0 / 7.0), 1e-12);
	assert_near(stats_min(&s).value, 2, 0);
	assert_near(stats_max(&s).value, 9, 0);
	assert_near(s.sum, 40, 0);
}

static void single_value_std_is_zero(void **state)
{
	(void)state;
	struct stats s;
	stats_init(&s);
	stats_add(&s, 3.5);
	assert_true(stats_std(&s).valid);
	assert_near(stats_std(&s).value, 0.0, 0);
}

static void merge_equals_adding_all(void **state)
{
	(void)state;
	struct stats a, b, all;
	stats_init(&a);
	stats_init(&b);
	stats_init(&all);
	for (int i = 0; i < 100; i++) {
		double x = sin(i) * 100 + i;
		stats_add(i < 37 ? &a : &b, x);
		stats_add(&all, x);
	}
	stats_merge(&a, &b);
	assert_int_equal(a.n, all.n);
	assert_near(stats_mean(&a).value, stats_mean(&all).value, 1e-12);
	assert_near(stats_std(&a).value, stats_std(&all).value, 1e-12);
	assert_near(a.min, all.min, 0);
	assert_near(a.max, all.max, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_is_invalid),
		cmocka_unit_test(welford_matches_hand_computation),
		cmocka_unit_test(single_value_std_is_zero),
		cmocka_unit_test(merge_equals_adding_all),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
