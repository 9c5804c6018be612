/* Numbers for people: every value on the screen, in summary.txt and in the
 * headless progress line goes through here, so all print it the same way
 * (docs/metrics.md, "Units on screen and in summary.txt"). The rules:
 * - byte sizes in IEC units (powers of 1024: KiB, MiB, GiB, as Dask shows);
 * - rates in decimal units (powers of 1000: kHz, MB/s, Gbps), the prefix
 *   chosen so the number fits (310977 kHz prints as "311 MHz");
 * - three significant digits for sizes and rates, whole bytes under 1 KiB;
 * - durations under 1 s in milliseconds, from 1 s on as roastcoffea.
 * Invalid values print as "n/a". metrics.json keeps the raw numbers. */
#ifndef ROASTOP_FORMAT_H
#define ROASTOP_FORMAT_H

#include "roastop/common.h"

#define FMT_LEN 48

/* 1023 -> "1023 B", 1536 -> "1.50 KiB", 474.77 MiB -> "475 MiB" */
const char *format_bytes(char buf[FMT_LEN], optnum v);
/* A size in roastcoffea's "MB" (the emitter's rss / 2^20: MiB), as
 * format_bytes prints it: 12.5 -> "12.5 MiB" */
const char *format_mib(char buf[FMT_LEN], optnum mib);
/* The IEC step format_bytes prints v in (1, 1024, 1024^2, ...) and, when
 * name is not NULL, its name ("B", "KiB", ...). */
double format_bytes_step(double v, const char **name);
/* 0.215 -> "215 ms", 42.3 -> "42.3s", 125 -> "2m 5s", 3725 -> "1h 2m 5s",
 * 0 -> "0s" */
const char *format_duration(char buf[FMT_LEN], optnum v);
/* A coffea section's value (track_time, track_memory, track_bytes), in the
 * order run.h keeps the section maps: format_duration, format_mib or
 * format_bytes. The dashboard's table and summary.txt print sections alike. */
enum format_section { FORMAT_SECTION_TIME, FORMAT_SECTION_MEM, FORMAT_SECTION_BYTES };
const char *format_section(char buf[FMT_LEN], enum format_section kind, optnum v);
/* 1234567 -> "1,234,567" (rounded to an integer) */
const char *format_count(char buf[FMT_LEN], optnum v);
/* printf-style with one double, or "n/a": format_num(buf, v, "%.1f %%"),
 * for what has no unit to scale (percentages, ratios, counts of threads) */
const char *format_num(char buf[FMT_LEN], optnum v, const char *fmt);

/* Three significant digits with a decimal SI prefix: (1234, "Hz") ->
 * "1.23 kHz", (0.5, "ev/s") -> "0.50 ev/s", (0, "Hz") -> "0 Hz"; past the
 * largest prefix, "1.00e+30 Hz". unit may be NULL or "". */
const char *format_si(char buf[FMT_LEN], optnum v, const char *unit);
/* A rate held in units of scale x unit (metrics.json's kHz: scale 1e3,
 * "Hz"; Gbps: 1e9, "bps"; MB/s: 1e6, "B/s"), printed by format_si:
 * (0.860, 1e9, "bps") -> "860 Mbps", (310977.13, 1e3, "Hz") -> "311 MHz". */
const char *format_rate(char buf[FMT_LEN], optnum v, double scale, const char *unit);

/* A change between two numbers (metrics_change's delta and percent) as
 * "+1.23 kHz (+4.5 %)": mag is |delta| already formatted in the number's
 * own unit, its sign in front; "n/a" when delta is not measured, and the
 * percent "n/a" when it is not (of a zero); past 1e5 % in exponent form.
 * buf holds FORMAT_CHANGE_LEN bytes. */
#define FORMAT_CHANGE_LEN (2 * FMT_LEN + 8)
const char *format_change(char buf[FORMAT_CHANGE_LEN], optnum delta, const char *mag,
			  optnum percent);

/* Wall seconds as local "14:02:11"; "n/a" when not finite. */
const char *format_clock(char buf[FMT_LEN], double t);

/* A timeline's scale label: a "nice" value with no trailing zeros, bytes
 * in IEC units ("25 GiB", "2.5 GiB"), others with an SI prefix ("2.5 k",
 * "100 %", "2"). */
const char *format_axis(char buf[FMT_LEN], double v, const char *unit);

#endif
