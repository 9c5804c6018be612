#include "test_util.h"

#include <string.h>

#include "roastop/topk.h"

static void keeps_the_largest_sorted(void **state)
{
	(void)state;
	struct topk k;
	topk_init(&k);
	for (int i = 0; i < 1000; i++) {
		double d = (double)((i * 7919) % 1000); /* a permutation of 0..999 */
		topk_offer(&k, d, "f.root", "ds", "w", optnum_of(i), optnum_of(i + 1), optnum_none());
	}
	struct topk_item out[TOPK_CAP];
	size_t n = topk_sorted(&k, out, TOPK_CAP);
	assert_int_equal(n, TOPK_CAP);
	for (size_t i = 0; i < n; i++)
		assert_near(out[i].duration, 999 - (double)i, 0);
	assert_string_equal(out[0].file, "f.root");
}

static void strings_truncated_on_utf8_boundary(void **state)
{
	(void)state;
	char longname[400];
	memset(longname, 0, sizeof(longname));
	for (size_t i = 0; i + 2 < 300; i += 2)
		memcpy(longname + i, "\xc3\xa9", 2); /* é */
	struct topk k;
	topk_init(&k);
	topk_offer(&k, 1, longname, NULL, NULL, optnum_none(), optnum_none(), optnum_none());
	size_t len = strlen(k.items[0].file);
	assert_true(len < TOPK_STR && len % 2 == 0);
	assert_string_equal(k.items[0].dataset, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keeps_the_largest_sorted),
		cmocka_unit_test(strings_truncated_on_utf8_boundary),
	};
	return cmocka_run_group_tests_name("topk", tests, NULL, NULL);
}
