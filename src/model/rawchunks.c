#include "roastop/rawchunks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/strutil.h"

#define RAWCHUNKS_FIRST_CAP 256u
#define RAWCHUNKS_SEED 0x726f6173746f70ull /* "roastop": a replay keeps the same sample */

static const char *const field_names[RC__COUNT] = {
	"t_start", "t_end", "duration", "mem_before_mb", "mem_after_mb", "mem_delta_mb",
	"bytes_read", "timestamp", "num_events", "entry_start", "entry_stop",
	"num_branches_accessed", "accessed_bytes", "accessed_uncompressed_bytes",
	"branches_read_percent", "bytes_read_percent", "cpu_time", "cpu_wait",
};

const char *rawchunks_field_name(enum rawchunk_field f)
{
	return f < RC__COUNT ? field_names[f] : NULL;
}

void rawchunks_init(struct rawchunks *s)
{
	memset(s, 0, sizeof(*s));
	s->rng = RAWCHUNKS_SEED;
}

void rawchunks_set_pool(struct rawchunks *s, struct strmap_pool *pool)
{
	strmap_pool_release(s->pool, s->cap * sizeof(struct rawchunk));
	s->pool = pool;
	strmap_pool_charge(pool, s->cap * sizeof(struct rawchunk));
}

void rawchunks_free(struct rawchunks *s)
{
	rawchunks_set_pool(s, NULL);
	free(s->items);
	rawchunks_init(s);
}

/* Room for one more record; false once the cap is final. */
static bool rawchunks_room(struct rawchunks *s)
{
	if (s->n < s->cap)
		return true;
	if (s->capped)
		return false;
	size_t cap = s->cap ? s->cap * 2 : RAWCHUNKS_FIRST_CAP;
	if (cap > RAWCHUNKS_MAX)
		cap = RAWCHUNKS_MAX;
	size_t more = (cap - s->cap) * sizeof(struct rawchunk);
	struct rawchunk *items = NULL;
	if (strmap_pool_fits(s->pool, more))
		items = realloc(s->items, cap * sizeof(*items));
	if (!items) { /* the pool or the heap refused: sample into what there is */
		s->capped = true;
		return false;
	}
	s->items = items;
	s->cap = cap;
	s->capped = cap == RAWCHUNKS_MAX;
	strmap_pool_charge(s->pool, more);
	return true;
}

/* splitmix64: fast, and its one word of state is the whole sample's seed. */
static uint64_t rawchunks_next(struct rawchunks *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rawchunks_num(optnum v)
{
	return v.valid && isfinite(v.value) ? v.value : NAN;
}

static void rawchunks_fill(struct rawchunk *e, uint64_t seq, const struct ev_chunk *c)
{
	const optnum in[RC__COUNT] = {
		[RC_T_START] = c->t_start, [RC_T_END] = c->t_end,
		[RC_DURATION] = optnum_of(event_chunk_duration(c)),
		[RC_MEM_BEFORE_MB] = c->mem_before_mb, [RC_MEM_AFTER_MB] = c->mem_after_mb,
		[RC_MEM_DELTA_MB] = c->mem_delta_mb, [RC_BYTES_READ] = c->bytes_read,
		[RC_TIMESTAMP] = c->timestamp, [RC_NUM_EVENTS] = c->num_events,
		[RC_ENTRY_START] = c->entry_start, [RC_ENTRY_STOP] = c->entry_stop,
		[RC_NUM_BRANCHES_ACCESSED] = c->num_branches_accessed,
		[RC_ACCESSED_BYTES] = c->accessed_bytes,
		[RC_ACCESSED_UNCOMPRESSED_BYTES] = c->accessed_uncompressed_bytes,
		[RC_BRANCHES_READ_PERCENT] = c->branches_read_percent,
		[RC_BYTES_READ_PERCENT] = c->bytes_read_percent, [RC_CPU_TIME] = c->cpu_time,
		[RC_CPU_WAIT] = c->cpu_wait,
	};
	e->seq = seq;
	for (size_t i = 0; i < RC__COUNT; i++)
		e->v[i] = rawchunks_num(in[i]);
	strutil_copy_tail(e->dataset, sizeof(e->dataset), c->dataset);
	strutil_copy_tail(e->worker, sizeof(e->worker), c->worker);
	strutil_copy_tail(e->uuid, sizeof(e->uuid), c->uuid);
	strutil_copy_tail(e->file, sizeof(e->file), c->file);
}

void rawchunks_add(struct rawchunks *s, const struct ev_chunk *c)
{
	uint64_t seq = s->total++;
	if (rawchunks_room(s)) {
		rawchunks_fill(&s->items[s->n++], seq, c);
		return;
	}
	if (s->cap == 0)
		return;
	/* algorithm R: the (seq+1)-th chunk takes a slot with chance cap/(seq+1) */
	uint64_t j = rawchunks_next(s) % (seq + 1);
	if (j < s->cap)
		rawchunks_fill(&s->items[j], seq, c);
}

bool rawchunks_sampled(const struct rawchunks *s)
{
	return s->total > s->n;
}

static int rawchunks_cmp(const void *a, const void *b)
{
	uint64_t x = (*(const struct rawchunk *const *)a)->seq;
	uint64_t y = (*(const struct rawchunk *const *)b)->seq;
	return (x > y) - (x < y);
}

void rawchunks_ordered(const struct rawchunks *s, const struct rawchunk **out)
{
	for (size_t i = 0; i < s->n; i++)
		out[i] = &s->items[i];
	if (rawchunks_sampled(s))
		qsort(out, s->n, sizeof(*out), rawchunks_cmp);
}
