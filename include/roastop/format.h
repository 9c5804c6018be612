/* Numbers for people: everything printed goes through here, by the rules of
 * docs/metrics.md ("Units on screen and in summary.txt"). Invalid values
 * print as "n/a". */
#ifndef ROASTOP_FORMAT_H
#define ROASTOP_FORMAT_H

#include "roastop/common.h"

#define FMT_LEN 48

/* 1023 -> "1023 B", 1536 -> "1.50 KiB", 474.77 MiB -> "475 MiB" */
const char *format_bytes(char buf[FMT_LEN], optnum v);
/* A size in roastcoffea's "MB" (MiB): 12.5 -> "12.5 MiB" */
const char *format_mib(char buf[FMT_LEN], optnum mib);
/* The IEC step format_bytes prints v in (1, 1024, 1024^2, ...) and, when
 * name is not NULL, its name ("B", "KiB", ...). */
double format_bytes_step(double v, const char **name);
/* 0.215 -> "215 ms", 42.3 -> "42.3s", 125 -> "2m 5s", 3725 -> "1h 2m 5s",
 * 0 -> "0s" */
const char *format_duration(char buf[FMT_LEN], optnum v);
/* A coffea section's value (track_time, track_memory, track_bytes, in
 * run.h's order of the section maps). */
enum format_section { FORMAT_SECTION_TIME, FORMAT_SECTION_MEM, FORMAT_SECTION_BYTES };
const char *format_section(char buf[FMT_LEN], enum format_section kind, optnum v);
/* 1234567 -> "1,234,567" (rounded to an integer) */
const char *format_count(char buf[FMT_LEN], optnum v);
/* printf-style with one double: format_num(buf, v, "%.1f %%") */
const char *format_num(char buf[FMT_LEN], optnum v, const char *fmt);

/* Three significant digits with a decimal SI prefix: (1234, "Hz") ->
 * "1.23 kHz", (0.5, "ev/s") -> "0.50 ev/s", (0, "Hz") -> "0 Hz"; past the
 * largest prefix, "1.00e+30 Hz". unit may be NULL or "". */
const char *format_si(char buf[FMT_LEN], optnum v, const char *unit);
/* A rate held in units of scale x unit, printed by format_si:
 * (0.860, 1e9, "bps") -> "860 Mbps", (310977.13, 1e3, "Hz") -> "311 MHz". */
const char *format_rate(char buf[FMT_LEN], optnum v, double scale, const char *unit);

/* A change as "+1.23 kHz (+4.5 %)": mag is |delta| already formatted, its
 * sign in front; past 1e5 % in exponent form. */
#define FORMAT_CHANGE_LEN (2 * FMT_LEN + 8)
const char *format_change(char buf[FORMAT_CHANGE_LEN], optnum delta, const char *mag,
			  optnum percent);

/* Wall seconds as local "14:02:11"; "n/a" when not finite. */
const char *format_clock(char buf[FMT_LEN], double t);

/* A timeline's scale label: bytes in IEC units ("2.5 GiB"), others with an
 * SI prefix ("2.5 k", "100 %"). */
const char *format_axis(char buf[FMT_LEN], double v, const char *unit);

#endif
