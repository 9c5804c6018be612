#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "roastop/strmap.h"

static void insert_find_and_order(void **state)
{
	(void)state;
	struct strmap m;
	strmap_init(&m, sizeof(int), 0);
	bool added;
	char key[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		int *v = strmap_upsert(&m, key, &added);
		assert_non_null(v);
		assert_true(added);
		assert_int_equal(*v, 0); /* zero-filled */
		*v = i * 3;
	}
	assert_int_equal(m.count, 5000);
	for (int i = 0; i < 5000; i += 97) {
		snprintf(key, sizeof(key), "key-%d", i);
		assert_int_equal(*(int *)strmap_get(&m, key), i * 3);
		assert_string_equal(strmap_key_at(&m, (size_t)i), key); /* insertion order */
	}
	int *again = strmap_upsert(&m, "key-42", &added);
	assert_false(added);
	assert_int_equal(*again, 126);
	assert_null(strmap_get(&m, "missing"));
	assert_null(strmap_key_at(&m, 5000));
	strmap_free(&m);
}

static void full_map_refuses(void **state)
{
	(void)state;
	struct strmap m;
	strmap_init(&m, 8, 2);
	bool added;
	assert_non_null(strmap_upsert(&m, "a", &added));
	assert_non_null(strmap_upsert(&m, "b", &added));
	assert_null(strmap_upsert(&m, "c", &added));
	assert_non_null(strmap_upsert(&m, "a", &added)); /* existing keys still found */
	assert_null(strmap_upsert(&m, NULL, &added));
	strmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(insert_find_and_order),
		cmocka_unit_test(full_map_refuses),
	};
	return cmocka_run_group_tests_name("strmap", tests, NULL, NULL);
}
