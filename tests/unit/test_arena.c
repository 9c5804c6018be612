#include "test_util.h"

#include <string.h>

#include "roastop/arena.h"

static void alignment_copies_and_reuse(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 0);
	char *s = arena_strdup(&a, "hello");
	assert_string_equal(s, "hello");
	for (int i = 0; i < 100; i++) {
		void *p = arena_alloc(&a, (size_t)i * 13 + 1);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
	}
	void *big = arena_alloc(&a, 100000);
	assert_non_null(big);
	memset(big, 1, 100000);
	arena_reset(&a);
	assert_int_equal(a.total, 0);
	void *first = arena_alloc(&a, 8);
	assert_non_null(first);
	arena_free(&a);
}

static void limit_is_enforced(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 1024);
	assert_non_null(arena_alloc(&a, 1000));
	assert_null(arena_alloc(&a, 100));
	assert_null(arena_alloc(&a, SIZE_MAX - 4)); /* no overflow */
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alignment_copies_and_reuse),
		cmocka_unit_test(limit_is_enforced),
	};
	return cmocka_run_group_tests_name("arena", tests, NULL, NULL);
}
