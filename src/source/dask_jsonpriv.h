/* Shared by the Dask body decoders only (dask_json*.c): the decoding
 * context and the checked reads every route makes. */
#ifndef ROASTOP_DASK_JSONPRIV_H
#define ROASTOP_DASK_JSONPRIV_H

#include <cjson/cJSON.h>

#include "roastop/dask_json.h"
#include "roastop/range.h"

/* The arena being filled, the first error. */
struct dec {
	struct arena *mem;
	enum dask_error error;
	char *err;
	size_t errsz;
};

/* The first failure is kept (its reason and message); later ones are not. */
void dask_dec_fail(struct dec *d, enum dask_error e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
optnum dask_dec_ranged(struct dec *d, double x, const char *what, enum range_qty q);
optnum dask_dec_numval(struct dec *d, const cJSON *v, const char *what, enum range_qty q);
optnum dask_dec_num(struct dec *d, const cJSON *o, const char *key, enum range_qty q);
const char *dask_dec_strval(struct dec *d, const cJSON *v, const char *what);
const char *dask_dec_str(struct dec *d, const cJSON *o, const char *key);
void *dask_dec_array(struct dec *d, size_t n, size_t size);
void *dask_dec_list(struct dec *d, const cJSON *node, bool object, const char *what,
		    size_t elem);
cJSON *dask_dec_parse(struct dec *d, struct arena *tree, const char *body, size_t len);

/* Reads a parsed document into the events (evs[0]'s arena first). */
typedef void (*doc_read_fn)(struct dec *d, const cJSON *root, struct event *const evs[],
			    void *ctx);

enum dask_error dask_dec_document(const char *body, size_t len, double t,
				  struct event *const evs[], size_t n, doc_read_fn read,
				  void *ctx, char *err, size_t errsz);

#endif
