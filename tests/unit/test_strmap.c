#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "roastop/strmap.h"

static void empty_map_finds_nothing(void **state)
{
	(void)state;
	struct strmap m;
	strmap_init(&m, sizeof(int), 0);
	assert_null(strmap_get(&m, "x"));
	assert_null(strmap_get(&m, NULL));
	assert_null(strmap_key_at(&m, 0));
	assert_null(strmap_val_at(&m, 0));
	strmap_free(&m);
}

/* 100,000 keys through every doubling: each value set before a growth is
 * still there after it, order is insertion order, and the index stays a
 * power of two at most half full. */
static void growth_keeps_values_and_order(void **state)
{
	(void)state;
	enum { N = 100000 };
	struct strmap m;
	strmap_init(&m, sizeof(int), 0);
	bool added;
	char key[48];
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "root://eos//store/file_%d.root", i);
		int *v = strmap_upsert(&m, key, &added);
		assert_non_null(v);
		assert_true(added);
		assert_int_equal(*v, 0); /* zero-filled */
		*v = i * 3;
		assert_true(2 * m.count <= m.index_cap);
		assert_int_equal(m.index_cap & (m.index_cap - 1), 0);
	}
	assert_int_equal(m.count, N);
	assert_int_equal(m.cap_entries, 131072); /* 8 doubled 14 times */
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "root://eos//store/file_%d.root", i);
		int *v = strmap_get(&m, key);
		assert_non_null(v);
		assert_int_equal(*v, i * 3);
		assert_string_equal(strmap_key_at(&m, (size_t)i), key);
		assert_ptr_equal(strmap_val_at(&m, (size_t)i), v);
	}
	/* Spread: keys that differ in a few middle bytes must not cluster.
	 * Linear probing at load 0.38 averages ~0.3 extra probes; a hash that
	 * dropped bytes would run into the thousands. */
	size_t extra = 0, mask = m.index_cap - 1;
	for (size_t e = 0; e < m.count; e++)
		for (size_t i = m.hashes[e] & mask; m.index[i] != e + 1; i = (i + 1) & mask)
			extra++;
	assert_true((double)extra / (double)m.count < 1.0);
	int *again = strmap_upsert(&m, "root://eos//store/file_42.root", &added);
	assert_false(added);
	assert_int_equal(*again, 126);
	assert_int_equal(m.count, N);
	assert_null(strmap_get(&m, "root://eos//store/file_100000.root"));
	assert_null(strmap_get(&m, "root://eos//store/file_42.roo"));
	assert_null(strmap_key_at(&m, N));
	strmap_free(&m);
	assert_int_equal(m.count, 0);
	assert_null(strmap_get(&m, "root://eos//store/file_1.root"));
}

/* Keys that differ only in length, in the last byte of an 8-byte word,
 * or in the tail after it; the empty string is a key like any other. */
static void near_keys_stay_apart(void **state)
{
	(void)state;
	const char *keys[] = {
		"", "a", "aa", "aaaaaaa", "aaaaaaaa", "aaaaaaab", "aaaaaaaaa", "baaaaaaa",
		"aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaab", "aaaaaaaaaaaaaaaab",
	};
	struct strmap m;
	strmap_init(&m, sizeof(size_t), 0);
	bool added;
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(keys); i++) {
		size_t *v = strmap_upsert(&m, keys[i], &added);
		assert_true(added);
		*v = i + 1;
	}
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(keys); i++)
		assert_int_equal(*(size_t *)strmap_get(&m, keys[i]), i + 1);
	assert_null(strmap_get(&m, "aaaa"));
	strmap_free(&m);
}

static void keys_are_copied(void **state)
{
	(void)state;
	struct strmap m;
	strmap_init(&m, 4, 0);
	bool added;
	char key[16] = "worker-1";
	strmap_upsert(&m, key, &added);
	strcpy(key, "worker-2");
	assert_null(strmap_get(&m, "worker-2"));
	assert_non_null(strmap_get(&m, "worker-1"));
	assert_string_equal(strmap_key_at(&m, 0), "worker-1");
	strmap_free(&m);
}

static void full_map_refuses(void **state)
{
	(void)state;
	struct strmap m;
	strmap_init(&m, 8, 2);
	bool added = true;
	assert_non_null(strmap_upsert(&m, "a", &added));
	assert_non_null(strmap_upsert(&m, "b", &added));
	assert_null(strmap_upsert(&m, "c", &added));
	assert_false(added);
	assert_int_equal(m.count, 2);
	assert_true(m.cap_entries <= 2); /* no room grown past the cap */
	assert_null(strmap_get(&m, "c"));
	added = true;
	assert_non_null(strmap_upsert(&m, "a", &added)); /* existing keys still found */
	assert_false(added);
	assert_null(strmap_upsert(&m, NULL, &added));
	strmap_free(&m);
}

/* max_entries 20 with a growth sequence 8, 16, 20: the 21st key fails. */
static void cap_between_doublings(void **state)
{
	(void)state;
	struct strmap m;
	strmap_init(&m, 1, 20);
	bool added;
	char key[16];
	for (int i = 0; i < 25; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		void *v = strmap_upsert(&m, key, &added);
		if (i < 20)
			assert_non_null(v);
		else
			assert_null(v);
	}
	assert_int_equal(m.count, 20);
	assert_int_equal(m.cap_entries, 20);
	assert_non_null(strmap_get(&m, "k19"));
	assert_null(strmap_get(&m, "k20"));
	strmap_free(&m);
}

/* A hint names the entry to try first; whatever it holds (right, wrong,
 * stale, none), the answer is strmap_upsert's, and the hint then names it. */
static void hint_gives_upserts_answer(void **state)
{
	(void)state;
	struct strmap m;
	strmap_init(&m, sizeof(int), 3);
	bool added;
	size_t hint = 0;
	int *a = strmap_upsert_hint(&m, "DYJets", &added, &hint);
	assert_non_null(a);
	assert_true(added);
	assert_int_equal(hint, 1);
	*a = 7;
	assert_ptr_equal(strmap_upsert_hint(&m, "DYJets", &added, &hint), a); /* the hit */
	assert_false(added);
	int *b = strmap_upsert_hint(&m, "TTbar", &added, &hint); /* a miss adds */
	assert_true(added);
	assert_int_equal(hint, 2);
	assert_ptr_equal(strmap_get(&m, "TTbar"), b);
	assert_ptr_equal(strmap_upsert_hint(&m, "DYJets", &added, &hint), strmap_get(&m, "DYJets"));
	assert_false(added); /* a wrong hint finds the key through the map */
	assert_int_equal(hint, 1);
	assert_int_equal(*(int *)strmap_get(&m, "DYJets"), 7);
	hint = m.count + 1; /* stale: one past the entries */
	added = true;
	assert_ptr_equal(strmap_upsert_hint(&m, "TTbar", &added, &hint), strmap_get(&m, "TTbar"));
	assert_false(added);
	assert_int_equal(hint, 2);
	assert_non_null(strmap_upsert_hint(&m, "WJets", &added, &hint));
	assert_null(strmap_upsert_hint(&m, "QCD", &added, &hint)); /* full */
	assert_false(added);
	assert_int_equal(hint, 3); /* left as it was */
	assert_null(strmap_upsert_hint(&m, NULL, &added, &hint));
	assert_int_equal(m.count, 3);
	strmap_free(&m);
	/* a hint kept across a free: the refilled map has other keys there */
	strmap_init(&m, sizeof(int), 3);
	assert_non_null(strmap_upsert_hint(&m, "QCD", &added, &hint));
	assert_true(added);
	assert_int_equal(hint, 1);
	assert_null(strmap_get(&m, "DYJets"));
	strmap_free(&m);
}

static bool keep_even(void *val, void *ctx)
{
	(*(int *)ctx)++;
	return *(int *)val % 2 == 0;
}

/* retain drops in one pass, keeps the order, and the index finds exactly
 * the survivors; the freed room takes new keys again */
static void retain_keeps_order_and_index(void **state)
{
	(void)state;
	struct strmap m;
	strmap_init(&m, sizeof(int), 100);
	char key[16];
	bool added;
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		*(int *)strmap_upsert(&m, key, &added) = i;
	}
	int calls = 0;
	assert_int_equal(strmap_retain(&m, keep_even, &calls), 50);
	assert_int_equal(calls, 100);
	assert_int_equal(m.count, 50);
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		int *v = strmap_get(&m, key);
		if (i % 2) {
			assert_null(v);
			continue;
		}
		assert_non_null(v);
		assert_int_equal(*v, i);
		assert_string_equal(strmap_key_at(&m, (size_t)i / 2), key);
	}
	assert_non_null(strmap_upsert(&m, "k1", &added));
	assert_true(added);
	assert_int_equal(m.count, 51);
	strmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_map_finds_nothing),
		cmocka_unit_test(growth_keeps_values_and_order),
		cmocka_unit_test(near_keys_stay_apart),
		cmocka_unit_test(keys_are_copied),
		cmocka_unit_test(full_map_refuses),
		cmocka_unit_test(cap_between_doublings),
		cmocka_unit_test(hint_gives_upserts_answer),
		cmocka_unit_test(retain_keeps_order_and_index),
	};
	return cmocka_run_group_tests_name("strmap", tests, NULL, NULL);
}
