/* String helpers for fixed-size buffers. */
#ifndef ROASTOP_STRUTIL_H
#define ROASTOP_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Copies src (NULL = "") into dst of size bytes, truncating on a UTF-8
 * character boundary; always NUL-terminates. */
void strutil_copy(char *dst, size_t size, const char *src);
/* strutil_copy, control bytes and DEL shown as '?': text from a file or
 * the wire fit for one line of a table or terminal. Returns dst. */
char *strutil_copy_line(char *dst, size_t size, const char *src);
/* Like strutil_copy, but a src too long keeps its end (of a path: the file name,
 * what tells files apart), starting on a UTF-8 character boundary. */
void strutil_copy_tail(char *dst, size_t size, const char *src);

/* Well-formed, NUL-terminated UTF-8: no overlong forms, no surrogates,
 * nothing above U+10FFFF. */
bool strutil_utf8_ok(const unsigned char *s);

/* Untrusted text for a one-line message: at most max bytes of s (len, or
 * up to a NUL), control bytes as '?', "..." when cut on a UTF-8 boundary.
 * buf holds max + 4 bytes. */
const char *strutil_shown(char *buf, size_t max, const char *s, size_t len);

/* The value of one hex digit (either case), -1 for any other byte. */
int strutil_hexval(char c);

/* 8 and 4 bytes at p, unaligned, in host order (strmap_hash's word loads). */
static inline uint64_t strutil_load64(const char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t strutil_load32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

#endif
