#include "roastop/strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(struct strbuf *sb)
{
	*sb = (struct strbuf){ 0 };
}

void strbuf_free(struct strbuf *sb)
{
	free(sb->data);
	strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	sb->failed = false;
	if (sb->data)
		sb->data[0] = '\0';
}

static bool strbuf_reserve(struct strbuf *sb, size_t extra)
{
	if (sb->failed)
		return false;
	if (sb->len + extra + 1 <= sb->cap)
		return true;
	size_t cap = sb->cap ? sb->cap : 256;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	char *p = realloc(sb->data, cap);
	if (!p) {
		sb->failed = true;
		return false;
	}
	sb->data = p;
	sb->cap = cap;
	return true;
}

void strbuf_append(struct strbuf *sb, const char *s, size_t len)
{
	if (!strbuf_reserve(sb, len))
		return;
	memcpy(sb->data + sb->len, s, len);
	sb->len += len;
	sb->data[sb->len] = '\0';
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_append(sb, s, strlen(s));
}

void strbuf_appendf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !strbuf_reserve(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void strbuf_json_string(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	if (!strbuf_reserve(sb, strlen(s) + 2))
		return;
	strbuf_append(sb, "\"", 1);
	const char *run = s;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		strbuf_append(sb, run, (size_t)(p - run));
		run = p + 1;
		char esc[6] = { '\\', (char)c, 0, 0, 0, 0 };
		size_t n = 2;
		if (c == '\n')
			esc[1] = 'n';
		else if (c == '\t')
			esc[1] = 't';
		else if (c == '\r')
			esc[1] = 'r';
		else if (c < 0x20) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		strbuf_append(sb, esc, n);
	}
	strbuf_append(sb, run, strlen(run));
	strbuf_append(sb, "\"", 1);
}

/* Integers print as integers; a value that is exactly k / 10^d for d <= 6
 * prints with d decimals; anything else with %.17g, which always
 * round-trips. No strtod round trips: the recorder is on the hot path. */
void strbuf_json_number(struct strbuf *sb, double v)
{
	static const double p10[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6 };
	if (!isfinite(v)) {
		strbuf_append(sb, "null", 4);
		return;
	}
	for (int d = 0; d <= 6; d++) {
		double x = v * p10[d];
		if (fabs(x) >= 9007199254740992.0)
			break;
		double k = nearbyint(x);
		if (k != x || k / p10[d] != v)
			continue;
		long long ik = (long long)k;
		if (d == 0) {
			strbuf_appendf(sb, "%lld", ik);
			return;
		}
		long long mag = ik < 0 ? -ik : ik, den = (long long)p10[d];
		strbuf_appendf(sb, "%s%lld.%0*lld", ik < 0 ? "-" : "", mag / den, d, mag % den);
		return;
	}
	strbuf_appendf(sb, "%.17g", v);
}
