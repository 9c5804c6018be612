/* The index's load is at most 1/2. The map sits on the chunk hot path
 * (several lookups per event at > 1 M events/s), so keys are hashed eight
 * bytes at a time, the hash is kept per entry so a probe compares strings
 * only on a 32-bit match, and a lookup allocates nothing. */
#include "roastop/strmap.h"
#include "roastop/strutil.h"

#include <stdlib.h>
#include <string.h>

#define STRMAP_MIN_ENTRIES 8u
/* entry numbers are stored + 1 in a uint32_t index slot */
#define STRMAP_HARD_MAX ((size_t)UINT32_MAX / 4)

#define MIX_K1 0x9E3779B97F4A7C15ull
#define MIX_K2 0xFF51AFD7ED558CCDull
#define MIX_K3 0xC4CEB9FE1A85EC53ull

/* The n < 8 bytes at p as one word without a variable-length memcpy:
 * overlapping reads cover every byte, and the length is in the seed, so
 * two keys that read alike have different lengths or equal bytes. */
static uint64_t load_short(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	if (n >= 4)
		return strutil_load32(p) << 32 | strutil_load32(p + n - 4);
	if (n == 0)
		return 0;
	return (uint64_t)u[0] << 16 | (uint64_t)u[n / 2] << 8 | u[n - 1];
}

static uint64_t mix_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * MIX_K2;
	return h ^ (h >> 32);
}

/* Multiply-xorshift over 8-byte words in two independent lanes (so the
 * multiplies of a long path overlap), the last 16 bytes read overlapping
 * the rest, then a full avalanche so that the low bits used for the slot
 * depend on every byte of the key. */
uint64_t strmap_hash(const char *s, size_t len)
{
	uint64_t a = MIX_K1 ^ (uint64_t)len, b = MIX_K3;
	const char *p = s;
	size_t n = len;
	for (; n > 16; p += 16, n -= 16) {
		a = mix_word(a, strutil_load64(p));
		b = mix_word(b, strutil_load64(p + 8));
	}
	if (len >= 16) {
		a = mix_word(a, strutil_load64(s + len - 16));
		b = mix_word(b, strutil_load64(s + len - 8));
	} else if (n >= 8) {
		a = mix_word(a, strutil_load64(p));
		b = mix_word(b, strutil_load64(p + n - 8));
	} else {
		b = mix_word(b, load_short(p, n));
	}
	uint64_t h = mix_word(a, b);
	h ^= h >> 33;
	h *= MIX_K3;
	h ^= h >> 33;
	return h;
}

static uint32_t hash_key(const char *s, size_t len)
{
	return (uint32_t)strmap_hash(s, len);
}

void strmap_init(struct strmap *m, size_t val_size, size_t max_entries)
{
	memset(m, 0, sizeof(*m));
	m->val_size = val_size ? val_size : 1;
	m->max_entries = max_entries;
}

/* An entry's bytes against the pool: key, value, key pointer and hash,
 * two index slots (the index is at most half full), the value's own. */
static size_t entry_cost(const struct strmap *m, size_t key_len)
{
	return key_len + 1 + m->val_size + sizeof(char *) + 3 * sizeof(uint32_t) + m->entry_extra;
}

bool strmap_pool_fits(const struct strmap_pool *pool, size_t bytes)
{
	return !pool || pool->used + bytes <= pool->cap;
}

void strmap_pool_charge(struct strmap_pool *pool, size_t bytes)
{
	if (pool)
		pool->used += bytes;
}

void strmap_pool_release(struct strmap_pool *pool, size_t bytes)
{
	if (pool)
		pool->used -= bytes;
}

static void pool_release(struct strmap *m, size_t key_len)
{
	strmap_pool_release(m->pool, entry_cost(m, key_len));
}

void strmap_set_pool(struct strmap *m, struct strmap_pool *pool, size_t entry_extra)
{
	for (size_t i = 0; i < m->count; i++)
		pool_release(m, strlen(m->keys[i]));
	m->pool = pool;
	m->entry_extra = entry_extra;
	for (size_t i = 0; pool && i < m->count; i++)
		strmap_pool_charge(pool, entry_cost(m, strlen(m->keys[i])));
}

void strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->count; i++) {
		pool_release(m, strlen(m->keys[i]));
		free(m->keys[i]);
	}
	free(m->keys);
	free(m->vals);
	free(m->hashes);
	free(m->index);
	struct strmap_pool *pool = m->pool;
	size_t extra = m->entry_extra;
	strmap_init(m, m->val_size, m->max_entries);
	m->pool = pool;
	m->entry_extra = extra;
}

/* The slot holding key, or the empty slot where it would go. The index is
 * never more than half full, so an empty slot always ends the loop. */
static size_t probe(const struct strmap *m, const char *key, uint32_t h, bool *found)
{
	size_t mask = m->index_cap - 1, i = h & mask;
	for (;; i = (i + 1) & mask) {
		uint32_t e = m->index[i];
		if (e == 0) {
			*found = false;
			return i;
		}
		if (m->hashes[e - 1] == h && strcmp(m->keys[e - 1], key) == 0) {
			*found = true;
			return i;
		}
	}
}

static void *val_ptr(const struct strmap *m, size_t e)
{
	return m->vals + e * m->val_size;
}

void *strmap_get(const struct strmap *m, const char *key)
{
	if (!m->index_cap || !key)
		return NULL;
	bool found;
	size_t slot = probe(m, key, hash_key(key, strlen(key)), &found);
	return found ? val_ptr(m, m->index[slot] - 1) : NULL;
}

/* Every entry into an all-empty index. */
static void index_fill(struct strmap *m)
{
	size_t mask = m->index_cap - 1;
	for (size_t e = 0; e < m->count; e++) {
		size_t i = m->hashes[e] & mask;
		while (m->index[i])
			i = (i + 1) & mask;
		m->index[i] = (uint32_t)(e + 1);
	}
}

static int index_rebuild(struct strmap *m, size_t cap)
{
	uint32_t *idx = calloc(cap, sizeof(*idx));
	if (!idx)
		return -1;
	free(m->index);
	m->index = idx;
	m->index_cap = cap;
	index_fill(m);
	return 0;
}

/* Doubles the entry arrays (never past max_entries). Each array is
 * committed as soon as it is reallocated, and cap_entries only once all
 * three are, so a failure leaves a consistent map. */
static int entries_grow(struct strmap *m, size_t limit)
{
	size_t cap = m->cap_entries ? m->cap_entries * 2 : STRMAP_MIN_ENTRIES;
	if (cap > limit)
		cap = limit;
	if (cap > SIZE_MAX / m->val_size)
		return -1;
	char **keys = realloc(m->keys, cap * sizeof(*keys));
	if (!keys)
		return -1;
	m->keys = keys;
	uint32_t *hashes = realloc(m->hashes, cap * sizeof(*hashes));
	if (!hashes)
		return -1;
	m->hashes = hashes;
	unsigned char *vals = realloc(m->vals, cap * m->val_size);
	if (!vals)
		return -1;
	m->vals = vals;
	m->cap_entries = cap;
	return 0;
}

static size_t entry_limit(const struct strmap *m)
{
	if (m->max_entries && m->max_entries < STRMAP_HARD_MAX)
		return m->max_entries;
	return STRMAP_HARD_MAX;
}

/* Room for one more entry: an entry slot, and an index kept at most half
 * full. On failure nothing about the existing entries has changed. */
static int make_room(struct strmap *m)
{
	size_t limit = entry_limit(m);
	if (m->count >= limit)
		return -1;
	if (m->count == m->cap_entries && entries_grow(m, limit) != 0)
		return -1;
	if (2 * (m->count + 1) > m->index_cap) {
		size_t cap = m->index_cap ? m->index_cap * 2 : 2 * STRMAP_MIN_ENTRIES;
		if (index_rebuild(m, cap) != 0)
			return -1;
	}
	return 0;
}

void *strmap_upsert(struct strmap *m, const char *key, bool *added)
{
	*added = false;
	if (!key)
		return NULL;
	size_t len = strlen(key);
	uint32_t h = hash_key(key, len);
	bool found = false;
	if (m->index_cap) {
		size_t slot = probe(m, key, h, &found);
		if (found)
			return val_ptr(m, m->index[slot] - 1);
	}
	size_t cost = entry_cost(m, len);
	if (!strmap_pool_fits(m->pool, cost))
		return NULL;
	if (make_room(m) != 0)
		return NULL;
	char *k = malloc(len + 1);
	if (!k)
		return NULL;
	strmap_pool_charge(m->pool, cost);
	memcpy(k, key, len + 1);
	size_t e = m->count, slot = probe(m, key, h, &found);
	m->keys[e] = k;
	m->hashes[e] = h;
	m->index[slot] = (uint32_t)(e + 1);
	m->count++;
	void *v = val_ptr(m, e);
	memset(v, 0, m->val_size);
	*added = true;
	return v;
}

void *strmap_upsert_hint(struct strmap *m, const char *key, bool *added, size_t *hint)
{
	*added = false;
	if (key && *hint && *hint <= m->count && strcmp(m->keys[*hint - 1], key) == 0)
		return val_ptr(m, *hint - 1);
	void *v = strmap_upsert(m, key, added);
	if (v)
		*hint = (size_t)((unsigned char *)v - m->vals) / m->val_size + 1;
	return v;
}

const char *strmap_key_at(const struct strmap *m, size_t i)
{
	return i < m->count ? m->keys[i] : NULL;
}

void *strmap_val_at(const struct strmap *m, size_t i)
{
	return i < m->count ? val_ptr(m, i) : NULL;
}

/* One pass: kept entries slide down in order, dropped keys are freed, and
 * the index is rebuilt in place (same capacity, so it cannot fail). */
size_t strmap_retain(struct strmap *m, bool (*keep)(void *val, void *ctx), void *ctx)
{
	size_t j = 0;
	for (size_t i = 0; i < m->count; i++) {
		if (!keep(val_ptr(m, i), ctx)) {
			pool_release(m, strlen(m->keys[i]));
			free(m->keys[i]);
			continue;
		}
		if (j != i) {
			m->keys[j] = m->keys[i];
			m->hashes[j] = m->hashes[i];
			memcpy(val_ptr(m, j), val_ptr(m, i), m->val_size);
		}
		j++;
	}
	size_t dropped = m->count - j;
	m->count = j;
	if (dropped && m->index_cap) {
		memset(m->index, 0, m->index_cap * sizeof(*m->index));
		index_fill(m);
	}
	return dropped;
}
