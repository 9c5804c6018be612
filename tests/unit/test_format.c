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

/* roastcoffea's _format_bytes: divide by 1024 while >= 1024, up to PB. */
static void bytes_edges(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_bytes(b, optnum_of(0)), "0.00 B");
	assert_string_equal(format_bytes(b, optnum_of(1023)), "1023.00 B");
	assert_string_equal(format_bytes(b, optnum_of(1024)), "1.00 KB");
	assert_string_equal(format_bytes(b, optnum_of(-2048)), "-2.00 KB");
	assert_string_equal(format_bytes(b, optnum_of(1.5 * 1125899906842624.0)), "1.50 PB");
	assert_string_equal(format_bytes(b, optnum_of(1024 * 1125899906842624.0)), "1024.00 PB");
	assert_string_equal(format_bytes(b, optnum_of(INFINITY)), "n/a");
}

/* roastcoffea's _format_time, plus what it never meets: negative, huge. */
static void duration_edges(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_duration(b, optnum_of(0)), "0.0s");
	assert_string_equal(format_duration(b, optnum_of(59.94)), "59.9s");
	assert_string_equal(format_duration(b, optnum_of(60)), "1m 0s");
	assert_string_equal(format_duration(b, optnum_of(119.9)), "1m 59s"); /* truncated */
	assert_string_equal(format_duration(b, optnum_of(3600)), "1h 0m 0s");
	assert_string_equal(format_duration(b, optnum_of(90061)), "25h 1m 1s");
	assert_string_equal(format_duration(b, optnum_of(-125)), "-2m 5s");
	assert_string_equal(format_duration(b, optnum_of(-1.25)), "-1.2s");
	assert_string_equal(format_duration(b, optnum_of(1e30)), "1.000e+30s"); /* no overflow */
	assert_string_equal(format_duration(b, optnum_of(-1e300)), "-1.000e+300s");
	assert_string_equal(format_duration(b, optnum_of(NAN)), "n/a");
	assert_string_equal(format_duration(b, optnum_none()), "n/a");
}

static void count_edges(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_count(b, optnum_of(0)), "0");
	assert_string_equal(format_count(b, optnum_of(1000)), "1,000");
	assert_string_equal(format_count(b, optnum_of(999.6)), "1,000"); /* rounded */
	assert_string_equal(format_count(b, optnum_of(100000)), "100,000");
	assert_string_equal(format_count(b, optnum_of(999999999999999999.0)), "n/a");
	assert_string_equal(format_count(b, optnum_of(123456789012345.0)), "123,456,789,012,345");
	assert_string_equal(format_count(b, optnum_none()), "n/a");
}

static void si_prefixes(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_si(b, optnum_of(1234), "Hz"), "1.23 kHz");
	assert_string_equal(format_si(b, optnum_of(999.4), "Hz"), "999 Hz");
	assert_string_equal(format_si(b, optnum_of(999.6), "Hz"), "1.00 kHz"); /* no "1000 Hz" */
	assert_string_equal(format_si(b, optnum_of(0.5), "ev/s"), "0.50 ev/s");
	assert_string_equal(format_si(b, optnum_of(12345678), NULL), "12.3 M");
	assert_string_equal(format_si(b, optnum_of(-45600), "B"), "-45.6 kB");
	assert_string_equal(format_si(b, optnum_of(0), "Hz"), "0.00 Hz");
	assert_string_equal(format_si(b, optnum_of(1e30), "Hz"), "1000000000000 EHz");
	assert_string_equal(format_si(b, optnum_none(), "Hz"), "n/a");
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
		cmocka_unit_test(bytes_edges),
		cmocka_unit_test(duration_edges),
		cmocka_unit_test(count_edges),
		cmocka_unit_test(si_prefixes),
		cmocka_unit_test(json_writer),
	};
	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
