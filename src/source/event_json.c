/* Event <-> JSON. One field table per event type drives both directions, so
 * a field cannot be decoded under one name and encoded under another. */
#include "roastop/event_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T_MIN 1.0 /* receive times: seconds since the epoch, (1970, 5138) */
#define T_MAX 1e11
#define BIG 1e15 /* counts and bytes */
#define BIG_SECONDS 1e9

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

/* ---- field tables ----------------------------------------------------- */

enum kind {
	K_NUM, /* optnum in [lo, hi] */
	K_INT, /* optnum, integral, in [lo, hi] */
	K_STR, /* const char * */
	K_STRLIST, /* const char ** at off, size_t count at off2 */
	K_KV, /* struct kv_num * at off, size_t count at off2 */
	K_FILEMETA, /* struct file_meta, has_file_metadata at off2 */
	K_WORKERS, /* struct worker_sample * at off, size_t count at off2 */
	K_U32, /* uint32_t in [lo, hi] */
	K_ROWS, /* struct fine_row * at off, size_t count at off2 */
	K_SCOPE, /* enum fine_scope */
	K_STATE, /* enum source_state */
};

struct field {
	const char *name;
	enum kind kind;
	size_t off, off2;
	double lo, hi;
};

#define NUM(s, f, l, h) { #f, K_NUM, offsetof(struct s, f), 0, l, h }
#define INT(s, f, l, h) { #f, K_INT, offsetof(struct s, f), 0, l, h }
#define STR(s, f) { #f, K_STR, offsetof(struct s, f), 0, 0, 0 }
#define LIST(s, f, n, k) { #f, k, offsetof(struct s, f), offsetof(struct s, n), 0, 0 }

/* Each table is sorted by name (bsearch; a unit test checks the order). */
static const struct field chunk_fields[] = {
	LIST(ev_chunk, accessed_branches, n_branches, K_STRLIST),
	NUM(ev_chunk, accessed_bytes, 0, BIG),
	NUM(ev_chunk, accessed_uncompressed_bytes, 0, BIG),
	NUM(ev_chunk, branches_read_percent, 0, 100.001),
	LIST(ev_chunk, bytes, n_bytes, K_KV),
	NUM(ev_chunk, bytes_read, 0, BIG),
	NUM(ev_chunk, bytes_read_percent, 0, 100.001),
	NUM(ev_chunk, cpu_time, 0, BIG_SECONDS),
	STR(ev_chunk, dataset),
	NUM(ev_chunk, duration, 0, BIG_SECONDS),
	INT(ev_chunk, entry_start, 0, BIG),
	INT(ev_chunk, entry_stop, 0, BIG),
	STR(ev_chunk, error),
	STR(ev_chunk, file),
	{ "file_metadata", K_FILEMETA, offsetof(struct ev_chunk, file_metadata),
	  offsetof(struct ev_chunk, has_file_metadata), 0, 0 },
	STR(ev_chunk, host),
	NUM(ev_chunk, mem_after_mb, 0, 1e9),
	NUM(ev_chunk, mem_before_mb, 0, 1e9),
	NUM(ev_chunk, mem_delta_mb, -1e9, 1e9),
	LIST(ev_chunk, memory, n_memory, K_KV),
	INT(ev_chunk, num_branches_accessed, 0, 1e7),
	INT(ev_chunk, num_events, 0, BIG),
	INT(ev_chunk, pid, 0, 1e9),
	INT(ev_chunk, seq, 0, 9007199254740991.0),
	NUM(ev_chunk, t_end, 0, T_MAX),
	NUM(ev_chunk, t_start, 0, T_MAX),
	NUM(ev_chunk, timestamp, 0, T_MAX),
	LIST(ev_chunk, timing, n_timing, K_KV),
	STR(ev_chunk, uuid),
	STR(ev_chunk, worker),
};

static const struct field worker_fields[] = {
	NUM(worker_sample, cpu_percent, 0, 1e5),
	NUM(worker_sample, executing, 0, BIG),
	STR(worker_sample, host),
	STR(worker_sample, id),
	NUM(worker_sample, managed_bytes, 0, BIG),
	NUM(worker_sample, memory_bytes, 0, BIG),
	NUM(worker_sample, memory_limit, 0, BIG),
	STR(worker_sample, name),
	NUM(worker_sample, nthreads, 0, 1e6),
	NUM(worker_sample, processing, 0, BIG),
	NUM(worker_sample, spilled_bytes, 0, BIG),
	STR(worker_sample, status),
};

static const struct field sample_fields[] = {
	STR(ev_sample, dask_version),
	STR(ev_sample, scheduler_id),
	STR(ev_sample, source),
	NUM(ev_sample, tasks_processing, 0, BIG),
	NUM(ev_sample, total_threads, 0, 1e9),
	{ "worker_count", K_U32, offsetof(struct ev_sample, worker_count), 0, 0, 1e7 },
	LIST(ev_sample, workers, n_workers, K_WORKERS),
};

static const struct field run_start_fields[] = {
	STR(ev_run_start, client_host),
	INT(ev_run_start, client_pid, 0, 1e9),
	LIST(ev_run_start, datasets, n_datasets, K_STRLIST),
	INT(ev_run_start, expected_events, 0, BIG),
	STR(ev_run_start, name),
	STR(ev_run_start, processor),
	STR(ev_run_start, run_id),
};

static const struct field run_end_fields[] = {
	STR(ev_run_end, run_id),
};

static const struct field report_fields[] = {
	NUM(ev_report, bytesread, 0, BIG),
	INT(ev_report, chunks, 0, BIG),
	LIST(ev_report, columns, n_columns, K_STRLIST),
	INT(ev_report, entries, 0, BIG),
	NUM(ev_report, processtime, 0, BIG),
};

static const struct field fine_fields[] = {
	LIST(ev_fine, rows, n_rows, K_ROWS),
	{ "scope", K_SCOPE, offsetof(struct ev_fine, scope), 0, 0, 0 },
};

static const struct field status_fields[] = {
	STR(ev_status, reason),
	STR(ev_status, source),
	{ "state", K_STATE, offsetof(struct ev_status, state), 0, 0, 0 },
};

static const struct field filemeta_fields[] = {
	NUM(file_meta, compression_ratio, 0, 1e6),
	STR(file_meta, filename),
	INT(file_meta, total_branches, 0, 1e7),
	NUM(file_meta, total_tree_bytes, 0, BIG),
};

struct table {
	const struct field *f;
	size_t n;
};

#define TABLE(a) { a, sizeof(a) / sizeof(a[0]) }

static const struct table type_tables[EV__COUNT] = {
	[EV_SAMPLE] = TABLE(sample_fields),	  [EV_CHUNK] = TABLE(chunk_fields),
	[EV_RUN_START] = TABLE(run_start_fields), [EV_RUN_END] = TABLE(run_end_fields),
	[EV_REPORT] = TABLE(report_fields),	  [EV_FINE] = TABLE(fine_fields),
	[EV_STATUS] = TABLE(status_fields),
};

static const struct table worker_table = TABLE(worker_fields);
static const struct table filemeta_table = TABLE(filemeta_fields);

static int field_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct field *)elem)->name);
}

static const struct field *field_find(const struct table *t, const char *name)
{
	return bsearch(name, t->f, t->n, sizeof(*t->f), field_cmp);
}

/* Exposed for the unit test that keeps the tables sorted. */
bool event_json_tables_sorted(void);
bool event_json_tables_sorted(void)
{
	const struct table all[] = { type_tables[EV_SAMPLE], type_tables[EV_CHUNK],
				     type_tables[EV_RUN_START], type_tables[EV_RUN_END],
				     type_tables[EV_REPORT], type_tables[EV_FINE],
				     type_tables[EV_STATUS], worker_table, filemeta_table };
	for (size_t t = 0; t < sizeof(all) / sizeof(all[0]); t++)
		for (size_t i = 1; i < all[t].n; i++)
			if (strcmp(all[t].f[i - 1].name, all[t].f[i].name) >= 0)
				return false;
	return true;
}

/* ---- input checks ----------------------------------------------------- */

/* Nesting depth outside strings, before cJSON recurses into it. */
static bool depth_ok(const char *s, size_t len)
{
	int depth = 0;
	bool in_str = false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > EVENT_JSON_MAX_DEPTH)
				return false;
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	return true;
}

/* Well-formed UTF-8: no overlong forms, no surrogates, <= U+10FFFF. */
static bool utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned char c = *s;
		size_t n;
		uint32_t cp;
		if (c < 0x80) {
			s++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			n = 1;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			n = 2;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		for (size_t i = 1; i <= n; i++) {
			if ((s[i] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i] & 0x3F);
		}
		static const uint32_t min_cp[4] = { 0, 0x80, 0x800, 0x10000 };
		if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		s += n + 1;
	}
	return true;
}

/* ---- decoding --------------------------------------------------------- */

struct dec {
	struct event *ev;
	struct strbuf custom;
	bool custom_used;
};

static enum decode_error dec_string(struct dec *d, const cJSON *v, const char **out)
{
	if (!cJSON_IsString(v) || !v->valuestring)
		return DEC_BAD_TYPE;
	size_t len = strlen(v->valuestring);
	if (len > EVENT_MAX_STRING)
		return DEC_STRING_TOO_LONG;
	if (!utf8_ok((const unsigned char *)v->valuestring))
		return DEC_BAD_UTF8;
	*out = arena_strndup(&d->ev->mem, v->valuestring, len);
	return *out ? DEC_OK : DEC_NO_MEMORY;
}

static enum decode_error dec_number(const cJSON *v, const struct field *f, optnum *out)
{
	if (!cJSON_IsNumber(v))
		return DEC_BAD_TYPE;
	double x = v->valuedouble;
	if (!isfinite(x) || x < f->lo || x > f->hi)
		return DEC_OUT_OF_RANGE;
	if (f->kind == K_INT && x != floor(x))
		return DEC_OUT_OF_RANGE;
	*out = optnum_of(x);
	return DEC_OK;
}

static void *dec_array(struct dec *d, size_t n, size_t size)
{
	return arena_alloc(&d->ev->mem, (n ? n : 1) * size);
}

static enum decode_error dec_strlist(struct dec *d, const cJSON *v, const char ***out, size_t *n)
{
	if (!cJSON_IsArray(v))
		return DEC_BAD_TYPE;
	size_t count = (size_t)cJSON_GetArraySize(v);
	if (count > EVENT_MAX_LIST)
		return DEC_LIST_TOO_LONG;
	const char **list = dec_array(d, count, sizeof(*list));
	if (!list)
		return DEC_NO_MEMORY;
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next) {
		enum decode_error err = dec_string(d, e, &list[i++]);
		if (err)
			return err;
	}
	*out = list;
	*n = count;
	return DEC_OK;
}

/* {name: number} sections of track_time / track_memory / track_bytes. */
static enum decode_error dec_kv(struct dec *d, const cJSON *v, struct kv_num **out, size_t *n)
{
	if (!cJSON_IsObject(v))
		return DEC_BAD_TYPE;
	size_t count = (size_t)cJSON_GetArraySize(v);
	if (count > EVENT_MAX_SECTIONS)
		return DEC_LIST_TOO_LONG;
	struct kv_num *kv = dec_array(d, count, sizeof(*kv));
	if (!kv)
		return DEC_NO_MEMORY;
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		if (!cJSON_IsNumber(e))
			return DEC_BAD_TYPE;
		if (!isfinite(e->valuedouble) || fabs(e->valuedouble) > BIG)
			return DEC_OUT_OF_RANGE;
		size_t len = strlen(e->string);
		if (len > EVENT_MAX_STRING)
			return DEC_STRING_TOO_LONG;
		if (!utf8_ok((const unsigned char *)e->string))
			return DEC_BAD_UTF8;
		kv[i].key = arena_strndup(&d->ev->mem, e->string, len);
		if (!kv[i].key)
			return DEC_NO_MEMORY;
		kv[i].value = e->valuedouble;
	}
	*out = kv;
	*n = count;
	return DEC_OK;
}

static enum decode_error dec_fields(struct dec *d, const struct table *t, const cJSON *obj,
				    void *base, bool top);

static enum decode_error dec_workers(struct dec *d, const cJSON *v, struct worker_sample **out,
				     size_t *n)
{
	if (!cJSON_IsArray(v))
		return DEC_BAD_TYPE;
	size_t count = (size_t)cJSON_GetArraySize(v);
	if (count > EVENT_MAX_LIST)
		return DEC_LIST_TOO_LONG;
	struct worker_sample *ws = dec_array(d, count, sizeof(*ws));
	if (!ws)
		return DEC_NO_MEMORY;
	memset(ws, 0, (count ? count : 1) * sizeof(*ws));
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		if (!cJSON_IsObject(e))
			return DEC_BAD_TYPE;
		enum decode_error err = dec_fields(d, &worker_table, e, &ws[i], false);
		if (err)
			return err;
		if (!ws[i].id)
			return DEC_MISSING_FIELD;
	}
	*out = ws;
	*n = count;
	return DEC_OK;
}

/* Rows as [context, prefix, activity, unit, value]. */
static enum decode_error dec_row(struct dec *d, const cJSON *e, struct fine_row *row)
{
	if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 5)
		return DEC_BAD_TYPE;
	const char **parts[4] = { &row->context, &row->prefix, &row->activity, &row->unit };
	const cJSON *c = e->child;
	for (int i = 0; i < 4; i++, c = c->next) {
		enum decode_error err = dec_string(d, c, parts[i]);
		if (err)
			return err;
	}
	if (!cJSON_IsNumber(c))
		return DEC_BAD_TYPE;
	if (!isfinite(c->valuedouble) || c->valuedouble < 0 || c->valuedouble > BIG)
		return DEC_OUT_OF_RANGE;
	row->value = c->valuedouble;
	return DEC_OK;
}

static enum decode_error dec_rows(struct dec *d, const cJSON *v, struct fine_row **out, size_t *n)
{
	if (!cJSON_IsArray(v))
		return DEC_BAD_TYPE;
	size_t count = (size_t)cJSON_GetArraySize(v);
	if (count > EVENT_MAX_LIST)
		return DEC_LIST_TOO_LONG;
	struct fine_row *rows = dec_array(d, count, sizeof(*rows));
	if (!rows)
		return DEC_NO_MEMORY;
	size_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next) {
		enum decode_error err = dec_row(d, e, &rows[i++]);
		if (err)
			return err;
	}
	*out = rows;
	*n = count;
	return DEC_OK;
}

static enum decode_error dec_enum(const cJSON *v, const char *const *names, int count, int *out)
{
	if (!cJSON_IsString(v))
		return DEC_BAD_TYPE;
	for (int i = 0; i < count; i++) {
		if (strcmp(v->valuestring, names[i]) == 0) {
			*out = i;
			return DEC_OK;
		}
	}
	return DEC_OUT_OF_RANGE;
}

static enum decode_error dec_filemeta(struct dec *d, const cJSON *v, struct file_meta *fm,
				      bool *has)
{
	if (!cJSON_IsObject(v))
		return DEC_BAD_TYPE;
	enum decode_error err = dec_fields(d, &filemeta_table, v, fm, false);
	if (err)
		return err;
	if (!fm->filename)
		return DEC_MISSING_FIELD;
	*has = true;
	return DEC_OK;
}

static enum decode_error dec_value(struct dec *d, const struct field *f, const cJSON *v,
				   char *base)
{
	static const char *const scopes[] = { "cluster", "span" };
	static const char *const states[] = { "connected", "degraded", "lost" };
	void *p = base + f->off;
	switch (f->kind) {
	case K_NUM:
	case K_INT: return dec_number(v, f, p);
	case K_STR: return dec_string(d, v, p);
	case K_STRLIST: return dec_strlist(d, v, p, (size_t *)(base + f->off2));
	case K_KV: return dec_kv(d, v, p, (size_t *)(base + f->off2));
	case K_WORKERS: return dec_workers(d, v, p, (size_t *)(base + f->off2));
	case K_ROWS: return dec_rows(d, v, p, (size_t *)(base + f->off2));
	case K_FILEMETA: return dec_filemeta(d, v, p, (bool *)(base + f->off2));
	case K_SCOPE: return dec_enum(v, scopes, 2, (int *)p);
	case K_STATE: return dec_enum(v, states, 3, (int *)p);
	case K_U32: {
		optnum x;
		enum decode_error err = dec_number(v, f, &x);
		if (!err && x.value != floor(x.value))
			err = DEC_OUT_OF_RANGE;
		if (!err)
			*(uint32_t *)p = (uint32_t)x.value;
		return err;
	}
	}
	return DEC_BAD_TYPE;
}

/* Unknown chunk fields are kept (bounded) as a compact JSON object. */
static void custom_keep(struct dec *d, const cJSON *v)
{
	char *text = cJSON_PrintUnformatted(v);
	if (!text)
		return;
	size_t need = strlen(text) + strlen(v->string) + 8;
	if (d->custom.len + need <= EVENT_CUSTOM_MAX && utf8_ok((const unsigned char *)v->string)) {
		strbuf_puts(&d->custom, d->custom_used ? "," : "{");
		strbuf_json_string(&d->custom, v->string);
		strbuf_puts(&d->custom, ":");
		strbuf_puts(&d->custom, text);
		d->custom_used = true;
	}
	cJSON_free(text);
}

static enum decode_error dec_fields(struct dec *d, const struct table *t, const cJSON *obj,
				    void *base, bool top)
{
	for (const cJSON *v = obj->child; v; v = v->next) {
		if (!v->string)
			return DEC_BAD_TYPE;
		if (top && (strcmp(v->string, "type") == 0 || strcmp(v->string, "t") == 0))
			continue;
		const struct field *f = field_find(t, v->string);
		if (!f) {
			if (top && t == &type_tables[EV_CHUNK])
				custom_keep(d, v);
			continue; /* forward compatible: unknown fields are ignored */
		}
		if (cJSON_IsNull(v))
			continue;
		enum decode_error err = dec_value(d, f, v, base);
		if (err)
			return err;
	}
	return DEC_OK;
}

static enum decode_error check_chunk(const struct ev_chunk *c)
{
	if (!c->duration.valid && !(c->t_start.valid && c->t_end.valid))
		return DEC_MISSING_FIELD;
	if (!c->duration.valid && c->t_end.value < c->t_start.value)
		return DEC_OUT_OF_RANGE;
	if (c->entry_start.valid && c->entry_stop.valid && c->entry_stop.value < c->entry_start.value)
		return DEC_INCONSISTENT;
	if (c->error && !c->error[0])
		return DEC_OUT_OF_RANGE;
	return DEC_OK;
}

static enum decode_error check_sample(struct ev_sample *s, bool count_given)
{
	if (s->n_workers && !count_given)
		s->worker_count = (uint32_t)s->n_workers;
	else if (!count_given)
		return DEC_MISSING_FIELD;
	else if (s->n_workers && s->worker_count != s->n_workers)
		return DEC_INCONSISTENT;
	return DEC_OK;
}

static enum decode_error check_event(struct event *ev, const cJSON *obj)
{
	switch (ev->type) {
	case EV_CHUNK: return check_chunk(&ev->u.chunk);
	case EV_SAMPLE:
		return check_sample(&ev->u.sample, cJSON_GetObjectItemCaseSensitive(obj, "worker_count") &&
							   !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(obj, "worker_count")));
	case EV_RUN_START: return ev->u.run_start.run_id ? DEC_OK : DEC_MISSING_FIELD;
	case EV_FINE: return cJSON_GetObjectItemCaseSensitive(obj, "rows") ? DEC_OK : DEC_MISSING_FIELD;
	case EV_STATUS:
		return ev->u.status.source && cJSON_GetObjectItemCaseSensitive(obj, "state")
			       ? DEC_OK
			       : DEC_MISSING_FIELD;
	default: return DEC_OK;
	}
}

static enum decode_error dec_head(const cJSON *obj, struct event *ev)
{
	const cJSON *type = NULL, *t = NULL;
	for (const cJSON *v = obj->child; v && !(type && t); v = v->next) {
		if (!v->string)
			continue;
		if (!type && strcmp(v->string, "type") == 0)
			type = v;
		else if (!t && strcmp(v->string, "t") == 0)
			t = v;
	}
	if (!cJSON_IsString(type))
		return DEC_NO_TYPE;
	ev->type = event_type_from_name(type->valuestring);
	if (ev->type == EV_NONE)
		return DEC_UNKNOWN_TYPE;
	if (!cJSON_IsNumber(t) || !(t->valuedouble >= T_MIN && t->valuedouble <= T_MAX))
		return DEC_NO_TIME;
	ev->t = t->valuedouble;
	return DEC_OK;
}

static enum decode_error dec_object(struct dec *d, const cJSON *obj)
{
	struct event *ev = d->ev;
	enum decode_error err = dec_head(obj, ev);
	if (err)
		return err;
	err = dec_fields(d, &type_tables[ev->type], obj, &ev->u, true);
	if (err)
		return err;
	err = check_event(ev, obj);
	if (err)
		return err;
	if (d->custom_used) {
		strbuf_puts(&d->custom, "}");
		if (d->custom.failed)
			return DEC_NO_MEMORY;
		ev->u.chunk.custom_json = arena_strndup(&ev->mem, d->custom.data, d->custom.len);
		if (!ev->u.chunk.custom_json)
			return DEC_NO_MEMORY;
	}
	return DEC_OK;
}

enum decode_error event_decode_json(const char *text, size_t len, struct event *ev)
{
	event_reset(ev);
	if (len > EVENT_JSON_MAX)
		return DEC_TOO_LARGE;
	if (!depth_ok(text, len))
		return DEC_TOO_DEEP;
	const char *end = NULL;
	cJSON *obj = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!obj)
		return DEC_NOT_JSON;
	for (; end && end < text + len; end++) {
		if (*end != ' ' && *end != '\t' && *end != '\r' && *end != '\n') {
			cJSON_Delete(obj); /* trailing bytes after the object */
			return DEC_NOT_JSON;
		}
	}
	enum decode_error err = DEC_NOT_OBJECT;
	struct dec d = { .ev = ev };
	strbuf_init(&d.custom);
	if (cJSON_IsObject(obj))
		err = dec_object(&d, obj);
	strbuf_free(&d.custom);
	cJSON_Delete(obj);
	if (err)
		event_reset(ev); /* all or nothing */
	return err;
}

/* ---- encoding --------------------------------------------------------- */

static void enc_key(struct strbuf *sb, const char *name)
{
	strbuf_puts(sb, ",\"");
	strbuf_puts(sb, name); /* field names need no escaping */
	strbuf_puts(sb, "\":");
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

static void enc_fields(struct strbuf *sb, const struct table *t, const void *base, bool first);

static void enc_object(struct strbuf *sb, const struct table *t, const void *base)
{
	strbuf_puts(sb, "{");
	enc_fields(sb, t, base, true);
	strbuf_puts(sb, "}");
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

/* Writes one field if it holds a value; returns whether it wrote. */
static bool enc_value(struct strbuf *sb, const struct field *f, const char *base)
{
	const void *p = base + f->off;
	size_t n = f->off2 ? *(const size_t *)(base + f->off2) : 0;
	switch (f->kind) {
	case K_NUM:
	case K_INT:
		if (!((const optnum *)p)->valid)
			return false;
		enc_key(sb, f->name);
		strbuf_json_number(sb, ((const optnum *)p)->value);
		return true;
	case K_STR:
		if (!*(const char *const *)p)
			return false;
		enc_key(sb, f->name);
		strbuf_json_string(sb, *(const char *const *)p);
		return true;
	case K_U32:
		enc_key(sb, f->name);
		strbuf_appendf(sb, "%u", (unsigned)*(const uint32_t *)p);
		return true;
	case K_SCOPE:
		enc_key(sb, f->name);
		strbuf_puts(sb, *(const enum fine_scope *)p == FINE_SPAN ? "\"span\"" : "\"cluster\"");
		return true;
	case K_STATE:
		enc_key(sb, f->name);
		strbuf_json_string(sb, source_state_name(*(const enum source_state *)p));
		return true;
	case K_FILEMETA:
		if (!*(const bool *)(base + f->off2))
			return false;
		enc_key(sb, f->name);
		enc_object(sb, &filemeta_table, p);
		return true;
	default: break;
	}
	if (f->kind == K_ROWS) {
		enc_key(sb, f->name);
		enc_rows(sb, *(const struct fine_row *const *)p, n);
		return true;
	}
	if (n == 0 && f->kind != K_STRLIST)
		return false; /* no sections / no worker detail */
	if (n == 0 && !*(const char *const *const *)p)
		return false;
	enc_key(sb, f->name);
	if (f->kind == K_STRLIST)
		enc_strlist(sb, *(const char *const *const *)p, n);
	else if (f->kind == K_KV)
		enc_kv(sb, *(const struct kv_num *const *)p, n);
	else {
		const struct worker_sample *ws = *(const struct worker_sample *const *)p;
		strbuf_puts(sb, "[");
		for (size_t i = 0; i < n; i++) {
			if (i)
				strbuf_puts(sb, ",");
			enc_object(sb, &worker_table, &ws[i]);
		}
		strbuf_puts(sb, "]");
	}
	return true;
}

/* enc_key writes a leading comma; the first field of an object drops it. */
static void enc_fields(struct strbuf *sb, const struct table *t, const void *base, bool first)
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
	enc_fields(out, &type_tables[ev->type], &ev->u, false);
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
