#include "roastop/format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *na(char buf[FMT_LEN])
{
	memcpy(buf, "n/a", 4);
	return buf;
}

const char *format_bytes(char buf[FMT_LEN], optnum v)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB", "PB" };
	if (!v.valid || !isfinite(v.value))
		return na(buf);
	double x = v.value;
	size_t u = 0;
	while (fabs(x) >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		x /= 1024.0;
		u++;
	}
	snprintf(buf, FMT_LEN, "%.2f %s", x, units[u]);
	return buf;
}

/* roastcoffea's _format_time: "42.3s" under a minute, then "2m 5s",
 * "1h 2m 5s" (truncated to whole seconds). Beyond a million hours the
 * integer split would overflow, so those print in seconds. */
const char *format_duration(char buf[FMT_LEN], optnum v)
{
	if (!v.valid || !isfinite(v.value))
		return na(buf);
	double s = v.value;
	if (fabs(s) < 60 || fabs(s) >= 3.6e9) {
		snprintf(buf, FMT_LEN, fabs(s) < 60 ? "%.1fs" : "%.3es", s);
		return buf;
	}
	const char *sign = s < 0 ? "-" : "";
	long long total = (long long)fabs(s), h = total / 3600, m = (total / 60) % 60,
		  sec = total % 60;
	if (h == 0)
		snprintf(buf, FMT_LEN, "%s%lldm %llds", sign, m, sec);
	else
		snprintf(buf, FMT_LEN, "%s%lldh %lldm %llds", sign, h, m, sec);
	return buf;
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

const char *format_si(char buf[FMT_LEN], optnum v, const char *unit)
{
	static const char *const prefixes[] = { "", "k", "M", "G", "T", "P", "E" };
	if (!v.valid || !isfinite(v.value))
		return na(buf);
	double x = v.value;
	size_t p = 0;
	while (fabs(x) >= 999.5 && p + 1 < sizeof(prefixes) / sizeof(prefixes[0])) {
		x /= 1000.0;
		p++;
	}
	int decimals = fabs(x) >= 99.95 ? 0 : (fabs(x) >= 9.995 ? 1 : 2);
	snprintf(buf, FMT_LEN, "%.*f %s%s", decimals, x, prefixes[p], unit ? unit : "");
	return buf;
}
