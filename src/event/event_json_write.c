/* Event -> JSON, written compact with jsonw in table order, so two
 * encodings of one event are the same bytes. */
#include "roastop/event_field.h"
#include "roastop/event_json.h"
#include "roastop/jsonw.h"

static void enc_strlist(struct jsonw *w, const char *key, const char *const *list, size_t n)
{
	jsonw_array(w, key);
	for (size_t i = 0; i < n; i++)
		jsonw_str(w, NULL, list[i]);
	jsonw_end(w, ']');
}

static void enc_kv(struct jsonw *w, const char *key, const struct kv_num *kv, size_t n)
{
	jsonw_object(w, key);
	for (size_t i = 0; i < n; i++)
		jsonw_num(w, kv[i].key, kv[i].value);
	jsonw_end(w, '}');
}

static void enc_fields(struct jsonw *w, const struct field_table *t, const void *base);

static void enc_object(struct jsonw *w, const char *key, const struct field_table *t,
		       const void *base)
{
	jsonw_object(w, key);
	enc_fields(w, t, base);
	jsonw_end(w, '}');
}

/* [strings..., value] (event_field_tuple); a fine row's missing strings
 * are "". */
static void enc_tuples(struct jsonw *w, const struct event_field *f, const char *list, size_t n)
{
	const struct field_tuple *t = event_field_tuple(f->kind);
	jsonw_array(w, f->name);
	for (size_t i = 0; i < n; i++) { /* list is NULL when n is 0 */
		const char *el = list + i * t->size;
		jsonw_array(w, NULL);
		for (int k = 0; k < t->n_str; k++) {
			const char *s = *(const char *const *)(const void *)(el + t->str[k]);
			jsonw_str(w, NULL, s || f->kind != FK_ROWS ? s : "");
		}
		const void *num = el + t->num;
		jsonw_num(w, NULL,
			  f->kind == FK_COUNTERS ? (double)*(const uint64_t *)num : *(const double *)num);
		jsonw_end(w, ']');
	}
	jsonw_end(w, ']');
}

static void enc_workers(struct jsonw *w, const char *key, const struct worker_sample *ws, size_t n)
{
	jsonw_array(w, key);
	for (size_t i = 0; i < n; i++)
		enc_object(w, NULL, event_field_workers(), &ws[i]);
	jsonw_end(w, ']');
}

static void enc_value(struct jsonw *w, const struct event_field *f, const char *base)
{
	if (!event_field_present(f, base))
		return;
	const void *p = base + f->off;
	size_t n = f->off2 ? *(const size_t *)(base + f->off2) : 0;
	const char *k = f->name;
	switch (f->kind) {
	case FK_NUM:
	case FK_INT: jsonw_num(w, k, ((const optnum *)p)->value); return;
	case FK_STR: jsonw_str(w, k, *(const char *const *)p); return;
	case FK_U32: jsonw_num(w, k, *(const uint32_t *)p); return;
	case FK_SCOPE:
		jsonw_str(w, k, *(const enum fine_scope *)p == FINE_SPAN ? "span" : "cluster");
		return;
	case FK_STATE: jsonw_str(w, k, source_state_name(*(const enum source_state *)p)); return;
	case FK_LEVEL: jsonw_str(w, k, log_kind_name(*(const enum log_kind *)p)); return;
	case FK_FILEMETA: enc_object(w, k, event_field_filemeta(), p); return;
	case FK_STRLIST: enc_strlist(w, k, *(const char *const *const *)p, n); return;
	case FK_KV: enc_kv(w, k, *(const struct kv_num *const *)p, n); return;
	case FK_WORKERS: enc_workers(w, k, *(const struct worker_sample *const *)p, n); return;
	default: enc_tuples(w, f, *(const char *const *)p, n); return;
	}
}

static void enc_fields(struct jsonw *w, const struct field_table *t, const void *base)
{
	for (size_t i = 0; i < t->n; i++)
		enc_value(w, &t->f[i], base);
}

int event_encode_json(const struct event *ev, struct strbuf *out)
{
	if (ev->type <= EV_NONE || ev->type >= EV__COUNT)
		return -1;
	struct jsonw w;
	jsonw_init_as(&w, out, JSONW_COMPACT);
	w.end_line = false; /* the recorder ends the line */
	jsonw_object(&w, NULL);
	jsonw_str(&w, "type", event_type_name(ev->type));
	jsonw_num(&w, "t", ev->t);
	enc_fields(&w, event_field_table(ev->type), &ev->u);
	if (ev->type == EV_CHUNK && ev->u.chunk.custom_json)
		jsonw_members(&w, ev->u.chunk.custom_json); /* the unknown fields, as they came */
	jsonw_end(&w, '}');
	return out->failed ? -1 : 0;
}
