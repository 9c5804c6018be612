#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "roastop/format.h"
#include "roastop/strbuf.h"

static void numbers_for_people(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_bytes(b, optnum_of(1536)), "1.50 KB");
	assert_string_equal(format_bytes(b, optnum_of(3 * 1073741824.0)), "3.00 GB");
	assert_string_equal(format_bytes(b, optnum_none()), "n/a");
	assert_string_equal(format_duration(b, optnum_of(42.25)), "42.2s");
	assert_string_equal(format_duration(b, optnum_of(125)), "2m 5s");
	assert_string_equal(format_duration(b, optnum_of(3725)), "1h 2m 5s");
	assert_string_equal(format_count(b, optnum_of(1234567)), "1,234,567");
	assert_string_equal(format_count(b, optnum_of(-1000)), "-1,000");
	assert_string_equal(format_count(b, optnum_of(999)), "999");
	assert_string_equal(format_num(b, optnum_of(2.5), "%.1f kHz"), "2.5 kHz");
	assert_string_equal(format_num(b, optnum_of(NAN), "%.1f"), "n/a");
}

static void json_writer(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_json_string(&sb, "a\"b\\c\n\x01");
	assert_string_equal(sb.data, "\"a\\\"b\\\\c\\n\\u0001\"");
	strbuf_reset(&sb);
	strbuf_json_number(&sb, 12345678901.0);
	strbuf_puts(&sb, " ");
	strbuf_json_number(&sb, 0.1);
	strbuf_puts(&sb, " ");
	strbuf_json_number(&sb, NAN);
	assert_string_equal(sb.data, "12345678901 0.1 null");
	strbuf_reset(&sb);
	strbuf_json_number(&sb, 1767225600.3599281);
	assert_near(strtod(sb.data, NULL), 1767225600.3599281, 0);
	strbuf_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers_for_people),
		cmocka_unit_test(json_writer),
	};
	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
