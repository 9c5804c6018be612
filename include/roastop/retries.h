/* Retries told apart from failures (docs/metrics.md, "Retries"): a chunk
 * is its file and entry range within the run. Only chunks that failed at
 * least once are kept, at most RETRIES_MAX_CHUNKS; a failure past it (or
 * without a file and an entry range) stays a plain failure, counted. */
#ifndef ROASTOP_RETRIES_H
#define ROASTOP_RETRIES_H

#include "roastop/common.h"
#include "roastop/event.h"
#include "roastop/strmap.h"

#define RETRIES_MAX_CHUNKS 16384u
#define RETRIES_MAX_TYPES 256u /* exception types; past it, "(other)" */
#define RETRIES_TYPE_LEN 64u

/* One chunk that failed at least once: ~150 bytes with its key. */
struct retry_chunk {
	uint32_t failed_attempts;
	bool failing; /* its latest attempt failed */
	char error[RETRIES_TYPE_LEN]; /* the latest failed attempt's exception type */
};

struct retries {
	struct strmap chunks; /* identity -> struct retry_chunk */
	struct strmap by_type; /* exception type of a retried attempt -> uint64_t */
	uint64_t count; /* failed attempts another attempt of the same chunk followed */
	uint64_t recovered; /* chunks whose failed attempt a success followed */
	uint64_t untracked; /* failed attempts without a file or an entry range */
	uint64_t overflow; /* failed chunks the table (or the pool) had no room for */
};

/* What a failed attempt is to its run. */
enum retry_failure {
	RETRY_FIRST, /* a chunk's first failure (or one not tracked): a new failed chunk */
	RETRY_AGAIN, /* the chunk had failed already: the same failed chunk, retried */
};

void retries_init(struct retries *rt);
void retries_free(struct retries *rt);
/* Charges the tables, present and future, to pool (NULL: none). */
void retries_set_pool(struct retries *rt, struct strmap_pool *pool);
/* A failed attempt. On RETRY_AGAIN, prev gets the exception type of the
 * attempt it retried (size bytes). */
enum retry_failure retries_failed(struct retries *rt, const struct ev_chunk *c, char *prev,
				  size_t size);
/* A successful attempt: true when it recovers a chunk whose latest attempt
 * had failed (prev gets that attempt's exception type), false for a chunk
 * never seen failing. */
bool retries_succeeded(struct retries *rt, const struct ev_chunk *c, char *prev, size_t size);

#endif
