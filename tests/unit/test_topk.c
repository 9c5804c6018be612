#include "test_util.h"

#include <string.h>

#include "roastop/topk.h"

static const optnum none = { 0, false };

static void empty_sorts_to_nothing(void **state)
{
	(void)state;
	struct topk k;
	topk_init(&k);
	struct topk_item out[1];
	assert_int_equal(topk_sorted(&k, out, 1), 0);
}

static void keeps_the_largest_sorted(void **state)
{
	(void)state;
	struct topk k;
	topk_init(&k);
	for (int i = 0; i < 1000; i++) {
		int d = (i * 7919) % 1000; /* a permutation of 0..999 */
		topk_offer(&k, d, "f.root", "ds", "w", optnum_of(i), optnum_of(i + 1), none);
	}
	assert_int_equal(k.len, TOPK_CAP);
	struct topk_item out[TOPK_CAP];
	size_t n = topk_sorted(&k, out, TOPK_CAP);
	assert_int_equal(n, TOPK_CAP);
	for (size_t i = 0; i < n; i++) {
		assert_true(out[i].duration == 999 - (double)i);
		/* the item kept its own fields: (i * 7919) % 1000 == d */
		int e = (int)out[i].entry_start.value;
		assert_int_equal((e * 7919) % 1000, (int)out[i].duration);
		assert_true(out[i].entry_stop.value == e + 1);
		assert_false(out[i].num_events.valid);
	}
	assert_string_equal(out[0].file, "f.root");
	assert_string_equal(out[0].dataset, "ds");
	assert_string_equal(out[0].worker, "w");
}

static void fewer_than_cap_and_short_output(void **state)
{
	(void)state;
	struct topk k;
	topk_init(&k);
	topk_offer(&k, 2, "two", NULL, NULL, none, none, none);
	topk_offer(&k, 5, "five", NULL, NULL, none, none, optnum_of(10));
	topk_offer(&k, 1, "one", NULL, NULL, none, none, none);
	topk_offer(&k, NAN, "nan", NULL, NULL, none, none, none);
	topk_offer(&k, INFINITY, "inf", NULL, NULL, none, none, none);
	assert_int_equal(k.len, 3);
	struct topk_item out[3];
	assert_int_equal(topk_sorted(&k, out, 3), 3);
	assert_string_equal(out[0].file, "five");
	assert_true(out[0].num_events.valid && out[0].num_events.value == 10);
	assert_string_equal(out[1].file, "two");
	assert_string_equal(out[2].file, "one");
	assert_string_equal(out[2].dataset, "");
	assert_int_equal(topk_sorted(&k, out, 2), 2);
	assert_string_equal(out[1].file, "two");
}

/* A full heap drops an offer no larger than its smallest kept item. */
static void full_heap_drops_small_offers(void **state)
{
	(void)state;
	struct topk k;
	topk_init(&k);
	for (int i = 1; i <= TOPK_CAP; i++)
		topk_offer(&k, i * 10, "kept", NULL, NULL, none, none, none);
	topk_offer(&k, 10, "tie", NULL, NULL, none, none, none);
	topk_offer(&k, 5, "small", NULL, NULL, none, none, none);
	topk_offer(&k, 15, "in", NULL, NULL, none, none, none);
	struct topk_item out[TOPK_CAP];
	assert_int_equal(topk_sorted(&k, out, TOPK_CAP), TOPK_CAP);
	assert_true(out[TOPK_CAP - 1].duration == 15);
	assert_string_equal(out[TOPK_CAP - 1].file, "in");
	assert_true(out[TOPK_CAP - 2].duration == 20);
	assert_true(out[0].duration == TOPK_CAP * 10);
}

/* Equal durations come out in file order whatever the insertion order. */
static void ties_sorted_by_file(void **state)
{
	(void)state;
	struct topk k;
	topk_init(&k);
	topk_offer(&k, 3, "c", NULL, NULL, none, none, none);
	topk_offer(&k, 3, "a", NULL, NULL, none, none, none);
	topk_offer(&k, 3, "b", NULL, NULL, optnum_of(200), none, none);
	topk_offer(&k, 3, "b", NULL, NULL, optnum_of(100), none, none);
	struct topk_item out[4];
	assert_int_equal(topk_sorted(&k, out, 4), 4);
	assert_string_equal(out[0].file, "a");
	assert_string_equal(out[1].file, "b");
	assert_true(out[1].entry_start.value == 100);
	assert_true(out[2].entry_start.value == 200);
	assert_string_equal(out[3].file, "c");
}

static void fill(char *buf, size_t n_ascii, const char *tail)
{
	memset(buf, 'a', n_ascii);
	strcpy(buf + n_ascii, tail);
}

/* file holds 159 bytes. 158 'a' + "é" (2 bytes) is 160: the cut at 159
 * would split é, so 158 remain. 157 'a' + "é" + "x" is 160: é fits whole
 * and 159 remain. 157 'a' + "€" (3 bytes) is 160: cut back to 157.
 * dataset holds 79: 76 'a' + a 4-byte emoji is 80, cut back to 76. */
static void strings_truncated_on_utf8_boundary(void **state)
{
	(void)state;
	char s[400], d[200];
	struct topk k;
	topk_init(&k);
	fill(s, 158, "\xc3\xa9");
	topk_offer(&k, 1, s, NULL, NULL, none, none, none);
	assert_int_equal(strlen(k.items[0].file), 158);
	assert_int_equal(strspn(k.items[0].file, "a"), 158);

	topk_init(&k);
	fill(s, 157, "\xc3\xa9x");
	topk_offer(&k, 1, s, NULL, NULL, none, none, none);
	assert_int_equal(strlen(k.items[0].file), 159);
	assert_memory_equal(k.items[0].file + 157, "\xc3\xa9", 2);

	topk_init(&k);
	fill(s, 157, "\xe2\x82\xac");
	fill(d, 76, "\xf0\x9f\x98\x80");
	topk_offer(&k, 1, s, d, "short", none, none, none);
	assert_int_equal(strlen(k.items[0].file), 157);
	assert_int_equal(strlen(k.items[0].dataset), 76);
	assert_string_equal(k.items[0].worker, "short");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_sorts_to_nothing),
		cmocka_unit_test(keeps_the_largest_sorted),
		cmocka_unit_test(fewer_than_cap_and_short_output),
		cmocka_unit_test(full_heap_drops_small_offers),
		cmocka_unit_test(ties_sorted_by_file),
		cmocka_unit_test(strings_truncated_on_utf8_boundary),
	};
	return cmocka_run_group_tests_name("topk", tests, NULL, NULL);
}
