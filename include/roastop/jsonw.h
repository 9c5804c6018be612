/* A streaming JSON writer into a strbuf, the product's one JSON writer: no
 * tree, so a metrics.json with 100,000 files costs its text and nothing
 * more. Keys in the order written; two-space indentation, except inside a
 * flat container (jsonw_object_flat), written on one line without spaces,
 * its numbers in 15 significant digits, or 17 when 15 do not read back
 * within a relative DBL_EPSILON (the compact form metrics.json's roastop
 * blocks have always had, cJSON's). */
#ifndef ROASTOP_JSONW_H
#define ROASTOP_JSONW_H

#include "roastop/strbuf.h"

#define JSONW_MAX_DEPTH 32

struct jsonw {
	struct strbuf *out;
	int depth;
	int flat; /* 0, or the depth from which items are written on one line */
	bool has_items[JSONW_MAX_DEPTH];
};

void jsonw_init(struct jsonw *w, struct strbuf *out);
/* key is NULL at the top level and inside arrays. */
void jsonw_object(struct jsonw *w, const char *key);
void jsonw_array(struct jsonw *w, const char *key);
/* An object written on one line, with everything inside it. */
void jsonw_object_flat(struct jsonw *w, const char *key);
void jsonw_end(struct jsonw *w, char close); /* '}' or ']' */
void jsonw_num(struct jsonw *w, const char *key, double v); /* non-finite -> null */
void jsonw_opt(struct jsonw *w, const char *key, optnum v); /* invalid -> null */
void jsonw_str(struct jsonw *w, const char *key, const char *s); /* NULL -> null */
void jsonw_bool(struct jsonw *w, const char *key, bool b);
void jsonw_raw(struct jsonw *w, const char *key, const char *json); /* already JSON */

#endif
