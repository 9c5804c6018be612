/* A run's retries: which chunks failed and whether a later attempt of the
 * same chunk came; see retries.h. */
#include "roastop/retries.h"

#include "roastop/strutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void retries_init(struct retries *rt)
{
	memset(rt, 0, sizeof(*rt));
	strmap_init(&rt->chunks, sizeof(struct retry_chunk), RETRIES_MAX_CHUNKS);
	strmap_init(&rt->by_type, sizeof(uint64_t), RETRIES_MAX_TYPES + 1); /* + "(other)" */
}

void retries_free(struct retries *rt)
{
	strmap_free(&rt->chunks);
	strmap_free(&rt->by_type);
	retries_init(rt);
}

void retries_set_pool(struct retries *rt, struct strmap_pool *pool)
{
	strmap_set_pool(&rt->chunks, pool, 0);
	strmap_set_pool(&rt->by_type, pool, 0);
}

/* The chunk's identity within its run: the hash of its file (a bounded
 * key whatever the path's length) and its entry range; false without
 * them. */
static bool retries_key(const struct ev_chunk *c, char *buf, size_t size)
{
	if (!c->file || !c->entry_start.valid || !c->entry_stop.valid ||
	    !isfinite(c->entry_start.value) || !isfinite(c->entry_stop.value))
		return false;
	snprintf(buf, size, "%016llx:%.17g-%.17g",
		 (unsigned long long)strmap_hash(c->file, strlen(c->file)), c->entry_start.value,
		 c->entry_stop.value);
	return true;
}

/* The attempt e->error failed was retried: counted under its type. */
static void retries_count(struct retries *rt, const struct retry_chunk *e, char *prev,
			  size_t size)
{
	rt->count++;
	strutil_copy(prev, size, e->error);
	const char *type = e->error[0] ? e->error : "(unknown)";
	bool added = false;
	if (rt->by_type.count >= RETRIES_MAX_TYPES && !strmap_get(&rt->by_type, type))
		type = "(other)";
	uint64_t *n = strmap_upsert(&rt->by_type, type, &added);
	if (n)
		(*n)++;
}

enum retry_failure retries_failed(struct retries *rt, const struct ev_chunk *c, char *prev,
				  size_t size)
{
	char key[96];
	if (!retries_key(c, key, sizeof(key))) {
		rt->untracked++;
		return RETRY_FIRST;
	}
	bool added = false;
	struct retry_chunk *e = strmap_upsert(&rt->chunks, key, &added);
	if (!e) {
		rt->overflow++;
		return RETRY_FIRST;
	}
	bool again = e->failing;
	if (again)
		retries_count(rt, e, prev, size);
	e->failed_attempts++;
	e->failing = true;
	strutil_copy(e->error, sizeof(e->error), c->error);
	return again ? RETRY_AGAIN : RETRY_FIRST;
}

bool retries_succeeded(struct retries *rt, const struct ev_chunk *c, char *prev, size_t size)
{
	char key[96];
	if (rt->chunks.count == 0 || !retries_key(c, key, sizeof(key)))
		return false;
	struct retry_chunk *e = strmap_get(&rt->chunks, key);
	if (!e || !e->failing)
		return false;
	retries_count(rt, e, prev, size);
	e->failing = false;
	rt->recovered++;
	return true;
}
