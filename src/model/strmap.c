/* Insertion-ordered string map: dense key/value arrays plus an open-
 * addressing index (linear probing, load <= 1/2) of entry numbers. */
#include "roastop/strmap.h"

#include <stdlib.h>
#include <string.h>

#define STRMAP_MIN_ENTRIES 8

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h ? h : 1;
}

void strmap_init(struct strmap *m, size_t val_size, size_t max_entries)
{
	memset(m, 0, sizeof(*m));
	m->val_size = val_size ? val_size : 1;
	m->max_entries = max_entries;
}

void strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->count; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	free(m->hashes);
	free(m->index);
	strmap_init(m, m->val_size, m->max_entries);
}

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

void *strmap_get(const struct strmap *m, const char *key)
{
	if (!m->index_cap || !key)
		return NULL;
	bool found;
	size_t slot = probe(m, key, hash_str(key), &found);
	return found ? m->vals + (size_t)(m->index[slot] - 1) * m->val_size : NULL;
}

static int index_rebuild(struct strmap *m, size_t cap)
{
	uint32_t *idx = calloc(cap, sizeof(*idx));
	if (!idx)
		return -1;
	free(m->index);
	m->index = idx;
	m->index_cap = cap;
	for (size_t e = 0; e < m->count; e++) {
		size_t i = m->hashes[e] & (cap - 1);
		while (idx[i])
			i = (i + 1) & (cap - 1);
		idx[i] = (uint32_t)(e + 1);
	}
	return 0;
}

static int entries_grow(struct strmap *m)
{
	size_t cap = m->cap_entries ? m->cap_entries * 2 : STRMAP_MIN_ENTRIES;
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
	return index_rebuild(m, cap * 2);
}

void *strmap_upsert(struct strmap *m, const char *key, bool *added)
{
	*added = false;
	if (!key)
		return NULL;
	uint32_t h = hash_str(key);
	bool found = false;
	if (m->index_cap) {
		size_t slot = probe(m, key, h, &found);
		if (found)
			return m->vals + (size_t)(m->index[slot] - 1) * m->val_size;
	}
	if (m->max_entries && m->count >= m->max_entries)
		return NULL;
	if (m->count == m->cap_entries && entries_grow(m) != 0)
		return NULL;
	char *k = strdup(key);
	if (!k)
		return NULL;
	size_t e = m->count++, slot = probe(m, key, h, &found);
	m->keys[e] = k;
	m->hashes[e] = h;
	m->index[slot] = (uint32_t)(e + 1);
	void *v = m->vals + e * m->val_size;
	memset(v, 0, m->val_size);
	*added = true;
	return v;
}

const char *strmap_key_at(const struct strmap *m, size_t i)
{
	return i < m->count ? m->keys[i] : NULL;
}

void *strmap_val_at(const struct strmap *m, size_t i)
{
	return i < m->count ? m->vals + i * m->val_size : NULL;
}
