#include "roastop/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK_MIN 4096u
#define ARENA_LARGE (ARENA_BLOCK_MIN / 4) /* bigger requests get their own block */
#define ARENA_ALIGN 16u

struct arena_block {
	struct arena_block *next;
	size_t cap;
	size_t used;
	_Alignas(16) unsigned char data[];
};

static struct arena_block *block_new(size_t cap)
{
	if (cap > SIZE_MAX - sizeof(struct arena_block))
		return NULL; /* the header would wrap the size to a tiny block */
	struct arena_block *b = malloc(sizeof(*b) + cap);
	if (b)
		*b = (struct arena_block){ .cap = cap };
	return b;
}

void arena_init(struct arena *a, size_t limit)
{
	*a = (struct arena){ .limit = limit };
}

static void blocks_free(struct arena_block *b)
{
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
}

void arena_free(struct arena *a)
{
	blocks_free(a->first);
	blocks_free(a->large);
	arena_init(a, a->limit);
}

/* Small blocks are kept, so the next event of the same size allocates
 * nothing; large allocations are returned (they are rare, e.g. the worker
 * array of a scheduler sample). */
void arena_reset(struct arena *a)
{
	for (struct arena_block *b = a->first; b; b = b->next)
		b->used = 0;
	blocks_free(a->large);
	a->large = NULL;
	a->head = a->first;
	a->total = 0;
	a->refused = false;
}

static void *alloc_large(struct arena *a, size_t need)
{
	struct arena_block *b = block_new(need);
	if (!b)
		return NULL;
	b->next = a->large;
	a->large = b;
	b->used = need;
	a->total += need;
	return b->data;
}

static size_t align_up(size_t n)
{
	return (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

void *arena_alloc(struct arena *a, size_t size)
{
	size_t need = align_up(size ? size : 1);
	/* need < size: the rounding wrapped. The limit test subtracts, as
	 * total + need could wrap past a huge request. */
	if (need < size || (a->limit && (a->total > a->limit || need > a->limit - a->total))) {
		a->refused = true;
		return NULL;
	}
	if (need > ARENA_LARGE)
		return alloc_large(a, need);
	/* Small requests fill blocks in order: a block is left only when the
	 * request does not fit, wasting less than ARENA_LARGE of it; blocks past
	 * head are empty after a reset, so the chain never grows beyond what
	 * the largest event needed. */
	struct arena_block *b = a->head;
	if (b && b->cap - b->used < need && b->next)
		b = b->next;
	if (!b || b->cap - b->used < need) {
		struct arena_block *nb = block_new(ARENA_BLOCK_MIN);
		if (!nb)
			return NULL;
		if (b) {
			nb->next = b->next;
			b->next = nb;
		} else {
			a->first = nb;
		}
		b = nb;
	}
	a->head = b;
	void *p = b->data + b->used;
	b->used += need;
	a->total += need;
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	char *p = arena_alloc(a, len + 1);
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}
