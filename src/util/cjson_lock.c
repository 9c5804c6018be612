/* The lock around cJSON's global allocator (cjson_lock.h). */
#include "roastop/cjson_lock.h"
#include "roastop/arena.h"

#include <cjson/cJSON.h>
#include <pthread.h>

static pthread_mutex_t cjson_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct arena *parse_mem; /* set only under the lock */

void cjson_lock(void)
{
	pthread_mutex_lock(&cjson_mutex);
}

void cjson_unlock(void)
{
	pthread_mutex_unlock(&cjson_mutex);
}

static void *arena_hook_alloc(size_t n)
{
	return arena_alloc(parse_mem, n);
}

static void arena_hook_free(void *p)
{
	(void)p; /* freed with the arena */
}

cJSON *cjson_lock_parse(struct arena *mem, const char *text, size_t len, const char **end)
{
	cJSON_Hooks hooks = { arena_hook_alloc, arena_hook_free };
	cjson_lock();
	parse_mem = mem;
	cJSON_InitHooks(&hooks);
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, end, false);
	cJSON_InitHooks(NULL);
	parse_mem = NULL;
	cjson_unlock();
	return root;
}
