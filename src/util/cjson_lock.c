/* The lock around cJSON's global allocator (cjson_lock.h). */
#include "roastop/cjson_lock.h"

#include <pthread.h>

static pthread_mutex_t cjson_mutex = PTHREAD_MUTEX_INITIALIZER;

void cjson_lock(void)
{
	pthread_mutex_lock(&cjson_mutex);
}

void cjson_unlock(void)
{
	pthread_mutex_unlock(&cjson_mutex);
}
