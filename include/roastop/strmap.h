/* String-keyed hash map with values stored inline (val_size bytes each),
 * entries kept in insertion order (index 0..count-1) so output is stable.
 * Open addressing with linear probing over an index table. Keys are copied.
 * A map has a maximum entry count: past it, strmap_upsert returns NULL and
 * the caller counts the overflow instead of growing without bound. */
#ifndef ROASTOP_STRMAP_H
#define ROASTOP_STRMAP_H

#include "roastop/common.h"

/* Bytes shared by several maps (a session's runs, session.h): an entry
 * costs its key, its value, the map's own bookkeeping and what the caller
 * says each value owns (entry_extra); an insert past cap is refused like
 * one past max_entries. */
struct strmap_pool {
	size_t used, cap;
};

struct strmap {
	size_t val_size;
	struct strmap_pool *pool; /* NULL: only max_entries bounds the map */
	size_t entry_extra; /* bytes each value owns outside the map, for the pool */
	size_t max_entries;
	size_t count;
	size_t cap_entries; /* allocated entry slots */
	char **keys; /* insertion order */
	unsigned char *vals; /* insertion order, val_size each */
	uint32_t *hashes;
	uint32_t *index; /* slot -> entry index + 1; 0 = empty */
	size_t index_cap; /* power of two */
};

/* max_entries 0 means no cap of the caller's (a built-in 1 G still holds). */
void strmap_init(struct strmap *m, size_t val_size, size_t max_entries);
void strmap_free(struct strmap *m);
/* The pool's accounting, for the maps and for any table that charges its
 * own arrays to it (pool NULL: no pool, always room). */
bool strmap_pool_fits(const struct strmap_pool *pool, size_t bytes);
void strmap_pool_charge(struct strmap_pool *pool, size_t bytes);
void strmap_pool_release(struct strmap_pool *pool, size_t bytes);

/* Charges the map's entries, present and future, to pool (NULL: none). */
void strmap_set_pool(struct strmap *m, struct strmap_pool *pool, size_t entry_extra);
/* Pointer to the value for key, or NULL. Valid until the next upsert. */
void *strmap_get(const struct strmap *m, const char *key);
/* Finds or inserts key; a new value is zero-filled and *added set true.
 * NULL when the map is full or memory is out. Valid until the next upsert. */
void *strmap_upsert(struct strmap *m, const char *key, bool *added);
/* strmap_upsert that first tries the entry *hint names (its index + 1; 0
 * for none) with one strcmp, and leaves the entry found or added in *hint:
 * for keys that mostly repeat at a call site (a run's dataset, a chunk's
 * sections in their order), the hash and probe are skipped. */
void *strmap_upsert_hint(struct strmap *m, const char *key, bool *added, size_t *hint);
const char *strmap_key_at(const struct strmap *m, size_t i);
/* The map's hash of len bytes at s, all 64 bits (the index uses the low
 * 32): for fingerprints of keys kept outside a map. */
uint64_t strmap_hash(const char *s, size_t len);
void *strmap_val_at(const struct strmap *m, size_t i);
/* Removes every entry for which keep(value, ctx) is false (keep may release
 * what the value owns), keeping the others in their order; returns how many
 * went. Entry indices, pointers and hints are stale afterwards. */
size_t strmap_retain(struct strmap *m, bool (*keep)(void *val, void *ctx), void *ctx);

#endif
