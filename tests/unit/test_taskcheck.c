#include "test_util.h"

#include <string.h>

#include "roastop/taskcheck.h"

static const char *const BODY =
	"# TYPE dask_scheduler_prefix_state_totals counter\n"
	"dask_scheduler_prefix_state_totals_total{state=\"memory\",task_prefix_name=\"inc\"} 30.0\n"
	"dask_scheduler_prefix_state_totals_total{state=\"waiting\",task_prefix_name=\"inc\"} 31.0\n"
	"dask_scheduler_prefix_state_totals_total{state=\"memory\",task_prefix_name=\"sum\"} 2.0\n"
	"dask_scheduler_prefix_state_totals_total{state=\"erred\",task_prefix_name=\"boom\"} 3.0\n"
	"dask_scheduler_workers{state=\"idle\"} 2.0\n";

static void total_sums_memory_over_prefixes(void **state)
{
	(void)state;
	struct prom_stats st;
	double t = -1;
	assert_true(taskcheck_total(BODY, strlen(BODY), &t, &st));
	assert_near(t, 32, 0);
}

/* No family (no prometheus_client, an old Dask) or a value that is not a
 * count: nothing to check against, never a total of 0. */
static void total_refuses_what_is_not_a_count(void **state)
{
	(void)state;
	struct prom_stats st;
	double t = -1;
	const char *none = "dask_scheduler_workers{state=\"idle\"} 2.0\n";
	assert_false(taskcheck_total(none, strlen(none), &t, &st));
	const char *neg = "dask_scheduler_prefix_state_totals_total{state=\"memory\"} -1\n";
	assert_false(taskcheck_total(neg, strlen(neg), &t, &st));
	const char *nan = "dask_scheduler_prefix_state_totals_total{state=\"memory\"} NaN\n";
	assert_false(taskcheck_total(nan, strlen(nan), &t, &st));
	assert_false(taskcheck_total("", 0, &t, &st));
	assert_near(t, -1, 0);
}

/* A scheduler that has run no task yet declares the family without a
 * sample: 0 tasks, a base to count from. */
static void total_of_a_declared_family_without_samples_is_0(void **state)
{
	(void)state;
	struct prom_stats st;
	double t = -1;
	const char *empty = "# HELP dask_scheduler_prefix_state_totals_total Accumulated count\n"
			    "# TYPE dask_scheduler_prefix_state_totals_total counter\n"
			    "dask_scheduler_workers{state=\"idle\"} 2.0\n";
	assert_true(taskcheck_total(empty, strlen(empty), &t, &st));
	assert_near(t, 0, 0);
}

/* A stream that keeps up, one poll late: the tasks the scheduler counted at
 * the check before have been brought by this one. */
static void keeping_up_is_never_behind(void **state)
{
	(void)state;
	struct taskcheck c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(taskcheck_observe(&c, 100, 7), 0); /* the base */
	assert_int_equal(taskcheck_observe(&c, 130, 7), 0); /* 30 done, on their way */
	assert_int_equal(taskcheck_observe(&c, 160, 37), 0);
	assert_int_equal(taskcheck_observe(&c, 160, 67), 0);
	assert_int_equal(taskcheck_observe(&c, 160, 70), 0); /* more than counted: transfers */
	assert_int_equal(taskcheck_missed(&c), 0);
}

/* The plugin replaced: the scheduler counts, the stream brings nothing. */
static void a_silent_stream_is_behind(void **state)
{
	(void)state;
	struct taskcheck c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(taskcheck_observe(&c, 0, 0), 0);
	assert_int_equal(taskcheck_observe(&c, 30, 10), 0);
	assert_int_equal(taskcheck_observe(&c, 60, 10), 20); /* 30 due, 10 brought */
	assert_int_equal(taskcheck_missed(&c), 20);
	assert_false(c.conn.based); /* dropped: the connection's next check begins again */
	taskcheck_reset(&c); /* reconnected */
	assert_int_equal(taskcheck_observe(&c, 90, 10), 0);
	/* the session counts on across the reconnect: 60 due, 10 brought */
	assert_int_equal(taskcheck_missed(&c), 50);
	assert_int_equal(taskcheck_observe(&c, 95, 15), 0); /* the new plugin brings */
	assert_int_equal(taskcheck_missed(&c), 75); /* 90 due, 15 brought */
	assert_int_equal(taskcheck_observe(&c, 95, 15), 0);
	assert_int_equal(taskcheck_missed(&c), 80); /* 95 due, 15 brought */
	assert_int_equal(taskcheck_observe(&c, 95, 20), 0);
	assert_int_equal(taskcheck_missed(&c), 80); /* the largest shortfall, kept */
}

/* A new scheduler counts from 0: a base again, no alarm. */
static void a_count_that_falls_begins_again(void **state)
{
	(void)state;
	struct taskcheck c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(taskcheck_observe(&c, 500, 40), 0);
	assert_int_equal(taskcheck_observe(&c, 520, 50), 0);
	assert_int_equal(taskcheck_observe(&c, 520, 50), 10);
	assert_int_equal(taskcheck_missed(&c), 10);
	assert_int_equal(taskcheck_observe(&c, 3, 50), 0);
	assert_int_equal(taskcheck_observe(&c, 10, 50), 0);
	assert_int_equal(taskcheck_observe(&c, 10, 57), 0);
	assert_int_equal(taskcheck_missed(&c), 10); /* the old scheduler's, kept */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(total_sums_memory_over_prefixes),
		cmocka_unit_test(total_refuses_what_is_not_a_count),
		cmocka_unit_test(total_of_a_declared_family_without_samples_is_0),
		cmocka_unit_test(keeping_up_is_never_behind),
		cmocka_unit_test(a_silent_stream_is_behind),
		cmocka_unit_test(a_count_that_falls_begins_again),
	};
	return cmocka_run_group_tests_name("taskcheck", tests, NULL, NULL);
}
