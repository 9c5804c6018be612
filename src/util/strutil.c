#include "roastop/strutil.h"

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
