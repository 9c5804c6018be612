/* The ring of a run's latest failed chunks: the latest first, the oldest
 * overwritten, a long path keeping its file name. */
#include "test_util.h"

#include <stdio.h>

#include "roastop/failed.h"

static struct ev_chunk failed_chunk(const char *file, const char *error, double start)
{
	struct ev_chunk c;
	memset(&c, 0, sizeof(c));
	c.file = file;
	c.error = error;
	c.dataset = "DY";
	c.worker = "w1";
	c.entry_start = optnum_of(start);
	c.entry_stop = optnum_of(start + 100);
	c.duration = optnum_of(2.5);
	return c;
}

static void empty_ring_has_none(void **state)
{
	(void)state;
	struct failed f;
	memset(&f, 0, sizeof(f));
	assert_null(failed_get(&f, 0));
}

static void latest_first_and_oldest_overwritten(void **state)
{
	(void)state;
	struct failed f;
	memset(&f, 0, sizeof(f));
	char name[32];
	for (unsigned i = 0; i < FAILED_KEPT + 5; i++) {
		snprintf(name, sizeof(name), "f%u.root", i);
		struct ev_chunk c = failed_chunk(name, "OSError", i * 100.0);
		failed_add(&f, 10.0 + i, &c);
	}
	assert_int_equal(f.n, FAILED_KEPT + 5);
	const struct failed_chunk *latest = failed_get(&f, 0);
	snprintf(name, sizeof(name), "f%u.root", FAILED_KEPT + 4);
	assert_string_equal(latest->file, name);
	assert_float_equal(latest->t, 10.0 + FAILED_KEPT + 4, 0);
	assert_float_equal(latest->entry_start.value, (FAILED_KEPT + 4) * 100.0, 0);
	assert_string_equal(latest->error, "OSError");
	const struct failed_chunk *oldest = failed_get(&f, FAILED_KEPT - 1);
	assert_string_equal(oldest->file, "f5.root"); /* f0..f4 overwritten */
	assert_null(failed_get(&f, FAILED_KEPT));
}

static void long_path_keeps_the_file_name(void **state)
{
	(void)state;
	struct failed f;
	memset(&f, 0, sizeof(f));
	const char *tail = "/nano_0042_\xc3\xa9.root";
	size_t tl = strlen(tail);
	char path[400];
	memset(path, 'd', sizeof(path));
	memcpy(path + sizeof(path) - 1 - tl, tail, tl + 1); /* with its NUL */
	struct ev_chunk c = failed_chunk(path, NULL, 0);
	failed_add(&f, 1, &c);
	const struct failed_chunk *e = failed_get(&f, 0);
	assert_int_equal(strlen(e->file), FAILED_FILE_LEN - 1);
	assert_string_equal(e->file + strlen(e->file) - tl, tail); /* the end is kept */
	assert_string_equal(e->error, ""); /* none sent: written as null */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_ring_has_none),
		cmocka_unit_test(latest_first_and_oldest_overwritten),
		cmocka_unit_test(long_path_keeps_the_file_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
