/* The range table (include/roastop/range.h): its edges, and that the
 * recording decoder's field tables bound every scheduler quantity by it
 * and by nothing else, so live and replay cannot drift apart again. */
#include "test_util.h"

#include "roastop/event_field.h"
#include "roastop/range.h"

static void edges(void **state)
{
	(void)state;
	for (int q = 0; q < RANGE__COUNT; q++) {
		const struct range *r = range_of((enum range_qty)q);
		assert_non_null(r);
		assert_non_null(r->name);
		assert_non_null(r->unit);
		assert_true(r->lo == 0 && r->hi > 0 && r->hi < 2e18);
		assert_true(range_ok((enum range_qty)q, r->lo));
		assert_true(range_ok((enum range_qty)q, r->hi));
		assert_false(range_ok((enum range_qty)q, nextafter(r->hi, INFINITY)));
		assert_false(range_ok((enum range_qty)q, -0.5));
		assert_false(range_ok((enum range_qty)q, NAN));
		assert_false(range_ok((enum range_qty)q, INFINITY));
		assert_true(range_ok((enum range_qty)q, 1.5) == !r->whole);
	}
	assert_null(range_of(RANGE__COUNT));
	assert_false(range_ok(RANGE__COUNT, 1));
	/* worker_count is a uint32 in the event: the cast after the check is exact */
	assert_true(RANGE_WORKERS_MAX < 4294967296.0);
}

static const struct {
	const char *name;
	enum range_qty q;
} WORKER_FIELDS[] = {
	{ "cpu_percent", RANGE_CPU_PERCENT }, { "executing", RANGE_TASKS },
	{ "managed_bytes", RANGE_BYTES },     { "memory_bytes", RANGE_BYTES },
	{ "memory_limit", RANGE_BYTES },      { "nthreads", RANGE_NTHREADS },
	{ "processing", RANGE_TASKS },	      { "spilled_bytes", RANGE_BYTES },
	{ "pid", RANGE_PID },		      { "occupancy", RANGE_OCCUPANCY },
}, SAMPLE_FIELDS[] = {
	{ "erred_left_out", RANGE_TASKS },
	{ "erred_since", RANGE_EPOCH },
	{ "prefixes_left_out", RANGE_TASKS },
	{ "running_left_out", RANGE_TASKS },
	{ "tasks_done", RANGE_TASKS },
	{ "tasks_done_cumulative", RANGE_TASKS },
	{ "tasks_processing", RANGE_TASKS },
	{ "tasks_total", RANGE_TASKS },
	{ "tasks_total_cumulative", RANGE_TASKS },
	{ "total_threads", RANGE_TOTAL_THREADS },
	{ "worker_count", RANGE_WORKERS },
};

/* Every numeric field of t is in want, with want's bounds, and no more. */
static void table_is(const struct field_table *t, const void *want_v, size_t n_want)
{
	const struct {
		const char *name;
		enum range_qty q;
	} *want = want_v;
	size_t numeric = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct event_field *f = &t->f[i];
		if (f->kind != FK_NUM && f->kind != FK_INT && f->kind != FK_U32)
			continue;
		numeric++;
		size_t k = 0;
		while (k < n_want && strcmp(want[k].name, f->name) != 0)
			k++;
		if (k == n_want)
			fail_msg("%s: a number the range table does not bound", f->name);
		const struct range *r = range_of(want[k].q);
		if (f->lo != r->lo || f->hi != r->hi)
			fail_msg("%s: [%g, %g], the table says [%g, %g]", f->name, f->lo, f->hi, r->lo,
				 r->hi);
		if ((f->kind == FK_INT || f->kind == FK_U32) != r->whole)
			fail_msg("%s: an integer field is exactly a whole quantity", f->name);
	}
	assert_int_equal(numeric, n_want);
}

static void field_tables_use_it(void **state)
{
	(void)state;
	table_is(event_field_workers(), WORKER_FIELDS, ROASTOP_ARRAY_LEN(WORKER_FIELDS));
	table_is(event_field_table(EV_SAMPLE), SAMPLE_FIELDS, ROASTOP_ARRAY_LEN(SAMPLE_FIELDS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(edges),
		cmocka_unit_test(field_tables_use_it),
	};
	return cmocka_run_group_tests_name("range", tests, NULL, NULL);
}
