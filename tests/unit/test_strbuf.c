/* The string buffer: growth, formatting, JSON strings and numbers. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/strbuf.h"

static void grows_and_resets(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(sb.len, 0);
	for (int i = 0; i < 1000; i++)
		strbuf_append(&sb, "abc", 3);
	assert_int_equal(sb.len, 3000);
	assert_int_equal(sb.data[3000], '\0');
	assert_memory_equal(sb.data + 2997, "abc", 3);
	assert_false(sb.failed);
	strbuf_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.data, "");
	strbuf_puts(&sb, "x=");
	/* longer than any spare room: formatted a second time after growing */
	char wide[600];
	memset(wide, 'w', sizeof(wide) - 1);
	wide[sizeof(wide) - 1] = '\0';
	strbuf_appendf(&sb, "%d:%s:%s", 42, "y", wide);
	assert_int_equal(sb.len, 2 + 5 + 599);
	assert_memory_equal(sb.data, "x=42:y:www", 10);
	assert_int_equal(sb.data[sb.len], '\0');
	strbuf_appendf(&sb, "%s", "");
	assert_int_equal(sb.len, 606);
	strbuf_free(&sb);
	assert_null(sb.data);
}

static void json_strings(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_json_string(&sb, "a\"b\\c\n\t\r\x01\x1f/\xc3\xa9");
	assert_string_equal(sb.data, "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u001f/\xc3\xa9\"");
	strbuf_reset(&sb);
	strbuf_json_string(&sb, "");
	assert_string_equal(sb.data, "\"\"");
	/* escapes at every offset of the 8-byte words the writer copies */
	for (size_t at = 0; at < 20; at++) {
		char in[32], want[40];
		memset(in, 'x', 24);
		in[24] = '\0';
		in[at] = '"';
		snprintf(want, sizeof(want), "\"%.*s\\\"%s\"", (int)at, in, in + at + 1);
		strbuf_reset(&sb);
		strbuf_json_string(&sb, in);
		assert_string_equal(sb.data, want);
	}
	strbuf_free(&sb);
}

static const char *num(struct strbuf *sb, double v)
{
	strbuf_reset(sb);
	strbuf_json_number(sb, v);
	return sb->data;
}

static void json_numbers(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	assert_string_equal(num(&sb, 0), "0");
	assert_string_equal(num(&sb, -0.0), "0");
	assert_string_equal(num(&sb, 7), "7");
	assert_string_equal(num(&sb, -123456789012), "-123456789012");
	assert_string_equal(num(&sb, 9007199254740991.0), "9007199254740991");
	assert_string_equal(num(&sb, 1.5), "1.5");
	assert_string_equal(num(&sb, -0.005), "-0.005");
	assert_string_equal(num(&sb, 0.1), "0.1");
	assert_string_equal(num(&sb, 100.25), "100.25");
	assert_string_equal(num(&sb, 1767225600.036), "1767225600.036");
	assert_string_equal(num(&sb, 1767225592.570924), "1767225592.570924");
	assert_string_equal(num(&sb, 0.000001), "0.000001");
	assert_string_equal(num(&sb, 0.1 + 0.2), "0.30000000000000004");
	assert_string_equal(num(&sb, 1e-7), "9.9999999999999995e-08");
	assert_string_equal(num(&sb, 9007199254740992.0), "9007199254740992");
	assert_string_equal(num(&sb, 1e300), "1.0000000000000001e+300");
	assert_string_equal(num(&sb, NAN), "null");
	assert_string_equal(num(&sb, -INFINITY), "null");
	strbuf_free(&sb);
}

/* Whatever the double, strtod of the text gives back the same bits. */
static void json_numbers_round_trip(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	srand(4242);
	for (int i = 0; i < 100000; i++) {
		uint64_t bits = (uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^ (uint64_t)rand();
		double v;
		memcpy(&v, &bits, sizeof(v));
		if (i % 2)
			v = round(ldexp((double)rand(), -(i % 40)) * 1e4) / 1e4; /* short decimals */
		if (!isfinite(v))
			continue;
		strbuf_reset(&sb);
		strbuf_json_number(&sb, v);
		char *end;
		double back = strtod(sb.data, &end);
		if (*end != '\0' || memcmp(&back, &v, sizeof(v)) != 0)
			if (!(v == 0 && back == 0)) /* -0 prints as 0 */
				fail_msg("%a printed as %s", v, sb.data);
	}
	strbuf_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_and_resets),
		cmocka_unit_test(json_strings),
		cmocka_unit_test(json_numbers),
		cmocka_unit_test(json_numbers_round_trip),
	};
	return cmocka_run_group_tests_name("strbuf", tests, NULL, NULL);
}
