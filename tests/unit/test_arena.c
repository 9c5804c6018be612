#include "test_util.h"

#include <string.h>

#include "roastop/arena.h"

static void alignment_of_every_size(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 0);
	for (size_t i = 0; i <= 2000; i++) { /* small and large paths */
		unsigned char *p = arena_alloc(&a, i);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		memset(p, 0xAB, i);
	}
	arena_free(&a);
}

/* Pointers stay valid and disjoint across many blocks: each allocation
 * keeps the byte pattern written into it. */
static void allocations_do_not_overlap(void **state)
{
	(void)state;
	enum { N = 2000 };
	static unsigned char *ps[N];
	struct arena a;
	arena_init(&a, 0);
	for (size_t i = 0; i < N; i++) {
		size_t n = 1 + i % 300;
		ps[i] = arena_alloc(&a, n);
		assert_non_null(ps[i]);
		memset(ps[i], (int)(i & 0xFF), n);
	}
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < 1 + i % 300; j++)
			assert_int_equal(ps[i][j], i & 0xFF);
	arena_free(&a);
}

/* 100 bytes round up to 112. After a reset the same requests get the same
 * addresses: the blocks are reused, nothing new is allocated. */
static void reset_reuses_memory(void **state)
{
	(void)state;
	enum { N = 200 }; /* 200 x 112 bytes spans several 4 KiB blocks */
	static void *before[N];
	struct arena a;
	arena_init(&a, 0);
	for (size_t i = 0; i < N; i++)
		before[i] = arena_alloc(&a, 100);
	assert_int_equal(a.total, N * 112);
	assert_int_equal((char *)before[1] - (char *)before[0], 112);
	for (int round = 0; round < 3; round++) {
		arena_reset(&a);
		assert_int_equal(a.total, 0);
		for (size_t i = 0; i < N; i++)
			assert_ptr_equal(arena_alloc(&a, 100), before[i]);
	}
	arena_free(&a);
	assert_null(a.first);
	assert_int_equal(a.total, 0);
}

/* A large request gets its own block, freed at reset (ASan reports a leak
 * otherwise), and does not disturb the small block being filled. */
static void large_allocation(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 0);
	char *s1 = arena_alloc(&a, 16);
	unsigned char *big = arena_alloc(&a, 100000);
	assert_non_null(big);
	assert_int_equal((uintptr_t)big % 16, 0);
	memset(big, 1, 100000);
	char *s2 = arena_alloc(&a, 16);
	assert_int_equal(s2 - s1, 16); /* same small block, next slot */
	assert_int_equal(a.total, 100000 + 32);
	assert_non_null(a.large);
	arena_reset(&a);
	assert_null(a.large);
	assert_ptr_equal(arena_alloc(&a, 16), s1);
	arena_free(&a);
}

/* limit 1024: 1000 -> 1008, 16 more is exactly 1024, 1 more fails; a reset
 * gives the whole budget back. */
static void limit_is_enforced(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 1024);
	assert_non_null(arena_alloc(&a, 1000));
	assert_int_equal(a.total, 1008);
	assert_non_null(arena_alloc(&a, 16));
	assert_int_equal(a.total, 1024);
	assert_false(a.refused);
	assert_null(arena_alloc(&a, 1));
	assert_true(a.refused); /* a budget, not out of memory */
	assert_null(arena_alloc(&a, 0));
	arena_reset(&a);
	assert_false(a.refused);
	assert_non_null(arena_alloc(&a, 1024));
	assert_null(arena_alloc(&a, 1));
	arena_free(&a);
	assert_int_equal(a.limit, 1024);
}

/* Sizes near SIZE_MAX must fail, not wrap into a tiny block. */
static void huge_sizes_fail(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 0);
	assert_null(arena_alloc(&a, SIZE_MAX));
	assert_null(arena_alloc(&a, SIZE_MAX - 4)); /* rounding wraps */
	assert_null(arena_alloc(&a, SIZE_MAX - 20)); /* header would wrap */
	assert_null(arena_strndup(&a, "x", SIZE_MAX));
	arena_free(&a);
	arena_init(&a, 1 << 20);
	assert_non_null(arena_alloc(&a, 32));
	assert_null(arena_alloc(&a, SIZE_MAX - 40)); /* total + need would wrap */
	assert_int_equal(a.total, 32);
	arena_free(&a);
}

static void string_copies(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 0);
	char *s = arena_strdup(&a, "hello");
	assert_string_equal(s, "hello");
	char *t = arena_strndup(&a, "hello world", 5);
	assert_string_equal(t, "hello");
	char *e = arena_strndup(&a, "", 0);
	assert_string_equal(e, "");
	assert_ptr_not_equal(s, t);
	assert_string_equal(s, "hello");
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alignment_of_every_size),
		cmocka_unit_test(allocations_do_not_overlap),
		cmocka_unit_test(reset_reuses_memory),
		cmocka_unit_test(large_allocation),
		cmocka_unit_test(limit_is_enforced),
		cmocka_unit_test(huge_sizes_fail),
		cmocka_unit_test(string_copies),
	};
	return cmocka_run_group_tests_name("arena", tests, NULL, NULL);
}
