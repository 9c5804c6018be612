#include "test_util.h"

#include "roastop/stats.h"

static void empty_is_invalid(void **state)
{
	(void)state;
	struct stats s;
	stats_init(&s);
	assert_int_equal(s.n, 0);
	assert_false(stats_mean(&s).valid);
	assert_false(stats_min(&s).valid);
	assert_false(stats_max(&s).valid);
	assert_false(stats_std(&s).valid);
}

/* 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations 9+1+1+1+0+0+4+16 = 32,
 * sample variance 32/7 */
static void welford_matches_hand_computation(void **state)
{
	(void)state;
	const double xs[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct stats s;
	stats_init(&s);
	for (size_t i = 0; i < 8; i++)
		stats_add(&s, xs[i]);
	assert_int_equal(s.n, 8);
	assert_near(stats_mean(&s).value, 5.0, 1e-12);
	assert_near(s.m2, 32.0, 1e-12);
	assert_near(stats_std(&s).value, sqrt(32.0 / 7.0), 1e-12);
	assert_true(stats_min(&s).valid && stats_min(&s).value == 2);
	assert_true(stats_max(&s).valid && stats_max(&s).value == 9);
	assert_true(s.sum == 40);
}

/* 1, 3: mean 2, sample variance (1 + 1) / 1 = 2 (population would be 1) */
static void std_uses_n_minus_one(void **state)
{
	(void)state;
	struct stats s;
	stats_init(&s);
	stats_add(&s, 1);
	stats_add(&s, 3);
	assert_near(stats_std(&s).value, sqrt(2.0), 1e-12);
}

static void single_value_std_is_zero(void **state)
{
	(void)state;
	struct stats s;
	stats_init(&s);
	stats_add(&s, -3.5);
	assert_true(stats_std(&s).valid);
	assert_true(stats_std(&s).value == 0.0);
	assert_true(stats_mean(&s).value == -3.5);
	assert_true(stats_min(&s).value == -3.5);
	assert_true(stats_max(&s).value == -3.5);
}

/* A large common offset: the naive sum-of-squares formula loses every
 * digit here, Welford keeps them. 1e9 + {4, 7, 13, 16}: mean 1e9 + 10,
 * squared deviations 36 + 9 + 9 + 36 = 90, sample variance 30. */
static void stable_with_large_offset(void **state)
{
	(void)state;
	struct stats s;
	stats_init(&s);
	const double d[] = { 4, 7, 13, 16 };
	for (size_t i = 0; i < 4; i++)
		stats_add(&s, 1e9 + d[i]);
	assert_near(stats_mean(&s).value, 1e9 + 10, 1e-15);
	assert_near(stats_std(&s).value, sqrt(30.0), 1e-9);
}

static void non_finite_ignored(void **state)
{
	(void)state;
	struct stats s;
	stats_init(&s);
	stats_add(&s, 1);
	stats_add(&s, NAN);
	stats_add(&s, INFINITY);
	stats_add(&s, -INFINITY);
	stats_add(&s, 3);
	assert_int_equal(s.n, 2);
	assert_near(stats_mean(&s).value, 2, 1e-15);
	assert_true(stats_max(&s).value == 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_is_invalid),
		cmocka_unit_test(welford_matches_hand_computation),
		cmocka_unit_test(std_uses_n_minus_one),
		cmocka_unit_test(single_value_std_is_zero),
		cmocka_unit_test(stable_with_large_offset),
		cmocka_unit_test(non_finite_ignored),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
