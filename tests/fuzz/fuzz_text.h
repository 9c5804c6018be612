/* The fuzzer's bytes as a NUL-terminated text the parsers may change in
 * place; NULL when out of memory. free() it. */
#ifndef ROASTOP_FUZZ_TEXT_H
#define ROASTOP_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	return text;
}

#endif
