#include "roastop/strutil.h"

#include <stdint.h>
#include <string.h>

void strutil_copy(char *dst, size_t size, const char *src)
{
	if (!src) {
		dst[0] = '\0';
		return;
	}
	size_t n = strlen(src);
	if (n >= size) {
		n = size - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
			n--; /* do not cut a UTF-8 sequence */
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void strutil_copy_tail(char *dst, size_t size, const char *src)
{
	size_t n = src ? strlen(src) : 0;
	if (n >= size) {
		src += n - (size - 1);
		while (((unsigned char)*src & 0xC0) == 0x80)
			src++; /* do not start inside a UTF-8 sequence */
	}
	strutil_copy(dst, size, src);
}

char *strutil_copy_line(char *dst, size_t size, const char *src)
{
	strutil_copy(dst, size, src);
	for (char *p = dst; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return dst;
}

/* Well-formed UTF-8: no overlong forms, no surrogates, <= U+10FFFF. */
bool strutil_utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned char c = *s;
		size_t n;
		uint32_t cp;
		if (c < 0x80) {
			s++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			n = 1;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			n = 2;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		for (size_t i = 1; i <= n; i++) {
			if ((s[i] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i] & 0x3F);
		}
		static const uint32_t min_cp[4] = { 0, 0x80, 0x800, 0x10000 };
		if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		s += n + 1;
	}
	return true;
}

int strutil_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

const char *strutil_shown(char *buf, size_t max, const char *s, size_t len)
{
	size_t i = 0;
	for (; i < len && s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	bool cut = i < len && s[i];
	if (cut && i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80) {
		while (i > 0 && ((unsigned char)buf[i - 1] & 0xc0) == 0x80)
			i--; /* back over the continuation bytes of a cut character */
		if (i > 0 && (unsigned char)buf[i - 1] >= 0xc0)
			i--; /* and its lead byte */
	}
	buf[i] = '\0';
	if (cut)
		memcpy(buf + i, "...", 4);
	return buf;
}
