#include "test_util.h"

#include "roastop/timeline.h"

static int setup(void **state)
{
	static struct timeline tl;
	if (timeline_init(&tl, 8) != 0)
		return -1;
	*state = &tl;
	return 0;
}

static int teardown(void **state)
{
	timeline_free(*state);
	return 0;
}

/* (0,2) (10,4) (30,0): trapezoids 30 + 40 = 70 over 30 s */
static void trapezoid_is_exact(void **state)
{
	struct timeline *tl = *state;
	assert_false(timeline_time_avg(tl).valid);
	timeline_push(tl, 0, 2);
	assert_near(timeline_time_avg(tl).value, 2, 0); /* one sample: itself */
	timeline_push(tl, 10, 4);
	timeline_push(tl, 30, 0);
	assert_near(tl->integral, 70, 1e-12);
	assert_near(tl->covered, 30, 1e-12);
	assert_near(timeline_time_avg(tl).value, 70.0 / 30.0, 1e-12);
	assert_near(timeline_mean(tl).value, 2, 1e-12);
	assert_near(timeline_max(tl).value, 4, 0);
	assert_near(timeline_min(tl).value, 0, 0);
}

static void gap_excluded_and_flagged(void **state)
{
	struct timeline *tl = *state;
	timeline_push(tl, 0, 1);
	timeline_push(tl, 10, 1); /* 10 */
	timeline_gap(tl);
	timeline_push(tl, 100, 5);
	timeline_push(tl, 110, 5); /* 50 */
	assert_near(tl->integral, 60, 1e-12);
	assert_near(tl->covered, 20, 1e-12);
	assert_true(tl->pts[2].gap_before);
	assert_false(tl->pts[3].gap_before);
}

static void out_of_order_and_nan_ignored(void **state)
{
	struct timeline *tl = *state;
	assert_true(timeline_push(tl, 5, 1));
	assert_false(timeline_push(tl, 4, 100));
	assert_false(timeline_push(tl, 6, NAN));
	assert_int_equal(tl->n_samples, 1);
}

/* 1,000 samples into 8 buckets: bounded, resolution halved, integral exact. */
static void resolution_halves_integral_stays(void **state)
{
	struct timeline *tl = *state;
	double integral = 0;
	for (int i = 0; i < 1000; i++) {
		double v = i % 7;
		if (i)
			integral += 0.5 * ((i - 1) % 7 + v);
		timeline_push(tl, i, v);
	}
	assert_true(tl->len <= tl->cap);
	assert_true(tl->per_bucket >= 128);
	assert_near(tl->integral, integral, 1e-12);
	uint64_t n = 0;
	for (size_t i = 0; i < tl->len; i++) {
		n += tl->pts[i].n;
		assert_true(tl->pts[i].min <= tl->pts[i].mean && tl->pts[i].mean <= tl->pts[i].max);
	}
	assert_int_equal(n, 1000);
	for (size_t i = 1; i < tl->len; i++)
		assert_true(tl->pts[i].t > tl->pts[i - 1].t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(trapezoid_is_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(gap_excluded_and_flagged, setup, teardown),
		cmocka_unit_test_setup_teardown(out_of_order_and_nan_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(resolution_halves_integral_stays, setup, teardown),
	};
	return cmocka_run_group_tests_name("timeline", tests, NULL, NULL);
}
