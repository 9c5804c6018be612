/* Prometheus text of hostile bytes: never a crash; every line is a sample,
 * a comment, blank, or counted as rejected. */
#include <stdlib.h>

#include "roastop/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(void *ctx, const struct prom_sample *s)
{
	(void)ctx;
	if (!s->name || !s->name[0] || s->n_labels > PROM_MAX_LABELS)
		abort();
	for (size_t i = 0; i < s->n_labels; i++)
		if (!s->labels[i].name || !s->labels[i].value)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prom_stats st;
	prom_parse((const char *)data, size, check, NULL, &st);
	uint64_t lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	uint64_t rejected = 0;
	for (int e = 0; e < PROM__COUNT; e++)
		rejected += st.rejected[e];
	if (st.samples + st.comments + rejected > lines)
		abort();
	return 0;
}
