/* A run's identity; see identity.h. */
#include "roastop/identity.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "roastop/strutil.h"

/* splitmix64's finalizer: each name's hash spread before they are summed,
 * so that the sum does not depend on the order the names came in. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t names_hash(const struct strmap *map)
{
	uint64_t h = 0;
	for (size_t i = 0; i < map->count; i++) {
		const char *k = strmap_key_at(map, i);
		h += mix(strmap_hash(k, strlen(k)));
	}
	return h;
}

void identity_of_run(const struct run *r, const struct metrics *m, struct identity *id)
{
	memset(id, 0, sizeof(*id));
	strutil_copy(id->name, sizeof(id->name), r->name);
	strutil_copy(id->processor, sizeof(id->processor), r->processor);
	id->n_datasets = (uint32_t)r->datasets.count;
	id->n_files = (uint32_t)r->files.count;
	id->datasets_hash = names_hash(&r->datasets);
	id->files_hash = names_hash(&r->files);
	optnum c = stats_max(&r->chunk_events);
	id->chunk_events = c.valid ? c.value : 0;
	id->t_start = m->elapsed_time_seconds.valid ? m->t_start : NAN;
}

void identity_key(const struct identity *id, char out[17])
{
	uint64_t h = mix(strmap_hash(id->processor, strlen(id->processor)));
	h = mix(h + id->datasets_hash) + mix(id->files_hash ^ id->n_files);
	h = mix(h + (uint64_t)id->chunk_events);
	snprintf(out, 17, "%016" PRIx64, h);
}

static void write_hex(struct jsonw *w, const char *key, uint64_t v)
{
	char hex[17];
	snprintf(hex, sizeof(hex), "%016" PRIx64, v);
	jsonw_str(w, key, hex);
}

void identity_write(struct jsonw *w, const struct identity *id)
{
	char key[17];
	identity_key(id, key);
	jsonw_object(w, "identity");
	jsonw_str(w, "key", key);
	jsonw_str(w, "name", id->name[0] ? id->name : NULL);
	jsonw_str(w, "processor", id->processor[0] ? id->processor : NULL);
	jsonw_num(w, "datasets", id->n_datasets);
	write_hex(w, "datasets_hash", id->datasets_hash);
	jsonw_num(w, "files", id->n_files);
	write_hex(w, "files_hash", id->files_hash);
	jsonw_num(w, "chunk_events", id->chunk_events > 0 ? id->chunk_events : NAN);
	jsonw_num(w, "t_start", id->t_start);
	jsonw_end(w, '}');
}

static double read_num(const cJSON *obj, const char *key, double absent)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : absent;
}

static uint64_t read_hex(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? strtoull(v->valuestring, NULL, 16) : 0;
}

/* A count of the file: a whole number within uint32, else 0. */
static uint32_t read_count(const cJSON *obj, const char *key)
{
	double v = read_num(obj, key, 0);
	return v >= 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

static void read_str(const cJSON *obj, const char *key, char *out, size_t size)
{
	strutil_copy_line(out, size, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key)));
}

bool identity_read(const struct cJSON *obj, struct identity *id)
{
	memset(id, 0, sizeof(*id));
	id->t_start = NAN;
	if (!cJSON_IsObject(obj))
		return false;
	read_str(obj, "name", id->name, sizeof(id->name));
	read_str(obj, "processor", id->processor, sizeof(id->processor));
	id->n_datasets = read_count(obj, "datasets");
	id->n_files = read_count(obj, "files");
	id->datasets_hash = read_hex(obj, "datasets_hash");
	id->files_hash = read_hex(obj, "files_hash");
	double c = read_num(obj, "chunk_events", 0);
	id->chunk_events = c > 0 && c < 1e15 ? c : 0;
	id->t_start = read_num(obj, "t_start", NAN);
	return true;
}

static void add_differs(char *out, size_t size, const char *what)
{
	size_t n = strlen(out);
	snprintf(out + n, size - n, "%s%s", n ? ", " : "", what);
}

enum identity_match identity_match(const struct identity *a, const struct identity *b,
				   char *differs, size_t size)
{
	differs[0] = '\0';
	bool by_processor = a->processor[0] || b->processor[0];
	if (by_processor ? strcmp(a->processor, b->processor) != 0
			 : !a->name[0] || strcmp(a->name, b->name) != 0)
		return IDENTITY_OTHER;
	if (a->datasets_hash != b->datasets_hash || a->n_datasets != b->n_datasets)
		add_differs(differs, size, "datasets");
	if (a->files_hash != b->files_hash || a->n_files != b->n_files)
		add_differs(differs, size, "files");
	if (a->chunk_events != b->chunk_events)
		add_differs(differs, size, "chunk size");
	return differs[0] ? IDENTITY_COMPARABLE : IDENTITY_SAME;
}
