#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roastop/format.h"
#include "roastop/strbuf.h"
#include "roastop/strutil.h"

static void numbers_for_people(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_bytes(b, optnum_of(1536)), "1.50 KiB");
	assert_string_equal(format_bytes(b, optnum_of(3 * 1073741824.0)), "3.00 GiB");
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

#define KiB 1024.0
#define MiB (1024.0 * KiB)
#define GiB (1024.0 * MiB)
#define TiB (1024.0 * GiB)
#define PiB (1024.0 * TiB)
#define EiB (1024.0 * PiB)

/* IEC steps of 1024 (what Dask shows): whole bytes under 1 KiB, then three
 * significant digits; a value that would round to 1024 is the next unit. */
static void bytes_iec_steps(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_bytes(b, optnum_of(0)), "0 B");
	assert_string_equal(format_bytes(b, optnum_of(1)), "1 B");
	assert_string_equal(format_bytes(b, optnum_of(1023)), "1023 B");
	assert_string_equal(format_bytes(b, optnum_of(1024)), "1.00 KiB");
	assert_string_equal(format_bytes(b, optnum_of(10 * KiB)), "10.0 KiB");
	assert_string_equal(format_bytes(b, optnum_of(1023 * KiB)), "1023 KiB");
	assert_string_equal(format_bytes(b, optnum_of(MiB - 1)), "1.00 MiB"); /* never "1024 KiB" */
	assert_string_equal(format_bytes(b, optnum_of(474.77 * MiB)), "475 MiB");
	assert_string_equal(format_bytes(b, optnum_of(23.54 * GiB)), "23.5 GiB");
	assert_string_equal(format_bytes(b, optnum_of(1.5 * TiB)), "1.50 TiB");
	assert_string_equal(format_bytes(b, optnum_of(1.5 * PiB)), "1.50 PiB");
	assert_string_equal(format_bytes(b, optnum_of(2 * EiB)), "2.00 EiB");
	assert_string_equal(format_bytes(b, optnum_of(-2048)), "-2.00 KiB");
	assert_string_equal(format_bytes(b, optnum_of(-0.3)), "0 B"); /* no "-0 B" */
	assert_string_equal(format_bytes(b, optnum_of(INFINITY)), "n/a");
	const char *name;
	assert_true(format_bytes_step(1023, &name) == 1 && strcmp(name, "B") == 0);
	assert_true(format_bytes_step(25 * GiB, &name) == GiB && strcmp(name, "GiB") == 0);
	assert_true(format_bytes_step(-3 * MiB, NULL) == MiB);
}

/* roastcoffea's _format_time from 1 s on; under 1 s milliseconds with three
 * significant digits, never "0.2s"; plus what it never meets: negative, huge. */
static void duration_edges(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_duration(b, optnum_of(0)), "0s");
	assert_string_equal(format_duration(b, optnum_of(0.215)), "215 ms");
	assert_string_equal(format_duration(b, optnum_of(0.0215)), "21.5 ms");
	assert_string_equal(format_duration(b, optnum_of(0.00215)), "2.15 ms");
	assert_string_equal(format_duration(b, optnum_of(0.9994)), "999 ms");
	assert_string_equal(format_duration(b, optnum_of(0.9996)), "1.0s"); /* no "1000 ms" */
	assert_string_equal(format_duration(b, optnum_of(-0.25)), "-250 ms");
	/* a nonzero duration never reads as zero (the histogram's axis ends) */
	assert_string_equal(format_duration(b, optnum_of(1e-6)), "0.001 ms");
	assert_string_equal(format_duration(b, optnum_of(4.2e-6)), "0.0042 ms");
	assert_string_equal(format_duration(b, optnum_of(9.99e-6)), "0.01 ms");
	assert_string_equal(format_duration(b, optnum_of(1e-5)), "0.01 ms");
	assert_string_equal(format_duration(b, optnum_of(1)), "1.0s");
	assert_string_equal(format_duration(b, optnum_of(59.94)), "59.9s");
	assert_string_equal(format_duration(b, optnum_of(59.96)), "1m 0s"); /* no "60.0s" */
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
	assert_string_equal(format_si(b, optnum_of(500), ""), "500"); /* no trailing space */
	assert_string_equal(format_si(b, optnum_of(-45600), "B"), "-45.6 kB");
	assert_string_equal(format_si(b, optnum_of(0), "Hz"), "0 Hz");
	assert_string_equal(format_si(b, optnum_of(1e30), "Hz"), "1.00e+30 Hz"); /* past E */
	assert_string_equal(format_si(b, optnum_none(), "Hz"), "n/a");
}

/* Rates keep decimal units, scaled from the unit metrics.json holds them in;
 * a value too big for its prefix takes the next one (kHz -> MHz). */
static void rates_decimal_prefixes(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_rate(b, optnum_of(110.13), 1e3, "Hz"), "110 kHz");
	assert_string_equal(format_rate(b, optnum_of(310977.13), 1e3, "Hz"), "311 MHz");
	assert_string_equal(format_rate(b, optnum_of(0.525), 1e3, "Hz"), "525 Hz");
	assert_string_equal(format_rate(b, optnum_of(55.0662), 1e3, "Hz/core"), "55.1 kHz/core");
	assert_string_equal(format_rate(b, optnum_of(0.860), 1e9, "bps"), "860 Mbps");
	assert_string_equal(format_rate(b, optnum_of(12.5), 1e9, "bps"), "12.5 Gbps");
	assert_string_equal(format_rate(b, optnum_of(107.6), 1e6, "B/s"), "108 MB/s");
	assert_string_equal(format_rate(b, optnum_of(0), 1e3, "Hz"), "0 Hz");
	assert_string_equal(format_rate(b, optnum_none(), 1e3, "Hz"), "n/a");
}

/* Significant digits in a formatted number (leading zeros not counted). */
static int sig_digits(const char *s)
{
	int n = 0;
	bool lead = true;
	for (; *s && *s != ' '; s++) {
		if (*s < '0' || *s > '9')
			continue;
		if (lead && *s == '0')
			continue;
		lead = false;
		n++;
	}
	return n;
}

/* One precision rule for every rate: at most three significant digits,
 * whatever the magnitude, so no "55.0662 kHz" beside "110.13 kHz". */
static void rates_one_precision(void **state)
{
	(void)state;
	char b[FMT_LEN];
	static const double mant[] = { 1, 1.234, 5.5555, 9.9949, 9.9951, 99.94, 99.96, 999.4 };
	for (int e = 0; e <= 18; e++)
		for (size_t i = 0; i < ROASTOP_ARRAY_LEN(mant); i++) {
			double v = mant[i] * pow(10, e);
			format_rate(b, optnum_of(v), 1, "Hz");
			assert_int_equal(sig_digits(b), 3);
		}
}

/* Nothing overflows its column: a rate fits 6 characters and its unit
 * ("9.99 kHz", one more for a sign), a byte size 9 ("-1023 KiB"), from 0.01
 * to 10^20; the Datasets RATE column, which cut "310977.13 kH", is 12 wide. */
static void values_fit_their_column(void **state)
{
	(void)state;
	char b[FMT_LEN];
	for (int e = -2; e <= 19; e++)
		for (int sign = -1; sign <= 1; sign += 2) {
			double v = sign * 9.99951 * pow(10, e);
			assert_true(strlen(format_rate(b, optnum_of(v), 1, "Hz")) <= (sign < 0 ? 9u : 8u));
			assert_true(strlen(format_bytes(b, optnum_of(v))) <= 9);
			assert_true(strlen(format_rate(b, optnum_of(v / 1e3), 1e3, "Hz")) <= 12);
		}
	assert_true(strlen(format_rate(b, optnum_of(310977.13), 1e3, "Hz")) <= 12);
	assert_true(strlen(format_bytes(b, optnum_of(1023.4 * GiB))) <= 8);
}

/* The timeline scales: nice values in as few characters as they need, the
 * same units as the titles (IEC for bytes). */
static void axis_labels(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_axis(b, 25 * GiB, "B"), "25 GiB");
	assert_string_equal(format_axis(b, 2.5 * GiB, "B"), "2.5 GiB");
	assert_string_equal(format_axis(b, 500 * MiB, "B"), "500 MiB");
	assert_string_equal(format_axis(b, 1024 * MiB, "B"), "1 GiB");
	assert_string_equal(format_axis(b, 0, "B"), "0 B");
	assert_string_equal(format_axis(b, 2, ""), "2");
	assert_string_equal(format_axis(b, 0, ""), "0");
	assert_string_equal(format_axis(b, 100, "%"), "100 %");
	assert_string_equal(format_axis(b, 2500, ""), "2.5 k");
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

/* Wall clock times as HH:MM:SS; what no time_t can hold is n/a, never a
 * conversion the sanitizer calls undefined. */
static void clock_times(void **state)
{
	(void)state;
	char b[FMT_LEN];
	setenv("TZ", "UTC", 1);
	tzset();
	assert_string_equal(format_clock(b, 0), "00:00:00");
	assert_string_equal(format_clock(b, 3661.9), "01:01:01");
	assert_string_equal(format_clock(b, NAN), "n/a");
	assert_string_equal(format_clock(b, INFINITY), "n/a");
	assert_string_equal(format_clock(b, -1e300), "n/a");
}

/* A section's unit follows its map: time, MiB (roastcoffea's "MB") or bytes;
 * not measured is n/a in each. */
static void sections_in_their_unit(void **state)
{
	(void)state;
	char b[FMT_LEN];
	assert_string_equal(format_section(b, FORMAT_SECTION_TIME, optnum_of(0.215)), "215 ms");
	assert_string_equal(format_section(b, FORMAT_SECTION_MEM, optnum_of(12.5)), "12.5 MiB");
	assert_string_equal(format_section(b, FORMAT_SECTION_BYTES, optnum_of(1536)), "1.50 KiB");
	assert_string_equal(format_section(b, FORMAT_SECTION_MEM, optnum_none()), "n/a");
}

/* Untrusted text in a message: control bytes hidden, cut with "..." on a
 * character boundary, a NUL ends it. */
static void shown_text_is_one_safe_line(void **state)
{
	(void)state;
	char b[16];
	assert_string_equal(strutil_shown(b, 8, "a\tb\x7f", 4), "a?b?");
	assert_string_equal(strutil_shown(b, 4, "abcdef", SIZE_MAX), "abcd...");
	assert_string_equal(strutil_shown(b, 4, "ab\0cd", 5), "ab");
	assert_string_equal(strutil_shown(b, 4, "abc\xc3\xa9", 5), "abc...");
	assert_string_equal(strutil_shown(b, 5, "abc\xc3\xa9", 5), "abc\xc3\xa9");
	assert_string_equal(strutil_shown(b, 4, "ab\xe2\x82\xac", 5), "ab...");
	assert_true(strutil_utf8_ok((const unsigned char *)strutil_shown(b, 3, "a\xe2\x82\xac", 4)));
}

/* roastop compare's and view 8's change column: sign, magnitude, percent;
 * n/a, never 0, when a side is not measured. */
static void changes(void **state)
{
	(void)state;
	char b[FORMAT_CHANGE_LEN];
	assert_string_equal(format_change(b, optnum_of(-76.4), "76.4 kHz", optnum_of(-82.74)),
			    "-76.4 kHz (-82.7 %)");
	assert_string_equal(format_change(b, optnum_of(76), "76", optnum_of(1900)), "+76 (+1900.0 %)");
	assert_string_equal(format_change(b, optnum_of(3), "3", optnum_none()), "+3 (n/a)");
	assert_string_equal(format_change(b, optnum_none(), "x", optnum_none()), "n/a");
	assert_string_equal(format_change(b, optnum_of(1e300), "1e300", optnum_of(1e302)),
			    "+1e300 (+1.00e+302 %)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers_for_people),
		cmocka_unit_test(clock_times),
		cmocka_unit_test(bytes_iec_steps),
		cmocka_unit_test(duration_edges),
		cmocka_unit_test(count_edges),
		cmocka_unit_test(si_prefixes),
		cmocka_unit_test(rates_decimal_prefixes),
		cmocka_unit_test(rates_one_precision),
		cmocka_unit_test(values_fit_their_column),
		cmocka_unit_test(axis_labels),
		cmocka_unit_test(json_writer),
		cmocka_unit_test(sections_in_their_unit),
		cmocka_unit_test(shown_text_is_one_safe_line),
		cmocka_unit_test(changes),
	};
	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
