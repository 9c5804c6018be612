/* Hostile datagrams through framing, tags, decoding and sequencing, with
 * and without authentication: never a crash, every datagram accounted. */
#include <stdlib.h>
#include <string.h>

#include "roastop/udp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count(void *ctx, const struct event *ev)
{
	(void)ev;
	(*(uint64_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct udp *open_u, *keyed;
	static struct auth_key key;
	if (!open_u) {
		open_u = udp_new(NULL);
		keyed = udp_new(&key);
	}
	struct udp *us[2] = { open_u, keyed };
	for (int i = 0; i < 2; i++) {
		uint64_t delivered = 0;
		struct udp_stats before, after;
		udp_get_stats(us[i], &before);
		udp_process(us[i], (const char *)data, size, 1767225600.0, count, &delivered);
		udp_get_stats(us[i], &after);
		if (after.datagrams != before.datagrams + 1 || delivered > 1)
			abort();
	}
	return 0;
}
