/* A bump allocator in linked blocks: pointers stay valid until arena_reset. */
#ifndef ROASTOP_ARENA_H
#define ROASTOP_ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct arena_block;

struct arena {
	struct arena_block *head; /* block being filled */
	struct arena_block *first; /* small blocks, kept across resets */
	struct arena_block *large; /* one per large allocation, freed at reset */
	size_t total; /* bytes handed out since the last reset */
	size_t limit; /* 0 = unlimited; otherwise arena_alloc fails past it */
	bool refused; /* a request over the limit (or too big to size) since the last reset */
};

void arena_init(struct arena *a, size_t limit);
void arena_free(struct arena *a);
/* Forget everything handed out (and refused); keeps the first block for reuse. */
void arena_reset(struct arena *a);
/* 16-byte aligned; NULL when the limit would be passed (refused is then
 * set, so a caller can tell a budget from a failure) or memory is out. */
void *arena_alloc(struct arena *a, size_t size);
/* Copies len bytes and a terminating NUL. */
char *arena_strndup(struct arena *a, const char *s, size_t len);
char *arena_strdup(struct arena *a, const char *s);

#endif
