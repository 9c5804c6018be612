/* A run's chunk records in roastcoffea's form (raw_chunk_metrics): every
 * successful chunk up to RAWCHUNKS_MAX, past it a uniform sample with a
 * fixed seed (docs/metrics.md, "Chunk records"). */
#ifndef ROASTOP_RAWCHUNKS_H
#define ROASTOP_RAWCHUNKS_H

#include "roastop/common.h"
#include "roastop/event.h"
#include "roastop/strmap.h"

/* Records kept per run, allocated as the set grows, charged to the pool. */
#define RAWCHUNKS_MAX 4096u
#define RAWCHUNKS_FILE_LEN 160u /* a longer path keeps its end (the file name) */
#define RAWCHUNKS_NAME_LEN 64u
#define RAWCHUNKS_UUID_LEN 40u

/* roastcoffea's numeric fields of a chunk record (its decorator's dict),
 * plus roastop's cpu_time and cpu_wait; in the order written. NAN: not given. */
enum rawchunk_field {
	RC_T_START, RC_T_END, RC_DURATION, RC_MEM_BEFORE_MB, RC_MEM_AFTER_MB, RC_MEM_DELTA_MB,
	RC_BYTES_READ, RC_TIMESTAMP, RC_NUM_EVENTS, RC_ENTRY_START, RC_ENTRY_STOP,
	RC_NUM_BRANCHES_ACCESSED, RC_ACCESSED_BYTES, RC_ACCESSED_UNCOMPRESSED_BYTES,
	RC_BRANCHES_READ_PERCENT, RC_BYTES_READ_PERCENT, RC_CPU_TIME, RC_CPU_WAIT, RC__COUNT
};

struct rawchunk {
	uint64_t seq; /* the chunk's place among the run's successful chunks */
	double v[RC__COUNT];
	char dataset[RAWCHUNKS_NAME_LEN];
	char worker[RAWCHUNKS_NAME_LEN];
	char uuid[RAWCHUNKS_UUID_LEN];
	char file[RAWCHUNKS_FILE_LEN];
};

struct rawchunks {
	struct rawchunk *items; /* slots; in arrival order until sampling starts */
	size_t n, cap;
	bool capped; /* cap is final (RAWCHUNKS_MAX, or the pool refused more) */
	struct strmap_pool *pool; /* charged with what is allocated; NULL: none */
	uint64_t total; /* successful chunks offered */
	uint64_t rng; /* the sample's generator state */
};

void rawchunks_init(struct rawchunks *s);
void rawchunks_free(struct rawchunks *s);
/* Charges the set's memory, present and future, to pool (NULL: none). */
void rawchunks_set_pool(struct rawchunks *s, struct strmap_pool *pool);
/* A successful chunk: kept, sampled in or left out. */
void rawchunks_add(struct rawchunks *s, const struct ev_chunk *c);
/* Whether the kept records are a sample (some chunks were left out). */
bool rawchunks_sampled(const struct rawchunks *s);
/* The kept records in arrival order, as pointers into s: out must hold
 * s->n. */
void rawchunks_ordered(const struct rawchunks *s, const struct rawchunk **out);
const char *rawchunks_field_name(enum rawchunk_field f);

#endif
