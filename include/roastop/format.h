/* Number formatting shared by the summary tables and the screen, so both
 * print a value the same way. Invalid values print as "n/a". */
#ifndef ROASTOP_FORMAT_H
#define ROASTOP_FORMAT_H

#include "roastop/common.h"

#define FMT_LEN 48

/* 1536 -> "1.50 KB" (binary steps, as roastcoffea's summary) */
const char *format_bytes(char buf[FMT_LEN], optnum v);
/* 42.3 -> "42.3s", 125 -> "2m 5s", 3725 -> "1h 2m 5s" (as roastcoffea) */
const char *format_duration(char buf[FMT_LEN], optnum v);
/* 1234567 -> "1,234,567" (rounded to an integer) */
const char *format_count(char buf[FMT_LEN], optnum v);
/* printf-style with one double, or "n/a": format_num(buf, v, "%.1f kHz") */
const char *format_num(char buf[FMT_LEN], optnum v, const char *fmt);

/* Three significant digits with an SI prefix: (1234, "Hz") -> "1.23 kHz",
 * (0.5, "ev/s") -> "0.50 ev/s". unit may be NULL. */
const char *format_si(char buf[FMT_LEN], optnum v, const char *unit);

#endif
