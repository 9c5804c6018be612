#include "roastop/format.h"

#include <math.h>
#include <time.h>
#include <stdio.h>
#include <string.h>

static const char *const iec_units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
static const char *const si_prefixes[] = { "", "k", "M", "G", "T", "P", "E" };

/* A mantissa that prints with 0 decimals rounds to an integer: at 1023.5
 * (IEC) or 999.5 (SI) it would read "1024" or "1000", so it takes the next
 * step instead. */
#define IEC_TOP 1023.5
#define SI_TOP 999.5

static const char *na(char buf[FMT_LEN])
{
	memcpy(buf, "n/a", 4);
	return buf;
}

/* Decimals giving three significant digits below 1000, at most two. */
static int sig3_decimals(double x)
{
	x = fabs(x);
	return x >= 99.95 ? 0 : (x >= 9.995 ? 1 : 2);
}

/* The index and size of the step (a power of base) |v| prints in. */
static size_t step_of(double v, double base, double top, size_t n_steps, double *step)
{
	double s = 1;
	size_t i = 0;
	while (fabs(v) >= top * s && i + 1 < n_steps) {
		s *= base;
		i++;
	}
	*step = s;
	return i;
}

double format_bytes_step(double v, const char **name)
{
	double step;
	size_t i = step_of(v, 1024, IEC_TOP, ROASTOP_ARRAY_LEN(iec_units), &step);
	if (name)
		*name = iec_units[i];
	return step;
}

const char *format_bytes(char buf[FMT_LEN], optnum v)
{
	const char *name;
	if (!v.valid || !isfinite(v.value))
		return na(buf);
	double step = format_bytes_step(v.value, &name), x = v.value / step;
	if (step == 1) /* whole bytes; + 0.0 turns a rounded -0 into 0 */
		snprintf(buf, FMT_LEN, "%.0f B", round(x) + 0.0);
	else
		snprintf(buf, FMT_LEN, "%.*f %s", sig3_decimals(x), x, name);
	return buf;
}

const char *format_mib(char buf[FMT_LEN], optnum mib)
{
	return format_bytes(buf, mib.valid ? optnum_of(mib.value * 1048576.0) : mib);
}

/* Under a second in ms (three significant digits); from there roastcoffea's
 * _format_time: "42.3s" under a minute, then "2m 5s", "1h 2m 5s" (truncated
 * to whole seconds). Under 10 us, two significant digits ("0.0042 ms"), never
 * a nonzero "0.00 ms". Beyond a million hours the integer split would
 * overflow, so those print in seconds. */
const char *format_duration(char buf[FMT_LEN], optnum v)
{
	if (!v.valid || !isfinite(v.value))
		return na(buf);
	double s = v.value;
	if (s == 0) {
		memcpy(buf, "0s", 3);
		return buf;
	}
	if (fabs(s) < 1e-5) { /* "%.2f" would print a nonzero value as "0.00 ms" */
		snprintf(buf, FMT_LEN, "%.2g ms", s * 1000);
		return buf;
	}
	if (fabs(s) < 0.9995) {
		snprintf(buf, FMT_LEN, "%.*f ms", sig3_decimals(s * 1000), s * 1000);
		return buf;
	}
	if (fabs(s) < 59.95 || fabs(s) >= 3.6e9) { /* 59.96 would round to "60.0s" */
		snprintf(buf, FMT_LEN, fabs(s) < 60 ? "%.1fs" : "%.3es", s);
		return buf;
	}
	const char *sign = s < 0 ? "-" : "";
	long long total = (long long)fabs(s);
	total = total < 60 ? 60 : total;
	long long h = total / 3600, m = (total / 60) % 60, sec = total % 60;
	if (h == 0)
		snprintf(buf, FMT_LEN, "%s%lldm %llds", sign, m, sec);
	else
		snprintf(buf, FMT_LEN, "%s%lldh %lldm %llds", sign, h, m, sec);
	return buf;
}

const char *format_section(char buf[FMT_LEN], enum format_section kind, optnum v)
{
	if (kind == FORMAT_SECTION_TIME)
		return format_duration(buf, v);
	if (kind == FORMAT_SECTION_MEM)
		return format_mib(buf, v);
	return format_bytes(buf, v);
}

const char *format_count(char buf[FMT_LEN], optnum v)
{
	if (!v.valid || !isfinite(v.value) || fabs(v.value) >= 1e18)
		return na(buf);
	char digits[32];
	long long n = llround(v.value);
	int len = snprintf(digits, sizeof(digits), "%lld", n < 0 ? -n : n);
	size_t o = 0;
	if (n < 0)
		buf[o++] = '-';
	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *format_num(char buf[FMT_LEN], optnum v, const char *fmt)
{
	if (!v.valid || !isfinite(v.value))
		return na(buf);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(buf, FMT_LEN, fmt, v.value);
#pragma GCC diagnostic pop
	return buf;
}

const char *format_change(char buf[FORMAT_CHANGE_LEN], optnum delta, const char *mag,
			  optnum percent)
{
	if (!delta.valid || !isfinite(delta.value))
		return na(buf);
	char rel[FMT_LEN];
	bool huge = percent.valid && fabs(percent.value) >= 1e5;
	format_num(rel, percent, huge ? "%+.2e %%" : "%+.1f %%");
	snprintf(buf, FORMAT_CHANGE_LEN, "%s%s (%s)", delta.value < 0 ? "-" : "+", mag, rel);
	return buf;
}

/* "<number> <prefix><unit>", or the bare number when both are empty. */
static const char *with_unit(char buf[FMT_LEN], const char *num, const char *prefix,
			     const char *unit)
{
	unit = unit ? unit : "";
	/* a unit too long for the buffer is cut: the number always shows */
	int n = snprintf(buf, FMT_LEN, "%s%s%s%s", num, prefix[0] || unit[0] ? " " : "", prefix, unit);
	return n < 0 ? na(buf) : buf;
}

const char *format_si(char buf[FMT_LEN], optnum v, const char *unit)
{
	char num[24];
	if (!v.valid || !isfinite(v.value))
		return na(buf);
	double step, x = v.value;
	size_t p = step_of(x, 1000, SI_TOP, ROASTOP_ARRAY_LEN(si_prefixes), &step);
	x /= step;
	if (fabs(x) >= SI_TOP) { /* past the largest prefix */
		snprintf(num, sizeof(num), "%.2e", v.value);
		return with_unit(buf, num, "", unit);
	}
	if (fabs(x) < 0.005) /* "0", not "0.00" or "-0.00" */
		snprintf(num, sizeof(num), "0");
	else
		snprintf(num, sizeof(num), "%.*f", sig3_decimals(x), x);
	return with_unit(buf, num, si_prefixes[p], unit);
}

const char *format_rate(char buf[FMT_LEN], optnum v, double scale, const char *unit)
{
	if (!v.valid)
		return na(buf);
	return format_si(buf, optnum_of(v.value * scale), unit);
}

const char *format_axis(char buf[FMT_LEN], double v, const char *unit)
{
	char num[24];
	if (!isfinite(v))
		return na(buf);
	if (unit && strcmp(unit, "B") == 0) {
		const char *name;
		double step = format_bytes_step(v, &name);
		snprintf(num, sizeof(num), "%.3g", v / step);
		return with_unit(buf, num, name, "");
	}
	double step;
	size_t p = step_of(v, 1000, SI_TOP, ROASTOP_ARRAY_LEN(si_prefixes), &step);
	snprintf(num, sizeof(num), "%.3g", v / step);
	return with_unit(buf, num, si_prefixes[p], unit);
}

const char *format_clock(char buf[FMT_LEN], double t)
{
	if (!isfinite(t) || fabs(t) > 1e15) /* no time_t can hold it */
		return na(buf);
	time_t s = (time_t)t;
	struct tm tm;
	if (!localtime_r(&s, &tm) || !strftime(buf, FMT_LEN, "%H:%M:%S", &tm))
		return na(buf);
	return buf;
}
