/* String helpers for fixed-size buffers. */
#ifndef ROASTOP_STRUTIL_H
#define ROASTOP_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Copies src (NULL = "") into dst of size bytes, truncating on a UTF-8
 * character boundary; always NUL-terminates. */
void strutil_copy(char *dst, size_t size, const char *src);
/* Likewise, but a src too long keeps its end (of a path: the file name,
 * what tells files apart), starting on a UTF-8 character boundary. */
void strutil_copy_tail(char *dst, size_t size, const char *src);

/* Well-formed, NUL-terminated UTF-8: no overlong forms, no surrogates,
 * nothing above U+10FFFF. */
bool strutil_utf8_ok(const unsigned char *s);

/* The value of one hex digit (either case), -1 for any other byte. */
int strutil_hexval(char c);

#endif
