/* cJSON's allocator is global (cJSON_InitHooks): the decoders point it at
 * an arena for one parse (dask_json.c, event_json.c) on the loop's thread,
 * while the history's threads (app_previous.c) parse measurements with
 * malloc and free them (compare.c). Each holds this lock from its parse to
 * its tree's end, so that no tree is allocated by one allocator and freed
 * by the other. */
#ifndef ROASTOP_CJSON_LOCK_H
#define ROASTOP_CJSON_LOCK_H

#include <stddef.h>

struct arena;
struct cJSON;

void cjson_lock(void);
void cjson_unlock(void);
/* Parses text into mem (freed with it, never with cJSON_Delete), under the
 * lock; end as cJSON_ParseWithLengthOpts's (NULL: not wanted). */
struct cJSON *cjson_lock_parse(struct arena *mem, const char *text, size_t len,
			       const char **end);

#endif
