#include "test_util.h"

#include <float.h>
#include <time.h>

#include "roastop/timeline.h"

static struct timeline tl8;

static int setup(void **state)
{
	if (timeline_init(&tl8, 8) != 0)
		return -1;
	*state = &tl8;
	return 0;
}

static int teardown(void **state)
{
	timeline_free(*state);
	return 0;
}

static void empty_is_invalid(void **state)
{
	struct timeline *tl = *state;
	assert_false(timeline_time_avg(tl).valid);
	assert_false(timeline_max(tl).valid);
	assert_int_equal(tl->len, 0);
	assert_int_equal(tl->per_bucket, 1);
}

/* (0,2) (10,4) (30,0): trapezoids 10*(2+4)/2 = 30 and 20*(4+0)/2 = 40,
 * 70 over 30 s; the plain mean is 6/3 = 2. */
static void trapezoid_is_exact(void **state)
{
	struct timeline *tl = *state;
	assert_true(timeline_push(tl, 0, 2));
	assert_true(timeline_time_avg(tl).value == 2); /* one sample: itself */
	assert_true(timeline_push(tl, 10, 4));
	assert_true(timeline_push(tl, 30, 0));
	assert_near(tl->integral, 70, 1e-12);
	assert_near(tl->covered, 30, 1e-12);
	assert_near(timeline_time_avg(tl).value, 70.0 / 30.0, 1e-12);
	assert_near(tl->sum / (double)tl->n_samples, 2, 1e-12);
	assert_true(timeline_max(tl).value == 4);
	assert_int_equal(tl->len, 3);
	assert_true(tl->pts[1].t == 10 && tl->pts[1].mean == 4.0f && tl->pts[1].n == 1);
}

/* (0,1) (10,3) | gap | (100,5) (104,7) (110,7):
 * 10*(1+3)/2 = 20, 4*(5+7)/2 = 24, 6*(7+7)/2 = 42: 86 over 10+4+6 = 20 s,
 * time average 4.3; the 90 s gap counts for neither. Mean 23/5 = 4.6. */
static void gap_excluded_and_flagged(void **state)
{
	struct timeline *tl = *state;
	timeline_gap(tl); /* before any sample: nothing to break */
	timeline_push(tl, 0, 1);
	assert_false(tl->pts[0].gap_before);
	timeline_push(tl, 10, 3);
	timeline_gap(tl);
	timeline_gap(tl); /* twice is once */
	timeline_push(tl, 100, 5);
	timeline_push(tl, 104, 7);
	timeline_push(tl, 110, 7);
	assert_near(tl->integral, 86, 1e-12);
	assert_near(tl->covered, 20, 1e-12);
	assert_near(timeline_time_avg(tl).value, 4.3, 1e-12);
	assert_near(tl->sum / (double)tl->n_samples, 4.6, 1e-12);
	assert_int_equal(tl->len, 5);
	assert_false(tl->pts[1].gap_before);
	assert_true(tl->pts[2].gap_before);
	assert_false(tl->pts[3].gap_before);
	assert_false(tl->pts[4].gap_before);
}

/* No trapezoid at all: two samples at one instant, or samples isolated
 * by a gap. The time average falls back to the plain mean. */
static void no_covered_time_uses_mean(void **state)
{
	struct timeline *tl = *state;
	timeline_push(tl, 5, 2);
	timeline_push(tl, 5, 4); /* equal time is allowed, no width */
	assert_int_equal(tl->n_samples, 2);
	assert_true(tl->covered == 0);
	assert_near(timeline_time_avg(tl).value, 3, 1e-15);
	timeline_gap(tl);
	timeline_push(tl, 50, 9);
	assert_true(tl->covered == 0);
	assert_near(timeline_time_avg(tl).value, 5, 1e-15);
}

static void out_of_order_and_non_finite_ignored(void **state)
{
	struct timeline *tl = *state;
	assert_true(timeline_push(tl, 5, 1));
	assert_true(timeline_push(tl, 6, 3)); /* trapezoid 2 */
	assert_false(timeline_push(tl, 4, 100));
	assert_false(timeline_push(tl, 7, NAN));
	assert_false(timeline_push(tl, 7, INFINITY));
	assert_false(timeline_push(tl, NAN, 1));
	timeline_gap(tl);
	assert_false(timeline_push(tl, 5.5, 1)); /* still earlier after a gap */
	assert_int_equal(tl->n_samples, 2);
	assert_int_equal(tl->len, 2);
	assert_near(tl->integral, 2, 1e-15);
	assert_true(timeline_max(tl).value == 3);
	assert_true(tl->t_last == 6);
}

/* v = t = 0 .. 999 into 8 points: per_bucket becomes the least power of
 * two with 8 * p >= 1000, 128. The last compaction (at sample 513) left
 * 4 points of 128; samples 512..999 filled 3 more and 104 in the last.
 * Integral of v = t over [0, 999] is 999^2 / 2 = 499000.5. */
static void resolution_halves_integral_stays(void **state)
{
	struct timeline *tl = *state;
	for (int i = 0; i < 1000; i++)
		assert_true(timeline_push(tl, i, i));
	assert_int_equal(tl->per_bucket, 128);
	assert_int_equal(tl->len, 8);
	assert_true(tl->len <= tl->cap);
	assert_near(tl->integral, 499000.5, 1e-15);
	assert_near(tl->covered, 999, 1e-15);
	for (size_t j = 0; j < 7; j++) {
		assert_int_equal(tl->pts[j].n, 128);
		assert_true(tl->pts[j].t == 128.0 * j);
		assert_true(tl->pts[j].min == 128.0f * j);
		assert_true(tl->pts[j].max == 128.0f * j + 127);
		assert_near(tl->pts[j].mean, 128.0 * j + 63.5, 1e-6);
		assert_false(tl->pts[j].gap_before);
	}
	assert_int_equal(tl->pts[7].n, 104);
	assert_true(tl->pts[7].t == 896);
	assert_near(tl->pts[7].mean, 896 + 51.5, 1e-6);
}

/* cap 4. (0,0) (1,1) (2,2) | (10,10) (11,11) | (20,20) (21,21) (22,22):
 * sample 11 finds 4 points of 1 and compacts to {0,1}, {2,10 gap}, then
 * starts a point; after the second gap 20 starts a point and 21 joins it
 * (per_bucket 2); 22 compacts to {0,1,2,10 gap}, {11,20,21 gap}.
 * Integral 0.5 + 1.5 + 10.5 + 20.5 + 21.5 = 54.5 over 5 s. */
static void gap_inside_a_merged_pair_stays_visible(void **state)
{
	(void)state;
	struct timeline tl;
	assert_int_equal(timeline_init(&tl, 4), 0);
	const double ts[] = { 0, 1, 2, 10, 11, 20, 21, 22 };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(ts); i++) {
		if (ts[i] == 10 || ts[i] == 20)
			timeline_gap(&tl);
		assert_true(timeline_push(&tl, ts[i], ts[i]));
		if (ts[i] == 21) { /* the pending partial bucket took it */
			assert_int_equal(tl.len, 4);
			assert_true(tl.pts[3].gap_before && tl.pts[3].n == 2);
		}
	}
	assert_int_equal(tl.per_bucket, 4);
	assert_int_equal(tl.len, 3);
	assert_true(tl.pts[0].t == 0 && tl.pts[0].n == 4 && tl.pts[0].gap_before);
	assert_true(tl.pts[0].min == 0 && tl.pts[0].max == 10);
	assert_near(tl.pts[0].mean, 3.25, 1e-6);
	assert_true(tl.pts[1].t == 11 && tl.pts[1].n == 3 && tl.pts[1].gap_before);
	assert_near(tl.pts[1].mean, 52.0 / 3.0, 1e-6);
	assert_true(tl.pts[2].t == 22 && tl.pts[2].n == 1 && !tl.pts[2].gap_before);
	assert_near(tl.integral, 54.5, 1e-15);
	assert_near(tl.covered, 5, 1e-15);
	assert_near(timeline_time_avg(&tl).value, 10.9, 1e-12);
	timeline_free(&tl);
}

static void capacity_rounded_and_checked(void **state)
{
	(void)state;
	struct timeline tl;
	assert_int_equal(timeline_init(&tl, 0), 0);
	assert_int_equal(tl.cap, 4);
	timeline_free(&tl);
	assert_int_equal(timeline_init(&tl, 7), 0);
	assert_int_equal(tl.cap, 8);
	timeline_free(&tl);
	assert_int_equal(timeline_init(&tl, SIZE_MAX), -1);
	assert_false(timeline_push(&tl, 1, 1));
	timeline_free(&tl);
}

/* (0,10) (10,10) | restart | (20,30): the trapezoid from the last sample
 * before the restart counts, 10 * (10 + 30) / 2 = 200 over 10 s; the
 * sample count, sum, min and max start again with 30. Points stay. */
static void restart_keeps_points_and_left_edge(void **state)
{
	struct timeline *tl = *state;
	timeline_push(tl, 0, 10);
	timeline_push(tl, 10, 10);
	assert_near(tl->integral, 100, 1e-15);
	timeline_restart_totals(tl, -INFINITY);
	assert_false(timeline_time_avg(tl).valid);
	assert_false(timeline_max(tl).valid);
	assert_false(timeline_push(tl, 5, 1)); /* still ordered after a restart */
	assert_true(timeline_push(tl, 20, 30));
	assert_int_equal(tl->n_samples, 1);
	assert_near(tl->integral, 200, 1e-15);
	assert_near(tl->covered, 10, 1e-15);
	assert_near(timeline_time_avg(tl).value, 20, 1e-15);
	assert_true(timeline_max(tl).value == 30);
	assert_int_equal(tl->len, 3);
	timeline_restart_totals(tl, -INFINITY);
	timeline_gap(tl); /* a gap right after a restart still breaks the line */
	timeline_push(tl, 30, 1);
	assert_true(tl->pts[3].gap_before);
	assert_true(tl->covered == 0);
}

/* (0,2) (10,2) | freeze | (20,100) (30,100) | thaw | (40,4): frozen samples
 * are drawn but not counted; after the thaw the trapezoid starts at the
 * last frozen sample: 20 + 10 * (100 + 4) / 2 = 540 over 20 s. */
static void frozen_totals_still_draw(void **state)
{
	struct timeline *tl = *state;
	timeline_push(tl, 0, 2);
	timeline_push(tl, 10, 2);
	timeline_freeze(tl, tl->t_last);
	assert_true(timeline_push(tl, 20, 100));
	assert_true(timeline_push(tl, 30, 100));
	assert_false(timeline_push(tl, 25, 1));
	assert_int_equal(tl->len, 4);
	assert_true(tl->pts[3].max == 100);
	assert_int_equal(tl->n_samples, 2);
	assert_near(tl->integral, 20, 1e-15);
	assert_true(timeline_max(tl).value == 2);
	timeline_thaw(tl);
	timeline_push(tl, 40, 4);
	assert_int_equal(tl->n_samples, 3);
	assert_near(tl->integral, 540, 1e-15);
	assert_near(tl->covered, 20, 1e-15);
	assert_true(timeline_max(tl).value == 4);
}

/* A finite value past float range saturates in the points; the exact
 * accumulators keep the double. */
/* A late sample (run.c's time regression): min, max and mean take it, even
 * frozen; points, trapezoids and the latest value do not. */
static void unordered_samples_count_in_totals_only(void **state)
{
	struct timeline *tl = *state;
	timeline_push(tl, 10, 2);
	timeline_push(tl, 20, 4);
	timeline_freeze(tl, tl->t_last);
	timeline_add_unordered(tl, 9);
	timeline_add_unordered(tl, 1);
	timeline_add_unordered(tl, NAN);
	assert_true(timeline_max(tl).value == 9);
	assert_true(tl->sum == 16); /* 2 + 4 + 9 + 1 */
	assert_true(timeline_time_avg(tl).value == 4); /* the mean, not the one trapezoid */
	assert_int_equal(tl->len, 2);
	assert_true(tl->v_last == 4 && tl->t_last == 20);
}

static void huge_values_saturate_points(void **state)
{
	struct timeline *tl = *state;
	timeline_push(tl, 0, 1e300);
	timeline_push(tl, 1, -1e300);
	assert_true(tl->pts[0].max == FLT_MAX);
	assert_true(tl->pts[1].min == -FLT_MAX);
	assert_true(timeline_max(tl).value == 1e300);
	assert_near(tl->integral, 0, 0);
}

/* 10 million samples into 2,048 points, t = i / 2, v = i mod 100:
 * sum over steps of (v[i-1] + v[i]) / 2 * 0.5 = (2 * 4.95e8 - 0 - 99) / 4
 * = 247499975.25 over 4999999.5 s. per_bucket: least power of two with
 * 2048 p >= 1e7, 8192. The time bound only catches a non-amortised
 * implementation (minutes), not a slow machine. */
static void ten_million_pushes(void **state)
{
	(void)state;
	struct timeline tl;
	assert_int_equal(timeline_init(&tl, 2048), 0);
	clock_t c0 = clock();
	for (uint32_t i = 0; i < 10000000; i++)
		timeline_push(&tl, i * 0.5, i % 100);
	double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
	assert_true(cpu < 20);
	assert_int_equal(tl.n_samples, 10000000);
	assert_true(tl.len <= 2048 && tl.len > 1024);
	assert_int_equal(tl.per_bucket, 8192);
	assert_near(tl.integral, 247499975.25, 1e-10);
	assert_near(tl.covered, 4999999.5, 1e-12);
	uint64_t n = 0;
	for (size_t i = 0; i < tl.len; i++) {
		n += tl.pts[i].n;
		assert_true(tl.pts[i].min <= tl.pts[i].mean && tl.pts[i].mean <= tl.pts[i].max);
		if (i)
			assert_true(tl.pts[i].t > tl.pts[i - 1].t);
	}
	assert_int_equal(n, 10000000);
	assert_near(tl.sum / (double)tl.n_samples, 49.5, 1e-12);
	timeline_free(&tl);
}

#define WITH_TL(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		WITH_TL(empty_is_invalid),
		WITH_TL(trapezoid_is_exact),
		WITH_TL(gap_excluded_and_flagged),
		WITH_TL(no_covered_time_uses_mean),
		WITH_TL(out_of_order_and_non_finite_ignored),
		WITH_TL(resolution_halves_integral_stays),
		cmocka_unit_test(gap_inside_a_merged_pair_stays_visible),
		cmocka_unit_test(capacity_rounded_and_checked),
		WITH_TL(restart_keeps_points_and_left_edge),
		WITH_TL(frozen_totals_still_draw),
		WITH_TL(unordered_samples_count_in_totals_only),
		WITH_TL(huge_values_saturate_points),
		cmocka_unit_test(ten_million_pushes),
	};
	return cmocka_run_group_tests_name("timeline", tests, NULL, NULL);
}
