/* Event -> JSON: a recording's lines (docs/recording.md). Fields are
 * written in their table's order, the order event_field_tables_sorted
 * checks, so two encodings of one event are the same bytes. */
#include "roastop/event_field.h"
#include "roastop/event_json.h"

#include <string.h>

/* ,"name": in one append; field names need no escaping. */
static void enc_key(struct strbuf *sb, const struct event_field *f)
{
	char buf[80];
	buf[0] = ',';
	buf[1] = '"';
	memcpy(buf + 2, f->name, f->len);
	buf[f->len + 2] = '"';
	buf[f->len + 3] = ':';
	strbuf_append(sb, buf, f->len + 4u);
}

static void enc_strlist(struct strbuf *sb, const char *const *list, size_t n)
{
	strbuf_puts(sb, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_puts(sb, ",");
		strbuf_json_string(sb, list[i]);
	}
	strbuf_puts(sb, "]");
}

static void enc_kv(struct strbuf *sb, const struct kv_num *kv, size_t n)
{
	strbuf_puts(sb, "{");
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_puts(sb, ",");
		strbuf_json_string(sb, kv[i].key);
		strbuf_puts(sb, ":");
		strbuf_json_number(sb, kv[i].value);
	}
	strbuf_puts(sb, "}");
}

static void enc_fields(struct strbuf *sb, const struct field_table *t, const void *base, bool first);

static void enc_object(struct strbuf *sb, const struct field_table *t, const void *base)
{
	strbuf_puts(sb, "{");
	enc_fields(sb, t, base, true);
	strbuf_puts(sb, "}");
}

static void enc_counters(struct strbuf *sb, const struct source_counter *c, size_t n)
{
	strbuf_puts(sb, "[");
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(sb, i ? ",[" : "[");
		if (c[i].group)
			strbuf_json_string(sb, c[i].group);
		else
			strbuf_puts(sb, "null");
		strbuf_puts(sb, ",");
		strbuf_json_string(sb, c[i].name);
		strbuf_puts(sb, ",");
		strbuf_json_number(sb, (double)c[i].value);
		strbuf_puts(sb, "]");
	}
	strbuf_puts(sb, "]");
}

static void enc_rows(struct strbuf *sb, const struct fine_row *rows, size_t n)
{
	strbuf_puts(sb, "[");
	for (size_t i = 0; i < n; i++) {
		const char *parts[4] = { rows[i].context, rows[i].prefix, rows[i].activity,
					 rows[i].unit };
		strbuf_puts(sb, i ? ",[" : "[");
		for (int k = 0; k < 4; k++) {
			strbuf_json_string(sb, parts[k] ? parts[k] : "");
			strbuf_puts(sb, ",");
		}
		strbuf_json_number(sb, rows[i].value);
		strbuf_puts(sb, "]");
	}
	strbuf_puts(sb, "]");
}

static void enc_running(struct strbuf *sb, const struct task_running *r, size_t n)
{
	strbuf_puts(sb, "[");
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(sb, i ? ",[" : "[");
		strbuf_json_string(sb, r[i].key);
		strbuf_puts(sb, ",");
		strbuf_json_string(sb, r[i].prefix);
		strbuf_puts(sb, ",");
		strbuf_json_string(sb, r[i].worker);
		strbuf_puts(sb, ",");
		strbuf_json_number(sb, r[i].seconds);
		strbuf_puts(sb, "]");
	}
	strbuf_puts(sb, "]");
}

/* Writes one field if it holds a value; returns whether it wrote. */
static bool enc_value(struct strbuf *sb, const struct event_field *f, const char *base)
{
	if (!event_field_present(f, base))
		return false;
	const void *p = base + f->off;
	size_t n = f->off2 ? *(const size_t *)(base + f->off2) : 0;
	enc_key(sb, f);
	switch (f->kind) {
	case FK_NUM:
	case FK_INT: strbuf_json_number(sb, ((const optnum *)p)->value); return true;
	case FK_STR: strbuf_json_string(sb, *(const char *const *)p); return true;
	case FK_U32: strbuf_json_number(sb, *(const uint32_t *)p); return true;
	case FK_SCOPE:
		strbuf_json_string(sb, *(const enum fine_scope *)p == FINE_SPAN ? "span" : "cluster");
		return true;
	case FK_STATE:
		strbuf_json_string(sb, source_state_name(*(const enum source_state *)p));
		return true;
	case FK_LEVEL: strbuf_json_string(sb, log_kind_name(*(const enum log_kind *)p)); return true;
	case FK_COUNTERS: enc_counters(sb, *(const struct source_counter *const *)p, n); return true;
	case FK_FILEMETA: enc_object(sb, event_field_filemeta(), p); return true;
	case FK_ROWS: enc_rows(sb, *(const struct fine_row *const *)p, n); return true;
	case FK_STRLIST: enc_strlist(sb, *(const char *const *const *)p, n); return true;
	case FK_KV: enc_kv(sb, *(const struct kv_num *const *)p, n); return true;
	case FK_RUNNING: enc_running(sb, *(const struct task_running *const *)p, n); return true;
	default: break;
	}
	const struct worker_sample *ws = *(const struct worker_sample *const *)p;
	strbuf_puts(sb, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_puts(sb, ",");
		enc_object(sb, event_field_workers(), &ws[i]);
	}
	strbuf_puts(sb, "]");
	return true;
}

/* enc_key writes a leading comma; the first field of an object drops it. */
static void enc_fields(struct strbuf *sb, const struct field_table *t, const void *base, bool first)
{
	for (size_t i = 0; i < t->n; i++) {
		size_t mark = sb->len;
		if (enc_value(sb, &t->f[i], base) && first && !sb->failed) {
			memmove(sb->data + mark, sb->data + mark + 1, sb->len - mark);
			sb->len--;
			first = false;
		}
	}
}

int event_encode_json(const struct event *ev, struct strbuf *out)
{
	if (ev->type <= EV_NONE || ev->type >= EV__COUNT)
		return -1;
	strbuf_puts(out, "{\"type\":");
	strbuf_json_string(out, event_type_name(ev->type));
	strbuf_puts(out, ",\"t\":");
	strbuf_json_number(out, ev->t);
	enc_fields(out, event_field_table(ev->type), &ev->u, false);
	if (ev->type == EV_CHUNK && ev->u.chunk.custom_json && ev->u.chunk.custom_json[0] == '{' &&
	    ev->u.chunk.custom_json[1] != '}') {
		strbuf_puts(out, ",");
		strbuf_puts(out, ev->u.chunk.custom_json + 1); /* splice the object's members */
		out->len--; /* drop its closing brace */
		out->data[out->len] = '\0';
	}
	strbuf_puts(out, "}");
	return out->failed ? -1 : 0;
}
