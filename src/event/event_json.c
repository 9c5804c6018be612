/* JSON -> event: json_check for what cJSON lets through, cJSON for the
 * tree, then one walk of the tree against event_field's tables into the
 * event's arena. */
#include "roastop/event_field.h"
#include "roastop/cjson_lock.h"
#include "roastop/json_check.h"
#include "roastop/range.h"
#include "roastop/strutil.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The tree of one text, a cJSON node (64 bytes) per value: a text of
 * EVENT_JSON_MAX bytes holds at most ~524,000 values ("[0,0,...]"), 32 MiB
 * of nodes; the limit is a backstop, never reached by a text in bounds. */
#define TREE_MAX (40u << 20)
/* A tree larger than this is given back at once rather than kept. */
#define TREE_KEEP (1u << 20)

static const char *const error_names[DEC__COUNT] = {
	[DEC_OK] = "ok",
	[DEC_TOO_LARGE] = "too_large",
	[DEC_TOO_DEEP] = "too_deep",
	[DEC_NOT_JSON] = "not_json",
	[DEC_NOT_OBJECT] = "not_object",
	[DEC_NO_TYPE] = "no_type",
	[DEC_UNKNOWN_TYPE] = "unknown_type",
	[DEC_NO_TIME] = "no_time",
	[DEC_MISSING_FIELD] = "missing_field",
	[DEC_BAD_TYPE] = "bad_type",
	[DEC_OUT_OF_RANGE] = "out_of_range",
	[DEC_BAD_UTF8] = "bad_utf8",
	[DEC_STRING_TOO_LONG] = "string_too_long",
	[DEC_LIST_TOO_LONG] = "list_too_long",
	[DEC_INCONSISTENT] = "inconsistent",
	[DEC_NO_MEMORY] = "no_memory",
	[DEC_BAD_BINARY] = "bad_binary",
};

const char *decode_error_name(enum decode_error e)
{
	return (e >= 0 && e < DEC__COUNT) ? error_names[e] : "unknown";
}

void reject_count(struct reject_counts *rc, enum decode_error e)
{
	if (e <= DEC_OK || e >= DEC__COUNT)
		return;
	rc->by_reason[e]++;
	rc->total++;
}

/* ---- the tree ---------------------------------------------------------
 * cJSON allocates every node and string on its own; parsed into a bump
 * arena instead, a tree costs no malloc per value and is bounded. cJSON's
 * allocator is global: cjson_lock_parse points it at the arena for the
 * one parse only. */

static struct arena tree_mem;
static bool tree_ready;

static cJSON *tree_parse(const char *text, size_t len, enum decode_error *e)
{
	if (!tree_ready) {
		arena_init(&tree_mem, TREE_MAX);
		tree_ready = true;
	}
	const char *end = NULL;
	cJSON *root = cjson_lock_parse(&tree_mem, text, len, &end);
	if (!root) {
		*e = tree_mem.refused ? DEC_NO_MEMORY : DEC_NOT_JSON;
		return NULL;
	}
	for (; end < text + len; end++) /* json_check let only whitespace be blank */
		if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') {
			*e = DEC_NOT_JSON; /* a second value after the first */
			return NULL;
		}
	return root;
}

static void tree_release(void)
{
	if (tree_mem.total > TREE_KEEP)
		arena_free(&tree_mem);
	else if (tree_ready)
		arena_reset(&tree_mem);
}

struct dec {
	struct event *ev;
	struct strbuf custom; /* unknown chunk fields, compact JSON members */
	bool custom_used;
	struct field_seen seen; /* fields whose presence the checks need */
	const char *text; /* the custom fields' values are kept as written */
	size_t len;
	struct json_members members;
	size_t member_at; /* the index of the member members gives next */
};

/* At most EVENT_MAX_STRING bytes of UTF-8 (json_check refused \u0000, so
 * the first NUL ends it); *len is its length. */
static enum decode_error text_ok(const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned acc = 0;
	for (; *p; p++)
		acc |= *p;
	*len = (size_t)(p - (const unsigned char *)s);
	if (*len > EVENT_MAX_STRING)
		return DEC_STRING_TOO_LONG;
	return acc < 0x80 || strutil_utf8_ok((const unsigned char *)s) ? DEC_OK : DEC_BAD_UTF8;
}

static enum decode_error str_in(struct dec *d, const cJSON *v, const char **out)
{
	if (!cJSON_IsString(v))
		return DEC_BAD_TYPE;
	size_t n;
	enum decode_error e = text_ok(v->valuestring, &n);
	if (e)
		return e;
	*out = arena_strndup(&d->ev->mem, v->valuestring, n);
	return *out ? DEC_OK : DEC_NO_MEMORY;
}

/* cJSON reads a number too large for a double as infinity. */
static enum decode_error num_in(const cJSON *v, double *out)
{
	if (!cJSON_IsNumber(v))
		return DEC_BAD_TYPE;
	*out = v->valuedouble;
	return isfinite(*out) ? DEC_OK : DEC_OUT_OF_RANGE;
}

static enum decode_error number_in(const cJSON *v, const struct event_field *f, optnum *out)
{
	double x;
	enum decode_error e = num_in(v, &x);
	if (e)
		return e;
	if (!event_field_number_ok(f, x))
		return DEC_OUT_OF_RANGE;
	*out = optnum_of(x);
	return DEC_OK;
}

/* Every key, at any depth, is a string text_ok takes. */
static enum decode_error keys_ok(const cJSON *node)
{
	for (const cJSON *c = node->child; c; c = c->next) {
		size_t n;
		enum decode_error e = c->string ? text_ok(c->string, &n) : DEC_OK;
		if (!e && c->child)
			e = keys_ok(c);
		if (e)
			return e;
	}
	return DEC_OK;
}

typedef enum decode_error (*elem_fn)(struct dec *d, const cJSON *el, void *slot);

static enum decode_error strlist_el(struct dec *d, const cJSON *el, void *slot)
{
	return str_in(d, el, slot);
}

static enum decode_error kv_el(struct dec *d, const cJSON *el, void *slot)
{
	struct kv_num *kv = slot;
	enum decode_error e = num_in(el, &kv->value);
	if (e)
		return e;
	if (fabs(kv->value) > EVENT_BIG)
		return DEC_OUT_OF_RANGE;
	kv->key = arena_strdup(&d->ev->mem, el->string);
	return kv->key ? DEC_OK : DEC_NO_MEMORY;
}

static enum decode_error object_into(struct dec *d, const struct field_table *t, const cJSON *v,
				     void *base);

static enum decode_error worker_el(struct dec *d, const cJSON *el, void *slot)
{
	struct worker_sample *w = slot;
	enum decode_error e = object_into(d, event_field_workers(), el, w);
	return e ? e : (w->id ? DEC_OK : DEC_MISSING_FIELD);
}

/* Is x a tuple's number in range? A counter's is a whole count. */
static bool tuple_num_ok(enum field_kind k, double x)
{
	if (k == FK_ROWS)
		return range_ok(RANGE_FINE, x);
	if (k == FK_RUNNING)
		return range_ok(RANGE_TASK_SECONDS, x);
	return x >= 0 && x <= EVENT_COUNTER_VALUE_MAX && x == (double)(int64_t)x;
}

/* [strings..., number] (event_field_tuple); a counter's group may be null. */
static enum decode_error tuple_el(struct dec *d, const cJSON *el, char *slot, enum field_kind k)
{
	const struct field_tuple *t = event_field_tuple(k);
	double x = 0;
	int i = 0;
	if (!cJSON_IsArray(el))
		return DEC_BAD_TYPE;
	for (const cJSON *v = el->child; v; v = v->next, i++) {
		enum decode_error e = DEC_OK;
		if (i == 0 && k == FK_COUNTERS && cJSON_IsNull(v))
			continue;
		if (i < t->n_str)
			e = str_in(d, v, (const char **)(void *)(slot + t->str[i]));
		else if (i > t->n_str)
			e = DEC_BAD_TYPE;
		else if (!(e = num_in(v, &x)) && !tuple_num_ok(k, x))
			e = DEC_OUT_OF_RANGE;
		if (e)
			return e;
	}
	if (i != t->n_str + 1)
		return DEC_BAD_TYPE;
	if (k == FK_COUNTERS) /* a whole count in range (tuple_num_ok) */
		*(uint64_t *)(void *)(slot + t->num) = (uint64_t)x;
	else
		*(double *)(void *)(slot + t->num) = x;
	return DEC_OK;
}

static enum decode_error list_field(struct dec *d, const struct event_field *f, const cJSON *v,
				    char *base)
{
	static const struct {
		size_t size;
		elem_fn fn;
		bool object;
		size_t max;
	} kinds[] = {
		[FK_STRLIST] = { sizeof(const char *), strlist_el, false, EVENT_MAX_LIST },
		[FK_KV] = { sizeof(struct kv_num), kv_el, true, EVENT_MAX_SECTIONS },
		[FK_WORKERS] = { sizeof(struct worker_sample), worker_el, false, EVENT_MAX_LIST },
		[FK_ROWS] = { sizeof(struct fine_row), NULL, false, EVENT_MAX_LIST },
		[FK_COUNTERS] = { sizeof(struct source_counter), NULL, false, EVENT_COUNTERS_MAX },
		[FK_RUNNING] = { sizeof(struct task_running), NULL, false, EVENT_MAX_RUNNING },
	};
	if (kinds[f->kind].object ? !cJSON_IsObject(v) : !cJSON_IsArray(v))
		return DEC_BAD_TYPE;
	size_t n = 0, size = kinds[f->kind].size;
	for (const cJSON *el = v->child; el; el = el->next)
		if (++n > kinds[f->kind].max)
			return DEC_LIST_TOO_LONG;
	char *data = arena_alloc(&d->ev->mem, (n ? n : 1) * size);
	if (!data)
		return DEC_NO_MEMORY;
	memset(data, 0, (n ? n : 1) * size);
	size_t i = 0;
	for (const cJSON *el = v->child; el; el = el->next, i++) {
		char *slot = data + i * size;
		enum decode_error e = kinds[f->kind].fn ? kinds[f->kind].fn(d, el, slot)
						    : tuple_el(d, el, slot, f->kind);
		if (e)
			return e;
	}
	*(void **)(base + f->off) = data;
	*(size_t *)(base + f->off2) = n;
	return DEC_OK;
}

/* The i-th name of a field's enum (event.h's order), NULL past its end. */
static const char *enum_name(enum field_kind k, int i)
{
	if (k == FK_SCOPE)
		return i == FINE_CLUSTER ? "cluster" : i == FINE_SPAN ? "span" : NULL;
	if (k == FK_STATE)
		return i < SRC__COUNT ? source_state_name((enum source_state)i) : NULL;
	return i < LOG__COUNT ? log_kind_name((enum log_kind)i) : NULL;
}

static enum decode_error enum_field(struct dec *d, const struct event_field *f, const cJSON *v,
				    char *base)
{
	const char *s, *name;
	enum decode_error e = str_in(d, v, &s);
	for (int i = 0; !e && (name = enum_name(f->kind, i)); i++) {
		if (strcmp(s, name) == 0) {
			*(int *)(base + f->off) = i;
			return DEC_OK;
		}
	}
	return e ? e : DEC_OUT_OF_RANGE;
}

static enum decode_error value_field(struct dec *d, const struct event_field *f, const cJSON *v,
				     char *base)
{
	void *p = base + f->off;
	switch (f->kind) {
	case FK_NUM:
	case FK_INT: return number_in(v, f, p);
	case FK_STR: return str_in(d, v, p);
	case FK_SCOPE:
	case FK_LEVEL: return enum_field(d, f, v, base);
	case FK_STATE: d->seen.state = true; return enum_field(d, f, v, base);
	case FK_FILEMETA: {
		enum decode_error e = object_into(d, event_field_filemeta(), v, p);
		if (!e && !((struct file_meta *)p)->filename)
			e = DEC_MISSING_FIELD;
		if (!e)
			*(bool *)(base + f->off2) = true;
		return e;
	}
	case FK_U32: {
		optnum x;
		const struct event_field as_int = { f->name, f->len, FK_INT, 0, 0, f->lo, f->hi, 0 };
		enum decode_error e = number_in(v, &as_int, &x);
		if (!e) {
			*(uint32_t *)p = (uint32_t)x.value;
			d->seen.count = true;
		}
		return e;
	}
	case FK_ROWS: d->seen.rows = true; return list_field(d, f, v, base);
	default: return list_field(d, f, v, base);
	}
}

/* A nested object (a worker, file_metadata): unknown members are ignored,
 * null ones are not given. */
static enum decode_error object_into(struct dec *d, const struct field_table *t, const cJSON *v,
				     void *base)
{
	if (!cJSON_IsObject(v))
		return DEC_BAD_TYPE;
	for (const cJSON *m = v->child; m; m = m->next) {
		const struct event_field *f = event_field_find(t, m->string, strlen(m->string));
		enum decode_error e = f && !cJSON_IsNull(m) ? value_field(d, f, m, base) : DEC_OK;
		if (e)
			return e;
	}
	return DEC_OK;
}

/* JSON text without the whitespace between tokens. */
static void compact_append(struct strbuf *sb, const char *s, size_t len)
{
	bool in_string = false;
	size_t run = 0; /* start of the bytes not yet appended */
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_string) {
			if (c == '\\')
				i++; /* the escaped byte cannot end the string */
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			strbuf_append(sb, s + run, i - run);
			run = i + 1;
		}
	}
	strbuf_append(sb, s + run, len - run);
}

/* The text of the index-th top-level member's value: the members are read
 * in order, so a chunk's unknown fields cost one pass over the text. */
static void member_text(struct dec *d, size_t index, const char **val, size_t *len)
{
	if (d->member_at == 0 && !d->members.p)
		json_members_init(&d->members, d->text, d->len);
	*val = "null";
	*len = 4;
	while (d->member_at <= index && json_members_next(&d->members, val, len))
		d->member_at++;
}

/* An unknown chunk field, kept as compact JSON as written, within a budget. */
static enum decode_error custom_keep(struct dec *d, const char *key, size_t index)
{
	const char *val;
	size_t len, klen = strlen(key);
	member_text(d, index, &val, &len);
	if (d->custom.len + len + 6 * klen + 8 > EVENT_CUSTOM_MAX)
		return DEC_OK; /* over budget: dropped, the chunk itself is kept */
	size_t mark = d->custom.len;
	strbuf_puts(&d->custom, d->custom_used ? "," : "{");
	strbuf_json_string(&d->custom, key);
	strbuf_puts(&d->custom, ":");
	compact_append(&d->custom, val, len);
	if (d->custom.failed)
		return DEC_NO_MEMORY;
	if (!strutil_utf8_ok((const unsigned char *)d->custom.data + mark))
		return DEC_BAD_UTF8;
	d->custom_used = true;
	return DEC_OK;
}

static enum decode_error top_member(struct dec *d, const cJSON *m, size_t index)
{
	if (strcmp(m->string, "t") == 0 || strcmp(m->string, "type") == 0)
		return DEC_OK; /* read by the header */
	const struct event_field *f =
		event_field_find(event_field_table(d->ev->type), m->string, strlen(m->string));
	if (!f)
		return d->ev->type == EV_CHUNK ? custom_keep(d, m->string, index) : DEC_OK;
	if (cJSON_IsNull(m))
		return DEC_OK; /* null: not given */
	return value_field(d, f, m, (char *)&d->ev->u);
}

/* "type": the first member's when it names a type (roastop's writers put
 * it first), else the last member "type" that is a string. *first says
 * which: a first "type" is read with the fields, "t" after them. */
static enum decode_error head_type(const cJSON *root, struct event *ev, bool *first)
{
	const cJSON *head = root->child, *type = NULL;
	*first = head && strcmp(head->string, "type") == 0 && cJSON_IsString(head) &&
		 event_type_from_name(head->valuestring) != EV_NONE;
	for (const cJSON *m = head; m && !*first; m = m->next)
		if (strcmp(m->string, "type") == 0 && cJSON_IsString(m))
			type = m;
	if (*first)
		type = head;
	if (!type)
		return DEC_NO_TYPE;
	ev->type = strlen(type->valuestring) < 32 ? event_type_from_name(type->valuestring)
						  : EV_NONE;
	return ev->type == EV_NONE ? DEC_UNKNOWN_TYPE : DEC_OK;
}

/* "t", the receive time: the last one given, and every one a number. */
static enum decode_error head_time(const cJSON *root, struct event *ev)
{
	bool have = false, bad = false;
	double t = 0;
	for (const cJSON *m = root->child; m; m = m->next) {
		if (strcmp(m->string, "t") != 0)
			continue;
		have = true;
		bad |= num_in(m, &t) != DEC_OK;
	}
	if (!have || bad || !(t >= EVENT_T_MIN && t <= EVENT_T_MAX))
		return DEC_NO_TIME;
	ev->t = t;
	return DEC_OK;
}

/* Unknown chunk fields, kept as one JSON object. */
static enum decode_error custom_finish(struct dec *d)
{
	if (!d->custom_used)
		return DEC_OK;
	strbuf_puts(&d->custom, "}");
	if (d->custom.failed)
		return DEC_NO_MEMORY;
	d->ev->u.chunk.custom_json = arena_strndup(&d->ev->mem, d->custom.data, d->custom.len);
	return d->ev->u.chunk.custom_json ? DEC_OK : DEC_NO_MEMORY;
}

/* The header, then every member against the type's table, then the checks
 * across fields. A line whose "type" comes first has its fields read before
 * its "t" (which error wins), any other its "t" first. */
static enum decode_error decode_tree(struct dec *d, const cJSON *root)
{
	struct event *ev = d->ev;
	enum decode_error e = keys_ok(root);
	if (!e && !cJSON_IsObject(root))
		e = DEC_NOT_OBJECT;
	bool first = false;
	if (!e)
		e = head_type(root, ev, &first);
	if (!e && !first)
		e = head_time(root, ev);
	size_t i = 0;
	for (const cJSON *m = root->child; !e && m; m = m->next)
		e = top_member(d, m, i++);
	if (!e && first)
		e = head_time(root, ev);
	if (!e)
		e = event_field_check(ev, &d->seen);
	return e ? e : custom_finish(d);
}

enum decode_error event_decode_json(const char *text, size_t len, struct event *ev)
{
	event_reset(ev);
	event_field_init();
	if (len > EVENT_JSON_MAX)
		return DEC_TOO_LARGE;
	enum decode_error e = json_check(text, len, EVENT_JSON_MAX_DEPTH);
	cJSON *root = e ? NULL : tree_parse(text, len, &e);
	if (!e) {
		struct dec d = { .ev = ev, .text = text, .len = len };
		strbuf_init(&d.custom);
		e = decode_tree(&d, root);
		strbuf_free(&d.custom);
	}
	tree_release();
	if (e)
		event_reset(ev); /* all or nothing */
	return e;
}
