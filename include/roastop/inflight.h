/* Chunks in flight: every chunk_start not yet matched by its chunk, in
 * bounded memory (docs/metrics.md, "Chunks in flight"). A chunk is matched
 * to its start by (host, pid, start_seq): the start's own sequence number,
 * which the chunk record repeats. A chunk whose worker leaves the cluster
 * is moved to the lost list. */
#ifndef ROASTOP_INFLIGHT_H
#define ROASTOP_INFLIGHT_H

#include "roastop/common.h"
#include "roastop/event.h"
#include "roastop/strmap.h"

/* Starts held at once (a thousand workers of sixteen threads); a start past
 * it is counted (overflow). Allocated as the set grows, charged to the pool. */
#define INFLIGHT_MAX 16384u
#define INFLIGHT_LOST_KEPT 64u /* the latest lost chunks, shown and written */
#define INFLIGHT_FILE_LEN 160u /* a longer path keeps its end (the file name) */
#define INFLIGHT_NAME_LEN 64u
/* The most a start's receive time is moved back by its own t_start: a
 * start the sender's heartbeat announces arrives up to a beat (1 s, plus a
 * busy worker's lateness) after its chunk began, and a sender's clock
 * behind roastop's ages its chunks by no more than this. */
#define INFLIGHT_BACKDATE_MAX 1.5

struct inflight_chunk {
	uint64_t hash;
	double pid, seq; /* the sender (with host) and its start's seq */
	double t_seen; /* when the chunk began on roastop's clock: the age counts from it */
	double t_lost; /* when its worker left; NAN while in flight */
	optnum entry_start, entry_stop;
	char host[INFLIGHT_NAME_LEN];
	char worker[INFLIGHT_NAME_LEN];
	char dataset[INFLIGHT_NAME_LEN];
	char file[INFLIGHT_FILE_LEN];
};

struct inflight {
	struct inflight_chunk *items; /* dense, unordered */
	uint32_t *index; /* open addressing: item index + 1; 0 = empty */
	size_t n, cap, index_cap;
	struct strmap_pool *pool; /* charged with what is allocated; NULL: none */
	uint64_t starts; /* chunk_start events taken */
	uint64_t matched; /* chunks that ended a start */
	uint64_t unmatched; /* chunks with start_seq whose start was not held */
	uint64_t replaced; /* a start whose key was held already (a restarted sender) */
	uint64_t overflow; /* starts refused at INFLIGHT_MAX (or out of memory) */
	uint64_t lost; /* chunks whose worker left the cluster */
	struct inflight_chunk lost_items[INFLIGHT_LOST_KEPT]; /* ring */
};

void inflight_init(struct inflight *f);
void inflight_free(struct inflight *f);
/* Charges the set's memory, present and future, to pool (NULL: none). */
void inflight_set_pool(struct inflight *f, struct strmap_pool *pool);
/* A chunk_start (the start's fields in an ev_chunk) received at t, its
 * chunk begun at t less the time since its t_start, at most
 * INFLIGHT_BACKDATE_MAX. 0 when held, 1 when refused (no host/pid/seq, or
 * the set is full: counted). */
int inflight_start(struct inflight *f, double t, const struct ev_chunk *c);
/* A chunk ended: drops its start when held. True when one was. */
bool inflight_end(struct inflight *f, const struct ev_chunk *c);
/* Moves every chunk running on the worker named name or at addr (either
 * may be NULL) and, when pid is known, in that process (a worker restarted
 * under its name runs in another) to the lost list, at t; calls
 * told(ctx, chunk) for each. Returns how many. */
size_t inflight_lose_worker(struct inflight *f, double t, const char *name, const char *addr,
			    optnum pid, void (*told)(void *ctx, const struct inflight_chunk *c),
			    void *ctx);
/* Up to max chunks in flight, oldest first, as pointers into f. */
size_t inflight_oldest(const struct inflight *f, const struct inflight_chunk **out, size_t max);
/* The i-th latest lost chunk (0 = latest), or NULL. */
const struct inflight_chunk *inflight_lost_get(const struct inflight *f, size_t i);

#endif
