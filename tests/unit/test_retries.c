/* Retries told apart from failures (retries.h, docs/metrics.md "Retries"),
 * through run_apply as the sources deliver chunks: a chunk is its file and
 * entry range; failed while its latest attempt is. */
#include "test_util.h"

#include <stdio.h>

#include "roastop/run.h"

static struct event attempt(double t, const char *file, double start, const char *error)
{
	struct event ev = test_event(EV_CHUNK, t);
	ev.u.chunk.duration = optnum_of(1.0);
	ev.u.chunk.num_events = optnum_of(100);
	ev.u.chunk.dataset = "DY";
	ev.u.chunk.file = file;
	ev.u.chunk.worker = "w0";
	ev.u.chunk.entry_start = optnum_of(start);
	ev.u.chunk.entry_stop = optnum_of(start + 100);
	ev.u.chunk.error = error;
	return ev;
}

static int setup(void **state)
{
	static struct run r;
	if (run_init(&r) != 0)
		return -1;
	*state = &r;
	return 0;
}

static int teardown(void **state)
{
	run_destroy(*state);
	return 0;
}

static uint64_t count_of_type(const struct strmap *m, const char *type)
{
	const uint64_t *n = strmap_get(m, type);
	return n ? *n : 0;
}

static void apply(struct run *r, struct event ev)
{
	assert_int_equal(run_apply(r, &ev), 0);
}

static void failure_then_success_is_a_retry_not_a_failure(void **state)
{
	struct run *r = *state;
	apply(r, attempt(10, "a.root", 0, "OSError"));
	assert_int_equal(r->n_chunks, 1); /* live: failed until a retry comes */
	assert_int_equal(r->n_failed, 1);
	apply(r, attempt(11, "a.root", 0, NULL));
	apply(r, attempt(12, "a.root", 100, NULL)); /* another chunk of the file */
	assert_int_equal(r->n_chunks, 2);
	assert_int_equal(r->n_failed, 0);
	assert_int_equal(r->chunk_events.sum, 200); /* every event, once */
	assert_int_equal(r->retries.count, 1);
	assert_int_equal(r->retries.recovered, 1);
	assert_int_equal(count_of_type(&r->retries.by_type, "OSError"), 1);
	assert_int_equal(count_of_type(&r->errors, "OSError"), 0);
	const struct dataset_agg *d = strmap_get(&r->datasets, "DY");
	assert_int_equal(d->n_failed, 0);
	assert_int_equal(d->n_chunks, 2);
	assert_int_equal(r->failed.n, 1); /* the attempt is kept, marked */
	assert_true(failed_get(&r->failed, 0)->retried);
	bool logged = false;
	for (size_t i = 0; run_log_get(r, i); i++)
		logged = logged || strstr(run_log_get(r, i)->text, "chunk retried: succeeded after "
								   "OSError on w0 (a.root)");
	assert_true(logged);
}

/* coffea's DaskExecutor, retries=3: four attempts, each raising. */
static void chunk_whose_last_attempt_failed_is_failed_once(void **state)
{
	struct run *r = *state;
	for (int i = 0; i < 4; i++)
		apply(r, attempt(10 + i, "a.root", 0, i == 3 ? "ValueError" : "OSError"));
	assert_int_equal(r->n_chunks, 1);
	assert_int_equal(r->n_failed, 1);
	assert_int_equal(r->retries.count, 3);
	assert_int_equal(r->retries.recovered, 0);
	assert_int_equal(count_of_type(&r->retries.by_type, "OSError"), 3);
	assert_int_equal(count_of_type(&r->errors, "OSError"), 0);
	assert_int_equal(count_of_type(&r->errors, "ValueError"), 1); /* the latest attempt's */
	assert_false(failed_get(&r->failed, 0)->retried);
	const struct dataset_agg *d = strmap_get(&r->datasets, "DY");
	assert_non_null(d);
	assert_int_equal(d->n_failed, 1);
}

static void other_chunks_are_not_retries(void **state)
{
	struct run *r = *state;
	apply(r, attempt(10, "a.root", 0, "OSError"));
	apply(r, attempt(11, "a.root", 50, NULL)); /* another range */
	apply(r, attempt(12, "b.root", 0, NULL)); /* another file */
	apply(r, attempt(13, "a.root", 0, NULL)); /* the retry */
	apply(r, attempt(14, "a.root", 0, NULL)); /* the same chunk again: a chunk */
	assert_int_equal(r->n_chunks, 4);
	assert_int_equal(r->n_failed, 0);
	assert_int_equal(r->retries.count, 1);
}

static void failure_without_identity_stays_failed_and_counted(void **state)
{
	struct run *r = *state;
	struct event ev = attempt(10, NULL, 0, "OSError");
	apply(r, ev);
	ev = attempt(11, "a.root", 0, "OSError");
	ev.u.chunk.entry_stop = optnum_none();
	apply(r, ev);
	apply(r, attempt(12, "a.root", 0, NULL));
	assert_int_equal(r->n_failed, 2);
	assert_int_equal(r->n_chunks, 3);
	assert_int_equal(r->retries.untracked, 2);
	assert_int_equal(r->retries.count, 0);
}

static void table_full_counts_overflow_and_keeps_failures(void **state)
{
	struct run *r = *state;
	char name[32];
	for (unsigned i = 0; i < RETRIES_MAX_CHUNKS + 3; i++) {
		snprintf(name, sizeof(name), "f%u.root", i);
		apply(r, attempt(10, name, 0, "OSError"));
	}
	assert_int_equal(r->retries.chunks.count, RETRIES_MAX_CHUNKS);
	assert_int_equal(r->retries.overflow, 3);
	bool logged = false; /* once */
	for (size_t i = 0; run_log_get(r, i); i++)
		logged = logged || strstr(run_log_get(r, i)->text, "retry table full at 16384");
	assert_true(logged);
	apply(r, attempt(11, name, 0, NULL)); /* the last one was not kept: a new chunk */
	assert_int_equal(r->n_failed, RETRIES_MAX_CHUNKS + 3);
	apply(r, attempt(11, "f0.root", 0, NULL)); /* a kept one recovers */
	assert_int_equal(r->n_failed, RETRIES_MAX_CHUNKS + 2);
	assert_int_equal(r->retries.recovered, 1);
}

static void pool_bounds_the_table(void **state)
{
	struct run *r = *state;
	struct strmap_pool pool = { .used = 0, .cap = 4096 };
	run_set_pool(r, &pool);
	char name[32];
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%u.root", i);
		apply(r, attempt(10, name, 0, "OSError"));
	}
	assert_true(pool.used <= pool.cap);
	assert_true(r->retries.overflow > 0);
	assert_int_equal(r->retries.chunks.count + r->retries.overflow, 1000);
	run_destroy(r);
	assert_int_equal(pool.used, 0);
	run_init(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(failure_then_success_is_a_retry_not_a_failure, setup,
						teardown),
		cmocka_unit_test_setup_teardown(chunk_whose_last_attempt_failed_is_failed_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(other_chunks_are_not_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(failure_without_identity_stays_failed_and_counted,
						setup, teardown),
		cmocka_unit_test_setup_teardown(table_full_counts_overflow_and_keeps_failures, setup,
						teardown),
		cmocka_unit_test_setup_teardown(pool_bounds_the_table, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
