/* Arguments split on NUL bytes: the parser never crashes, and what it
 * accepts is within the documented ranges. */
#include <stdlib.h>
#include <string.h>

#include "roastop/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { MAX_ARGS = 32 };
	char *copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	char *argv[MAX_ARGS + 1] = { "roastop" };
	int argc = 1;
	for (size_t i = 0; i < size && argc < MAX_ARGS; argc++) {
		argv[argc] = copy + i;
		i += strlen(copy + i) + 1;
	}
	struct cli_opts o;
	char err[256];
	if (cli_parse(argc, argv, NULL, &o, err, sizeof(err)) == CLI_RUN) {
		if (!(o.interval >= 0.1 && o.interval <= 3600) || o.listen_port < 0 ||
		    o.listen_port > 65535 || !(o.speed >= 0) || o.n_headers > CLI_MAX_HEADERS ||
		    !(o.checkpoint >= 0 && o.checkpoint <= 3600))
			abort();
	} else if (memchr(err, '\n', strlen(err))) {
		abort(); /* errors are one line */
	}
	free(copy);
	return 0;
}
