/* A streaming JSON writer into a strbuf: no tree, so a large metrics.json
 * costs its text and nothing more. Each container is written in a style,
 * which the containers inside it keep. */
#ifndef ROASTOP_JSONW_H
#define ROASTOP_JSONW_H

#include "roastop/strbuf.h"

#define JSONW_MAX_DEPTH 32

enum jsonw_style {
	JSONW_INDENT, /* a line per item, two spaces a level */
	JSONW_LINE, /* one line: {"k": 1, "l": [2, 3]} */
	JSONW_COMPACT, /* one line without spaces */
	JSONW_CJSON, /* the text cJSON's compact printer gives (metrics.json's roastop blocks) */
};

struct jsonw {
	struct strbuf *out;
	int depth;
	enum jsonw_style style[JSONW_MAX_DEPTH];
	bool has_items[JSONW_MAX_DEPTH];
	bool end_line; /* the top level's end writes a newline (jsonw_init: true) */
};

/* The top level in style (jsonw_init: JSONW_INDENT). */
void jsonw_init(struct jsonw *w, struct strbuf *out);
void jsonw_init_as(struct jsonw *w, struct strbuf *out, enum jsonw_style style);
/* key is NULL at the top level and inside arrays. */
void jsonw_object(struct jsonw *w, const char *key);
void jsonw_array(struct jsonw *w, const char *key);
/* A container in style, when the one it is in is indented (else in that
 * one's: a line is not broken again). */
void jsonw_object_as(struct jsonw *w, const char *key, enum jsonw_style style);
void jsonw_array_as(struct jsonw *w, const char *key, enum jsonw_style style);
void jsonw_end(struct jsonw *w, char close); /* '}' or ']' */
void jsonw_num(struct jsonw *w, const char *key, double v); /* non-finite -> null */
void jsonw_opt(struct jsonw *w, const char *key, optnum v); /* invalid -> null */
void jsonw_str(struct jsonw *w, const char *key, const char *s); /* NULL -> null */
void jsonw_bool(struct jsonw *w, const char *key, bool b);
/* The members of object, a JSON object's compact text ("{...}", as a
 * decoder kept it), as members of the JSONW_COMPACT object w is in. */
void jsonw_members(struct jsonw *w, const char *object);

#endif
