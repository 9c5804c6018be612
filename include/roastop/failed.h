/* The latest failed chunks of a run, each with where it ran and what it
 * read: the counts per exception type say how many, these say which file
 * and entry range to look at. A fixed ring inside struct run: no
 * allocation, the oldest overwritten. */
#ifndef ROASTOP_FAILED_H
#define ROASTOP_FAILED_H

#include <stddef.h>
#include <stdint.h>

#include "roastop/event.h"

#define FAILED_KEPT 32u
#define FAILED_FILE_LEN 160u /* a longer path keeps its end (the file name) */
#define FAILED_NAME_LEN 64u

struct failed_chunk {
	double t; /* roastop's receive time */
	optnum duration, entry_start, entry_stop;
	char error[FAILED_NAME_LEN]; /* the exception's type */
	char worker[FAILED_NAME_LEN];
	char dataset[FAILED_NAME_LEN];
	char file[FAILED_FILE_LEN];
	bool retried; /* a later attempt of the same chunk came (retries.h) */
};

struct failed {
	uint64_t n; /* every failed attempt of the run, retried ones included */
	struct failed_chunk items[FAILED_KEPT]; /* ring: the latest min(n, FAILED_KEPT) */
};

void failed_add(struct failed *f, double t, const struct ev_chunk *c);
/* Marks the kept attempts of c's chunk (its file and entry range) retried. */
void failed_mark_retried(struct failed *f, const struct ev_chunk *c);
/* The i-th latest failed chunk (0 = latest), or NULL. */
const struct failed_chunk *failed_get(const struct failed *f, size_t i);

#endif
