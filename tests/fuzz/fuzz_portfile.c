/* Port files of hostile bytes: never a crash, and a port only when the
 * bytes are its decimal digits (with at most a final newline). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/portfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int port = portfile_parse((const char *)data, size);
	if (port < 0 || port > 65535)
		abort();
	if (port == 0)
		return 0;
	char back[16];
	int n = snprintf(back, sizeof(back), "%d", port);
	size_t body = size > 0 && data[size - 1] == '\n' ? size - 1 : size;
	if ((size_t)n != body || memcmp(back, data, body) != 0)
		abort();
	return 0;
}
