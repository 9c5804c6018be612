#include "roastop/arena.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK_MIN 4096u
#define ARENA_ALIGN 16u

struct arena_block {
	struct arena_block *next;
	size_t cap;
	size_t used;
	_Alignas(16) unsigned char data[];
};

static struct arena_block *block_new(size_t cap)
{
	struct arena_block *b = malloc(sizeof(*b) + cap);
	if (!b)
		return NULL;
	b->next = NULL;
	b->cap = cap;
	b->used = 0;
	return b;
}

void arena_init(struct arena *a, size_t limit)
{
	a->head = NULL;
	a->first = NULL;
	a->total = 0;
	a->limit = limit;
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
	arena_init(a, a->limit);
}

/* Blocks are kept: the next event of the same size allocates nothing. */
void arena_reset(struct arena *a)
{
	for (struct arena_block *b = a->first; b; b = b->next)
		b->used = 0;
	a->head = a->first;
	a->total = 0;
}

static size_t align_up(size_t n)
{
	return (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

void *arena_alloc(struct arena *a, size_t size)
{
	size_t need = align_up(size ? size : 1);
	if (need < size || (a->limit && a->total + need > a->limit))
		return NULL;
	struct arena_block *b = a->head;
	while (b && b->cap - b->used < need && b->next)
		b = b->next; /* blocks past head are empty after a reset */
	if (!b || b->cap - b->used < need) {
		size_t cap = need > ARENA_BLOCK_MIN ? need : ARENA_BLOCK_MIN;
		struct arena_block *nb = block_new(cap);
		if (!nb)
			return NULL;
		if (b) {
			nb->next = b->next;
			b->next = nb;
		} else {
			a->first = nb;
		}
		a->head = nb;
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
