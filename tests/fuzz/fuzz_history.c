/* One metrics.json of hostile bytes as roastop history reads it (the
 * output directory may hold anyone's): never a crash; either -1, or a run
 * whose list line has no control byte and whose JSON parses, and whose
 * files are at most PAST_FILES, in strict order of hash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz_text.h"
#include "roastop/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct history *h)
{
	struct strbuf o;
	strbuf_init(&o);
	history_write_text(&o, h, NULL);
	for (size_t i = 0; !o.failed && i < o.len; i++)
		if (((unsigned char)o.data[i] < 0x20 && o.data[i] != '\n') || o.data[i] == 0x7f)
			abort();
	strbuf_free(&o);
	strbuf_init(&o);
	history_write_json(&o, h, "x");
	cJSON *doc = o.failed ? NULL : cJSON_Parse(o.data);
	if (!o.failed && !doc)
		abort();
	cJSON_Delete(doc);
	strbuf_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct past_run run;
	static struct past_file files[PAST_FILES];
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	memset(&run, 0, sizeof(run));
	strcpy(run.dir, "2026-01-01_10-00-00_x");
	int rc = history_parse(text, &run, files);
	free(text);
	for (size_t i = 1; rc == 0 && i < run.n_files; i++)
		if (run.n_files > PAST_FILES || run.files[i - 1].hash >= run.files[i].hash)
			abort();
	if (rc == 0) {
		struct history h = { .runs = &run, .n = 1 };
		check(&h);
	}
	return 0;
}
