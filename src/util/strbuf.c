#include "roastop/strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
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

/* Formats straight into the spare room; only text that does not fit is
 * formatted a second time. */
void strbuf_appendf(struct strbuf *sb, const char *fmt, ...)
{
	if (!strbuf_reserve(sb, 64))
		return;
	size_t room = sb->cap - sb->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(sb->data + sb->len, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->data[sb->len] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		if (!strbuf_reserve(sb, (size_t)n)) {
			sb->data[sb->len] = '\0';
			return;
		}
		va_start(ap, fmt);
		vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
}

/* Does any of the 8 bytes at s need escaping (quote, backslash, < 0x20)?
 * SWAR: a matching byte sets its high bit; false alarms only follow a real
 * match, and the caller then goes byte by byte anyway. */
static bool word_needs_escape(const char *s)
{
	const uint64_t ones = 0x0101010101010101u;
	uint64_t x, q, b;
	memcpy(&x, s, 8);
	q = x ^ (ones * '"');
	b = x ^ (ones * '\\');
	return (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x)) &
	       0x8080808080808080u;
}

/* Written in place after reserving the worst case (every byte \u00XX). */
void strbuf_json_string_as(struct strbuf *sb, const char *s, bool short_bf)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(s);
	if (n > (SIZE_MAX - 8) / 6 || !strbuf_reserve(sb, 6 * n + 2))
		return;
	char *o = sb->data + sb->len;
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		while (i + 8 <= n && !word_needs_escape(s + i)) {
			memcpy(o, s + i, 8);
			o += 8;
			i += 8;
		}
		if (i >= n)
			break;
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			*o++ = (char)c;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"':
		case '\\': *o++ = (char)c; break;
		case '\n': *o++ = 'n'; break;
		case '\t': *o++ = 't'; break;
		case '\r': *o++ = 'r'; break;
		case '\b':
		case '\f':
			if (short_bf) {
				*o++ = c == '\b' ? 'b' : 'f';
				break;
			}
			/* fall through */
		default:
			memcpy(o, "u00", 3);
			o[3] = hex[c >> 4];
			o[4] = hex[c & 15];
			o += 5;
		}
	}
	*o++ = '"';
	*o = '\0';
	sb->len = (size_t)(o - sb->data);
}

void strbuf_json_string(struct strbuf *sb, const char *s)
{
	strbuf_json_string_as(sb, s, false);
}

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

/* v in decimal, written backwards to end at p; returns the first digit. */
static char *put_uint(char *p, uint64_t v)
{
	while (v >= 100) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

/* k (|k| < 2^53) with a point before its last d (<= 6) digits, e.g.
 * (-5, 3) -> "-0.005". No printf: the recorder calls this for every number. */
static void append_fixed(struct strbuf *sb, int64_t k, int d)
{
	static const uint64_t p10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
	char buf[48], *end = buf + sizeof(buf), *p = end;
	uint64_t mag = k < 0 ? (uint64_t)-k : (uint64_t)k;
	if (d > 0) {
		uint64_t frac = mag % p10[d];
		for (int i = 0; i < d; i++, frac /= 10)
			*--p = (char)('0' + frac % 10);
		*--p = '.';
		mag /= p10[d];
	}
	p = put_uint(p, mag);
	if (k < 0)
		*--p = '-';
	strbuf_append(sb, p, (size_t)(end - p));
}

#define EXACT_INT 9007199254740992.0 /* 2^53 */

/* Integers below 2^53 print as integers. A value whose v * 10^6 is an
 * integer k with k / 10^6 == v prints as k / 10^6 with trailing zeros
 * dropped: the decoder computes the same rational divided once, correctly
 * rounded, so it gets v back. Anything else prints with %.17g, which
 * always round-trips; not always the shortest text, never a wrong value. */
void strbuf_json_number(struct strbuf *sb, double v)
{
	if (!isfinite(v)) {
		strbuf_append(sb, "null", 4);
		return;
	}
	if (fabs(v) < EXACT_INT && (double)(int64_t)v == v) {
		append_fixed(sb, (int64_t)v, 0);
		return;
	}
	double x = v * 1e6;
	if (fabs(x) < EXACT_INT && (double)(int64_t)x == x && (double)(int64_t)x / 1e6 == v) {
		int64_t k = (int64_t)x;
		int d = 6;
		while (k % 10 == 0) { /* ends: v is no integer, so k is no multiple of 10^6 */
			k /= 10;
			d--;
		}
		append_fixed(sb, k, d);
		return;
	}
	char buf[40];
	int n = snprintf(buf, sizeof(buf), "%.17g", v);
	strbuf_append(sb, buf, (size_t)n);
}
