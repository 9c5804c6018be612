#include "roastop/inflight.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/strmap.h"
#include "roastop/strutil.h"

#define INFLIGHT_FIRST_CAP 64u

void inflight_init(struct inflight *f)
{
	memset(f, 0, sizeof(*f));
}

/* What cap entries cost: the item and its two index slots. */
static size_t inflight_bytes(size_t cap)
{
	return cap * (sizeof(struct inflight_chunk) + 2 * sizeof(uint32_t));
}

void inflight_set_pool(struct inflight *f, struct strmap_pool *pool)
{
	strmap_pool_release(f->pool, inflight_bytes(f->cap));
	f->pool = pool;
	strmap_pool_charge(pool, inflight_bytes(f->cap));
}

void inflight_free(struct inflight *f)
{
	inflight_set_pool(f, NULL);
	free(f->items);
	free(f->index);
	inflight_init(f);
}

static uint64_t inflight_hash(const char *host, double pid, double seq)
{
	char key[INFLIGHT_NAME_LEN + 48];
	size_t n = strlen(host);
	if (n > INFLIGHT_NAME_LEN - 1)
		n = INFLIGHT_NAME_LEN - 1; /* as the entry keeps it */
	memcpy(key, host, n);
	memcpy(key + n, &pid, sizeof(pid));
	memcpy(key + n + sizeof(pid), &seq, sizeof(seq));
	return strmap_hash(key, n + sizeof(pid) + sizeof(seq));
}

static bool inflight_same(const struct inflight_chunk *c, uint64_t h, const char *host, double pid,
			  double seq)
{
	return c->hash == h && c->pid == pid && c->seq == seq &&
	       strncmp(c->host, host, INFLIGHT_NAME_LEN - 1) == 0;
}

/* The index slot holding the key, or the empty slot where it would go. */
static size_t inflight_slot(const struct inflight *f, uint64_t h, const char *host, double pid,
			    double seq)
{
	size_t mask = f->index_cap - 1;
	for (size_t s = h & mask;; s = (s + 1) & mask) {
		uint32_t i = f->index[s];
		if (!i || inflight_same(&f->items[i - 1], h, host, pid, seq))
			return s;
	}
}

static void inflight_reindex(struct inflight *f)
{
	memset(f->index, 0, f->index_cap * sizeof(*f->index));
	for (size_t i = 0; i < f->n; i++) {
		const struct inflight_chunk *c = &f->items[i];
		f->index[inflight_slot(f, c->hash, c->host, c->pid, c->seq)] = (uint32_t)(i + 1);
	}
}

/* Room for one more; false at the cap or out of memory. */
static bool inflight_room(struct inflight *f)
{
	if (f->n < f->cap)
		return true;
	size_t cap = f->cap ? f->cap * 2 : INFLIGHT_FIRST_CAP;
	if (f->cap >= INFLIGHT_MAX)
		return false;
	if (cap > INFLIGHT_MAX)
		cap = INFLIGHT_MAX;
	size_t more = inflight_bytes(cap) - inflight_bytes(f->cap);
	if (!strmap_pool_fits(f->pool, more))
		return false;
	struct inflight_chunk *items = realloc(f->items, cap * sizeof(*items));
	if (!items)
		return false;
	f->items = items;
	uint32_t *index = malloc(cap * 2 * sizeof(*index)); /* load <= 1/2 */
	if (!index)
		return false;
	free(f->index);
	f->index = index;
	f->index_cap = cap * 2;
	f->cap = cap;
	strmap_pool_charge(f->pool, more);
	inflight_reindex(f);
	return true;
}

/* When the chunk began, on roastop's clock: the receive time t, moved back
 * by the time the sender says its chunk had run (t - t_start; the start
 * is sent at a heartbeat, up to a beat after the chunk began), by no more
 * than INFLIGHT_BACKDATE_MAX nor forward (a sender's clock ahead). */
static double inflight_began(double t, const struct ev_chunk *c)
{
	if (!c->t_start.valid)
		return t;
	return t - fmin(fmax(t - c->t_start.value, 0.0), INFLIGHT_BACKDATE_MAX);
}

static void inflight_fill(struct inflight_chunk *e, uint64_t h, double t, const struct ev_chunk *c)
{
	e->hash = h;
	e->pid = c->pid.value;
	e->seq = c->seq.value;
	e->t_seen = inflight_began(t, c);
	e->t_lost = NAN;
	e->entry_start = c->entry_start;
	e->entry_stop = c->entry_stop;
	strutil_copy(e->host, sizeof(e->host), c->host);
	strutil_copy(e->worker, sizeof(e->worker), c->worker);
	strutil_copy(e->dataset, sizeof(e->dataset), c->dataset);
	strutil_copy_tail(e->file, sizeof(e->file), c->file);
}

int inflight_start(struct inflight *f, double t, const struct ev_chunk *c)
{
	if (!c->host || !c->pid.valid || !c->seq.valid)
		return 1;
	uint64_t h = inflight_hash(c->host, c->pid.value, c->seq.value);
	if (f->index_cap) {
		size_t s = inflight_slot(f, h, c->host, c->pid.value, c->seq.value);
		if (f->index[s]) { /* a restarted sender reusing its numbers */
			f->replaced++;
			f->starts++;
			inflight_fill(&f->items[f->index[s] - 1], h, t, c);
			return 0;
		}
	}
	if (!inflight_room(f)) {
		f->overflow++;
		return 1;
	}
	struct inflight_chunk *e = &f->items[f->n];
	inflight_fill(e, h, t, c);
	f->index[inflight_slot(f, h, e->host, e->pid, e->seq)] = (uint32_t)(f->n + 1);
	f->n++;
	f->starts++;
	return 0;
}

/* Removes item i: the last item takes its place, and the probe chains
 * after the freed slot are re-placed (no tombstones). */
static void inflight_remove(struct inflight *f, size_t i)
{
	struct inflight_chunk *e = &f->items[i];
	size_t mask = f->index_cap - 1;
	size_t s = inflight_slot(f, e->hash, e->host, e->pid, e->seq);
	f->index[s] = 0;
	for (size_t k = (s + 1) & mask; f->index[k]; k = (k + 1) & mask) {
		uint32_t moved = f->index[k];
		const struct inflight_chunk *m = &f->items[moved - 1];
		f->index[k] = 0;
		f->index[inflight_slot(f, m->hash, m->host, m->pid, m->seq)] = moved;
	}
	size_t last = f->n - 1;
	if (i != last) {
		f->items[i] = f->items[last];
		const struct inflight_chunk *m = &f->items[i];
		f->index[inflight_slot(f, m->hash, m->host, m->pid, m->seq)] = (uint32_t)(i + 1);
	}
	f->n--;
}

bool inflight_end(struct inflight *f, const struct ev_chunk *c)
{
	if (!c->start_seq.valid)
		return false;
	if (!c->host || !c->pid.valid || !f->n) {
		f->unmatched++;
		return false;
	}
	uint64_t h = inflight_hash(c->host, c->pid.value, c->start_seq.value);
	size_t s = inflight_slot(f, h, c->host, c->pid.value, c->start_seq.value);
	if (!f->index[s]) {
		f->unmatched++;
		return false;
	}
	inflight_remove(f, f->index[s] - 1);
	f->matched++;
	return true;
}

static bool inflight_on(const struct inflight_chunk *c, const char *name, const char *addr,
			optnum pid)
{
	if (!c->worker[0] || (pid.valid && pid.value != c->pid))
		return false;
	return (name && name[0] && strcmp(c->worker, name) == 0) ||
	       (addr && addr[0] && strcmp(c->worker, addr) == 0);
}

size_t inflight_lose_worker(struct inflight *f, double t, const char *name, const char *addr,
			    optnum pid, void (*told)(void *ctx, const struct inflight_chunk *c),
			    void *ctx)
{
	size_t n = 0;
	for (size_t i = f->n; i-- > 0;) {
		if (!inflight_on(&f->items[i], name, addr, pid))
			continue;
		struct inflight_chunk *kept = &f->lost_items[f->lost % INFLIGHT_LOST_KEPT];
		*kept = f->items[i];
		kept->t_lost = t;
		f->lost++;
		n++;
		inflight_remove(f, i);
		if (told)
			told(ctx, kept);
	}
	return n;
}

static int inflight_by_age(const void *a, const void *b)
{
	const struct inflight_chunk *x = *(const struct inflight_chunk *const *)a;
	const struct inflight_chunk *y = *(const struct inflight_chunk *const *)b;
	if (x->t_seen != y->t_seen)
		return x->t_seen < y->t_seen ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t inflight_oldest(const struct inflight *f, const struct inflight_chunk **out, size_t max)
{
	if (max >= f->n) {
		for (size_t i = 0; i < f->n; i++)
			out[i] = &f->items[i];
		qsort(out, f->n, sizeof(*out), inflight_by_age);
		return f->n;
	}
	/* the max oldest by insertion: max is then a screenful */
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct inflight_chunk *c = &f->items[i];
		if (n == max && inflight_by_age(&c, &out[n - 1]) >= 0)
			continue;
		size_t k = n < max ? n++ : n - 1;
		while (k > 0 && inflight_by_age(&c, &out[k - 1]) < 0) {
			out[k] = out[k - 1];
			k--;
		}
		out[k] = c;
	}
	return n;
}

const struct inflight_chunk *inflight_lost_get(const struct inflight *f, size_t i)
{
	if (i >= f->lost || i >= INFLIGHT_LOST_KEPT)
		return NULL;
	return &f->lost_items[(f->lost - 1 - i) % INFLIGHT_LOST_KEPT];
}
