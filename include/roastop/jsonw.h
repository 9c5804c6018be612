/* A streaming JSON writer into a strbuf: no tree, so a metrics.json with
 * 100,000 files costs its text and nothing more. Two-space indentation. */
#ifndef ROASTOP_JSONW_H
#define ROASTOP_JSONW_H

#include "roastop/strbuf.h"

#define JSONW_MAX_DEPTH 32

struct jsonw {
	struct strbuf *out;
	int depth;
	bool has_items[JSONW_MAX_DEPTH];
};

void jsonw_init(struct jsonw *w, struct strbuf *out);
/* key is NULL at the top level and inside arrays. */
void jsonw_object(struct jsonw *w, const char *key);
void jsonw_array(struct jsonw *w, const char *key);
void jsonw_end(struct jsonw *w, char close); /* '}' or ']' */
void jsonw_num(struct jsonw *w, const char *key, double v); /* non-finite -> null */
void jsonw_opt(struct jsonw *w, const char *key, optnum v); /* invalid -> null */
void jsonw_str(struct jsonw *w, const char *key, const char *s); /* NULL -> null */
void jsonw_bool(struct jsonw *w, const char *key, bool b);
void jsonw_raw(struct jsonw *w, const char *key, const char *json); /* already JSON */

#endif
