/* Theme files of hostile bytes: never a crash; either every key parsed, or
 * -1 with a message naming the file and the theme back at the default. */
#include <stdlib.h>
#include <string.h>

#include "roastop/theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct theme t, d;
	char err[256] = "";
	theme_default(&t);
	theme_default(&d);
	int rc = theme_parse(&t, (const char *)data, size, "fuzz.theme", err, sizeof(err));
	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1 && (strncmp(err, "fuzz.theme", 10) != 0 || memcmp(&t, &d, sizeof(t)) != 0))
		abort();
	if (rc == 0 && (strlen(t.name) == 0 || strlen(t.name) >= THEME_NAME_LEN))
		abort();
	for (int e = 0; e < TH__COUNT; e++)
		if (t.color[e].kind > TC_RGB || theme_color_number(t.color[e], 256) > 255)
			abort();
	return 0;
}
