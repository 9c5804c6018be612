#include "roastop/jsonw.h"

#include <math.h>

void jsonw_init(struct jsonw *w, struct strbuf *out)
{
	w->out = out;
	w->depth = 0;
	w->has_items[0] = false;
}

static void indent(struct jsonw *w)
{
	strbuf_puts(w->out, "\n");
	for (int i = 0; i < w->depth; i++)
		strbuf_puts(w->out, "  ");
}

/* Comma, newline and indentation, then "key": when inside an object. */
static void item(struct jsonw *w, const char *key)
{
	if (w->depth > 0) {
		if (w->has_items[w->depth])
			strbuf_puts(w->out, ",");
		w->has_items[w->depth] = true;
		indent(w);
	}
	if (key) {
		strbuf_json_string(w->out, key);
		strbuf_puts(w->out, ": ");
	}
}

static void container_open(struct jsonw *w, const char *key, const char *bracket)
{
	item(w, key);
	strbuf_puts(w->out, bracket);
	if (w->depth + 1 < JSONW_MAX_DEPTH)
		w->depth++;
	w->has_items[w->depth] = false;
}

void jsonw_object(struct jsonw *w, const char *key)
{
	container_open(w, key, "{");
}

void jsonw_array(struct jsonw *w, const char *key)
{
	container_open(w, key, "[");
}

void jsonw_end(struct jsonw *w, char close)
{
	bool had = w->has_items[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (had)
		indent(w);
	char c[2] = { close, '\0' };
	strbuf_puts(w->out, c);
	if (w->depth == 0)
		strbuf_puts(w->out, "\n");
}

void jsonw_num(struct jsonw *w, const char *key, double v)
{
	item(w, key);
	strbuf_json_number(w->out, v);
}

void jsonw_opt(struct jsonw *w, const char *key, optnum v)
{
	item(w, key);
	if (v.valid && isfinite(v.value))
		strbuf_json_number(w->out, v.value);
	else
		strbuf_puts(w->out, "null");
}

void jsonw_str(struct jsonw *w, const char *key, const char *s)
{
	item(w, key);
	if (s)
		strbuf_json_string(w->out, s);
	else
		strbuf_puts(w->out, "null");
}

void jsonw_bool(struct jsonw *w, const char *key, bool b)
{
	item(w, key);
	strbuf_puts(w->out, b ? "true" : "false");
}

void jsonw_raw(struct jsonw *w, const char *key, const char *json)
{
	item(w, key);
	strbuf_puts(w->out, json);
}
