/* The N largest items by a key (the slowest chunks), in fixed memory: a
 * min-heap of capacity TOPK_CAP; strings are copied into fixed buffers. */
#ifndef ROASTOP_TOPK_H
#define ROASTOP_TOPK_H

#include "roastop/common.h"

#define TOPK_CAP 32
#define TOPK_STR 160

struct topk_item {
	double duration;
	optnum entry_start, entry_stop, num_events;
	char file[TOPK_STR];
	char dataset[TOPK_STR / 2];
	char worker[TOPK_STR / 2];
};

struct topk {
	size_t len;
	struct topk_item items[TOPK_CAP]; /* heap order */
};

void topk_init(struct topk *k);
/* Offers an item; kept when among the TOPK_CAP largest durations so far.
 * Strings may be NULL and are truncated (on a UTF-8 boundary) to fit. */
void topk_offer(struct topk *k, double duration, const char *file, const char *dataset,
		const char *worker, optnum entry_start, optnum entry_stop, optnum num_events);
/* Copies the items into out sorted by duration, largest first; returns count. */
size_t topk_sorted(const struct topk *k, struct topk_item *out, size_t max);

#endif
