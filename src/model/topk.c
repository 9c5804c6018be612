/* The slowest chunks: a min-heap on duration, so the smallest kept item is
 * at the root and a new item either replaces it or is dropped. */
#include "roastop/topk.h"
#include "roastop/strutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void topk_init(struct topk *k)
{
	memset(k, 0, sizeof(*k));
}

static void swap(struct topk_item *a, struct topk_item *b)
{
	struct topk_item t = *a;
	*a = *b;
	*b = t;
}

static void sift_up(struct topk *k, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (k->items[p].duration <= k->items[i].duration)
			return;
		swap(&k->items[p], &k->items[i]);
		i = p;
	}
}

static void sift_down(struct topk *k, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < k->len && k->items[l].duration < k->items[m].duration)
			m = l;
		if (r < k->len && k->items[r].duration < k->items[m].duration)
			m = r;
		if (m == i)
			return;
		swap(&k->items[m], &k->items[i]);
		i = m;
	}
}

void topk_offer(struct topk *k, double duration, const char *file, const char *dataset,
		const char *worker, optnum entry_start, optnum entry_stop, optnum num_events)
{
	/* NaN compares false both ways and would break the heap order */
	if (!isfinite(duration))
		return;
	if (k->len == TOPK_CAP && duration <= k->items[0].duration)
		return;
	size_t at = k->len < TOPK_CAP ? k->len++ : 0;
	struct topk_item *it = &k->items[at];
	it->duration = duration;
	it->entry_start = entry_start;
	it->entry_stop = entry_stop;
	it->num_events = num_events;
	strutil_copy(it->file, sizeof(it->file), file);
	strutil_copy(it->dataset, sizeof(it->dataset), dataset);
	strutil_copy(it->worker, sizeof(it->worker), worker);
	if (at == 0 && k->len == TOPK_CAP)
		sift_down(k, 0);
	else
		sift_up(k, at);
}

/* Ties are broken by file, then entry_start, so that every reader (screen,
 * summary) lists equal durations in one order whatever the heap held. */
static int by_duration_desc(const void *pa, const void *pb)
{
	const struct topk_item *a = pa, *b = pb;
	if (a->duration != b->duration)
		return a->duration < b->duration ? 1 : -1;
	int c = strcmp(a->file, b->file);
	if (c)
		return c;
	double x = a->entry_start.valid ? a->entry_start.value : -1;
	double y = b->entry_start.valid ? b->entry_start.value : -1;
	return (x > y) - (x < y);
}

size_t topk_sorted(const struct topk *k, struct topk_item *out, size_t max)
{
	struct topk_item tmp[TOPK_CAP];
	if (!max || !k->len)
		return 0;
	memcpy(tmp, k->items, k->len * sizeof(*tmp));
	qsort(tmp, k->len, sizeof(*tmp), by_duration_desc);
	size_t n = k->len < max ? k->len : max;
	memcpy(out, tmp, n * sizeof(*out));
	return n;
}
