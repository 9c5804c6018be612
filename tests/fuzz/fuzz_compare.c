/* A measurement's metrics.json of hostile bytes (roastop compare reads
 * anyone's): never a crash; either read, and then compared as whole lines
 * with no control byte (80 columns hold real numbers; a hostile 1e300 in a
 * count widens its row, within FMT_LEN a cell), or -1 with one line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "roastop/compare.h"
#include "roastop/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *t)
{
	for (const char *line = t; *line;) {
		const char *nl = strchr(line, '\n');
		if (!nl || nl - line > 80 + 3 * FMT_LEN)
			abort();
		for (const char *p = line; p < nl; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				abort();
		line = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct compare_side s;
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	memset(&s, 0, sizeof(s));
	strcpy(s.path, "fuzz/metrics.json");
	char err[256] = "";
	int rc = compare_parse(text, &s, err, sizeof(err));
	free(text);
	if (rc == -1 && (!err[0] || strchr(err, '\n')))
		abort();
	if (rc == 0) {
		if (s.n_findings > COMPARE_MAX_FINDINGS || s.n_findings > s.findings_total)
			abort();
		struct strbuf o;
		strbuf_init(&o);
		compare_write(&o, &s, &s);
		if (!o.failed)
			check_text(o.data);
		strbuf_free(&o);
	}
	return 0;
}
