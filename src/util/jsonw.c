#include "roastop/jsonw.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jsonw_init_as(struct jsonw *w, struct strbuf *out, enum jsonw_style style)
{
	w->out = out;
	w->depth = 0;
	w->style[0] = style;
	w->has_items[0] = false;
	w->end_line = true;
}

void jsonw_init(struct jsonw *w, struct strbuf *out)
{
	jsonw_init_as(w, out, JSONW_INDENT);
}

static enum jsonw_style style_of(const struct jsonw *w)
{
	return w->style[w->depth];
}

static void indent(struct jsonw *w)
{
	strbuf_puts(w->out, "\n");
	for (int i = 0; i < w->depth; i++)
		strbuf_puts(w->out, "  ");
}

static void string(struct jsonw *w, const char *s)
{
	strbuf_json_string_as(w->out, s, style_of(w) == JSONW_CJSON);
}

/* A number in JSONW_CJSON: 15 significant digits when they read back
 * within a relative DBL_EPSILON of v, 17 otherwise (the text cJSON's
 * compact printer gives). */
static void cjson_number(struct strbuf *sb, double v)
{
	char buf[40];
	if (!isfinite(v)) {
		strbuf_puts(sb, "null");
		return;
	}
	snprintf(buf, sizeof(buf), "%1.15g", v);
	double back = strtod(buf, NULL);
	if (fabs(back - v) > fmax(fabs(back), fabs(v)) * DBL_EPSILON)
		snprintf(buf, sizeof(buf), "%1.17g", v);
	strbuf_puts(sb, buf);
}

static void number(struct jsonw *w, double v)
{
	if (style_of(w) == JSONW_CJSON)
		cjson_number(w->out, v);
	else
		strbuf_json_number(w->out, v);
}

/* The separator after the item before (the style's), then "key": when
 * inside an object. */
static void item(struct jsonw *w, const char *key)
{
	enum jsonw_style st = style_of(w);
	if (w->depth > 0) {
		if (w->has_items[w->depth])
			strbuf_append(w->out, ", ", st == JSONW_LINE ? 2 : 1);
		w->has_items[w->depth] = true;
		if (st == JSONW_INDENT)
			indent(w);
	}
	if (key) {
		string(w, key);
		strbuf_append(w->out, ": ", st == JSONW_INDENT || st == JSONW_LINE ? 2 : 1);
	}
}

static void container_open(struct jsonw *w, const char *key, const char *bracket,
			   enum jsonw_style style)
{
	item(w, key);
	strbuf_append(w->out, bracket, 1);
	enum jsonw_style outer = style_of(w);
	if (w->depth + 1 < JSONW_MAX_DEPTH)
		w->depth++;
	w->style[w->depth] = outer == JSONW_INDENT ? style : outer;
	w->has_items[w->depth] = false;
}

void jsonw_object(struct jsonw *w, const char *key)
{
	container_open(w, key, "{", style_of(w));
}

void jsonw_array(struct jsonw *w, const char *key)
{
	container_open(w, key, "[", style_of(w));
}

void jsonw_object_as(struct jsonw *w, const char *key, enum jsonw_style style)
{
	container_open(w, key, "{", style);
}

void jsonw_array_as(struct jsonw *w, const char *key, enum jsonw_style style)
{
	container_open(w, key, "[", style);
}

void jsonw_end(struct jsonw *w, char close)
{
	bool broken = w->has_items[w->depth] && style_of(w) == JSONW_INDENT;
	if (w->depth > 0)
		w->depth--;
	if (broken)
		indent(w);
	strbuf_append(w->out, &close, 1);
	if (w->depth == 0 && w->end_line)
		strbuf_puts(w->out, "\n");
}

void jsonw_num(struct jsonw *w, const char *key, double v)
{
	item(w, key);
	number(w, v);
}

void jsonw_opt(struct jsonw *w, const char *key, optnum v)
{
	item(w, key);
	if (v.valid && isfinite(v.value))
		number(w, v.value);
	else
		strbuf_puts(w->out, "null");
}

void jsonw_str(struct jsonw *w, const char *key, const char *s)
{
	item(w, key);
	if (s)
		string(w, s);
	else
		strbuf_puts(w->out, "null");
}

void jsonw_bool(struct jsonw *w, const char *key, bool b)
{
	item(w, key);
	strbuf_puts(w->out, b ? "true" : "false");
}

void jsonw_members(struct jsonw *w, const char *object)
{
	size_t n = strlen(object);
	if (n <= 2 || object[0] != '{' || object[n - 1] != '}')
		return; /* {} or no object: no member */
	if (w->has_items[w->depth])
		strbuf_puts(w->out, ",");
	w->has_items[w->depth] = true;
	strbuf_append(w->out, object + 1, n - 2);
}
