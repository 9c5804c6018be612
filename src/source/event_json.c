/* Event <-> JSON. One field table per event type drives both directions, so
 * a field cannot be decoded under one name and encoded under another. */
#include "roastop/event_json.h"

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

/* ---- the pull parser ---------------------------------------------------
 * One pass over the text, no tree: values are decoded straight into the
 * event's arena. Strict JSON (RFC 8259) plus roastop's limits: nesting
 * depth, string length, UTF-8 validity (including what \u escapes make). */

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

struct jp {
	const char *p, *end;
	int depth;
	struct event *ev;
	struct strbuf custom; /* unknown chunk fields, raw JSON members */
	bool custom_used;
	bool saw_count, saw_rows, saw_state; /* fields whose presence is required */
	bool datagram; /* envelope-only keys are not custom chunk fields */
};

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool lit(struct jp *j, const char *word, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return false;
	j->p += n;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool hex4(struct jp *j, uint32_t *out)
{
	if (j->end - j->p < 4)
		return false;
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(j->p[i]);
		if (h < 0)
			return false;
		v = v << 4 | (uint32_t)h;
	}
	j->p += 4;
	*out = v;
	return true;
}

static size_t utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* \uXXXX, with surrogate pairs; a lone surrogate or \u0000 is bad UTF-8. */
static enum decode_error unicode_escape(struct jp *j, char *o, size_t *n)
{
	uint32_t cp, lo;
	if (!hex4(j, &cp))
		return DEC_NOT_JSON;
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (!lit(j, "\\u", 2) || !hex4(j, &lo))
			return DEC_BAD_UTF8;
		if (lo < 0xDC00 || lo > 0xDFFF)
			return DEC_BAD_UTF8;
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
	} else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0) {
		return DEC_BAD_UTF8;
	}
	*n = utf8_put(o, cp);
	return DEC_OK;
}

static enum decode_error escape(struct jp *j, char *o, size_t *n)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	if (j->p >= j->end)
		return DEC_NOT_JSON;
	char c = *j->p++;
	if (c == 'u')
		return unicode_escape(j, o, n);
	const char *k = memchr(from, c, sizeof(from) - 1);
	if (!k)
		return DEC_NOT_JSON;
	*o = to[k - from];
	*n = 1;
	return DEC_OK;
}

/* A string into buf (cap bytes, NUL-terminated); the opening quote is at p.
 * With buf NULL the string is only checked (for skipped values). Runs of
 * plain bytes are copied at once; UTF-8 is validated only when a byte
 * >= 0x80 appeared. */
static enum decode_error string_into(struct jp *j, char *buf, size_t cap, size_t *len)
{
	j->p++; /* opening quote */
	size_t n = 0;
	bool high = false;
	while (j->p < j->end) {
		const char *run = j->p;
		while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (unsigned char)*j->p >= 0x20) {
			high |= (unsigned char)*j->p >= 0x80;
			j->p++;
		}
		size_t k = (size_t)(j->p - run);
		if (n + k >= cap)
			return DEC_STRING_TOO_LONG;
		if (buf)
			memcpy(buf + n, run, k);
		n += k;
		if (j->p >= j->end)
			break;
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			if (buf)
				buf[n] = '\0';
			*len = n;
			return buf && high && !utf8_ok((const unsigned char *)buf) ? DEC_BAD_UTF8 : DEC_OK;
		}
		if (c < 0x20)
			return DEC_NOT_JSON;
		char tmp[4];
		j->p++; /* backslash */
		enum decode_error e = escape(j, tmp, &k);
		if (e)
			return e;
		high |= (unsigned char)tmp[0] >= 0x80;
		if (n + k >= cap)
			return DEC_STRING_TOO_LONG;
		if (buf)
			memcpy(buf + n, tmp, k);
		n += k;
	}
	return DEC_NOT_JSON;
}

/* A string value into the arena. */
static enum decode_error jp_string(struct jp *j, const char **out)
{
	if (j->p >= j->end || *j->p != '"')
		return DEC_BAD_TYPE;
	char buf[EVENT_MAX_STRING + 8];
	size_t len;
	enum decode_error e = string_into(j, buf, EVENT_MAX_STRING + 1, &len);
	if (e)
		return e;
	*out = arena_strndup(&j->ev->mem, buf, len);
	return *out ? DEC_OK : DEC_NO_MEMORY;
}

static const double pow10_exact[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

static bool is_digit(const struct jp *j)
{
	return j->p < j->end && *j->p >= '0' && *j->p <= '9';
}

/* Digits into a mantissa while it stays below 2^53; counts what overflowed.
 * With mant NULL the digits are only skipped. */
static void digits(struct jp *j, uint64_t *mant, int *ndig, int *frac, bool after_point)
{
	if (!mant) {
		while (is_digit(j))
			j->p++;
		return;
	}
	for (; is_digit(j); j->p++) {
		if (*mant < (1ull << 53) / 10) {
			*mant = *mant * 10 + (uint64_t)(*j->p - '0');
			*ndig += *mant != 0;
			*frac += after_point;
		} else {
			*ndig = 99; /* too many digits for the fast path */
		}
	}
}

/* RFC 8259 number grammar. The value is exact and fast when mantissa and
 * power of ten are both exactly representable (one correctly rounded
 * division or multiplication, Clinger's fast path); else strtod on a
 * bounded copy. convert=false only checks the syntax. */
static enum decode_error number_scan(struct jp *j, double *out, bool convert)
{
	const char *s = j->p;
	bool neg = j->p < j->end && *j->p == '-';
	j->p += neg;
	if (!is_digit(j))
		return DEC_BAD_TYPE;
	uint64_t mant = 0;
	int ndig = 0, frac = 0;
	uint64_t *m = convert ? &mant : NULL;
	if (*j->p == '0')
		j->p++;
	else
		digits(j, m, &ndig, &frac, false);
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!is_digit(j))
			return DEC_NOT_JSON;
		digits(j, m, &ndig, &frac, true);
	}
	bool has_exp = j->p < j->end && (*j->p == 'e' || *j->p == 'E');
	if (has_exp) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!is_digit(j))
			return DEC_NOT_JSON;
		while (is_digit(j))
			j->p++;
	}
	if (!convert)
		return DEC_OK;
	if (!has_exp && ndig <= 15 && frac <= 22) {
		double v = (double)mant / pow10_exact[frac];
		*out = neg ? -v : v;
		return DEC_OK;
	}
	char buf[64];
	size_t n = (size_t)(j->p - s);
	if (n >= sizeof(buf))
		return DEC_OUT_OF_RANGE;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	return isfinite(*out) ? DEC_OK : DEC_OUT_OF_RANGE;
}

static enum decode_error jp_number(struct jp *j, double *out)
{
	return number_scan(j, out, true);
}

static bool jp_null(struct jp *j)
{
	return j->p < j->end && *j->p == 'n' && lit(j, "null", 4);
}

static enum decode_error skip_value(struct jp *j);

/* Walks an object or array, calling each member/element through fn. */
typedef enum decode_error (*member_fn)(struct jp *j, void *ctx, const char *key);

static enum decode_error container(struct jp *j, bool object, member_fn fn, void *ctx)
{
	if (++j->depth > EVENT_JSON_MAX_DEPTH)
		return DEC_TOO_DEEP;
	j->p++; /* the bracket */
	ws(j);
	char close = object ? '}' : ']';
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return DEC_OK;
	}
	for (;;) {
		char key[EVENT_MAX_STRING + 8];
		size_t klen;
		ws(j);
		if (object) {
			if (j->p >= j->end || *j->p != '"')
				return DEC_NOT_JSON;
			enum decode_error e = string_into(j, key, EVENT_MAX_STRING + 1, &klen);
			if (e)
				return e;
			ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return DEC_NOT_JSON;
			ws(j);
		}
		enum decode_error e = fn(j, ctx, object ? key : NULL);
		if (e)
			return e;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return DEC_OK;
		}
		return DEC_NOT_JSON;
	}
}

static enum decode_error skip_member(struct jp *j, void *ctx, const char *key)
{
	(void)ctx;
	(void)key;
	return skip_value(j);
}

static enum decode_error skip_value(struct jp *j)
{
	if (j->p >= j->end)
		return DEC_NOT_JSON;
	size_t len;
	double d;
	switch (*j->p) {
	case '{': return container(j, true, skip_member, NULL);
	case '[': return container(j, false, skip_member, NULL);
	case '"': return string_into(j, NULL, EVENT_JSON_MAX + 1, &len);
	case 't': return lit(j, "true", 4) ? DEC_OK : DEC_NOT_JSON;
	case 'f': return lit(j, "false", 5) ? DEC_OK : DEC_NOT_JSON;
	case 'n': return lit(j, "null", 4) ? DEC_OK : DEC_NOT_JSON;
	default: return number_scan(j, &d, false) == DEC_OK ? DEC_OK : DEC_NOT_JSON;
	}
}

/* ---- decoding into the event ------------------------------------------ */

/* Arrays of unknown length grow by doubling inside the arena. */
struct vec {
	void *data;
	size_t n, cap, size, max;
	enum decode_error err; /* why the last push failed */
};

/* A zeroed new element, or NULL with v->err set (list too long, no memory). */
static void *vec_push(struct jp *j, struct vec *v)
{
	if (v->n == v->max) {
		v->err = DEC_LIST_TOO_LONG;
		return NULL;
	}
	v->err = DEC_NO_MEMORY;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		void *d = arena_alloc(&j->ev->mem, cap * v->size);
		if (!d)
			return NULL;
		if (v->n)
			memcpy(d, v->data, v->n * v->size);
		v->data = d;
		v->cap = cap;
	}
	void *slot = (char *)v->data + v->n++ * v->size;
	memset(slot, 0, v->size);
	return slot;
}

static enum decode_error number_in(struct jp *j, const struct field *f, optnum *out)
{
	double x;
	enum decode_error e = jp_number(j, &x);
	if (e)
		return e;
	if (x < f->lo || x > f->hi || (f->kind == K_INT && x != floor(x)))
		return DEC_OUT_OF_RANGE;
	*out = optnum_of(x);
	return DEC_OK;
}

static enum decode_error strlist_el(struct jp *j, void *ctx, const char *key)
{
	(void)key;
	struct vec *v = ctx;
	const char **slot = vec_push(j, v);
	return slot ? jp_string(j, slot) : v->err;
}

static enum decode_error kv_member(struct jp *j, void *ctx, const char *key)
{
	struct vec *v = ctx;
	struct kv_num *kv = vec_push(j, v);
	if (!kv)
		return v->err;
	double x;
	enum decode_error e = jp_number(j, &x);
	if (e)
		return e;
	if (fabs(x) > BIG)
		return DEC_OUT_OF_RANGE;
	kv->value = x;
	kv->key = arena_strdup(&j->ev->mem, key);
	return kv->key ? DEC_OK : DEC_NO_MEMORY;
}

/* The header pass: "type" and "t" wherever they stand, and for datagrams
 * the envelope fields. */
struct head {
	const char *type_text;
	size_t type_len;
	bool have_t;
	double t;
	bool t_bad;
	struct event_envelope *env; /* NULL outside datagrams */
};

struct obj_ctx {
	const struct table *t;
	char *base;
	bool top;
	struct head *head; /* one-pass mode: "t" and the envelope are read here */
};

static enum decode_error field_member(struct jp *j, void *ctx, const char *key);

static enum decode_error object_into(struct jp *j, const struct table *t, void *base)
{
	if (j->p >= j->end || *j->p != '{')
		return DEC_BAD_TYPE;
	struct obj_ctx c = { t, base, false, NULL };
	return container(j, true, field_member, &c);
}

static enum decode_error worker_el(struct jp *j, void *ctx, const char *key)
{
	(void)key;
	struct vec *v = ctx;
	struct worker_sample *w = vec_push(j, v);
	if (!w)
		return v->err;
	enum decode_error e = object_into(j, &worker_table, w);
	return e ? e : (w->id ? DEC_OK : DEC_MISSING_FIELD);
}

/* [context, prefix, activity, unit, value] */
struct row_ctx {
	struct fine_row *row;
	int i;
};

static enum decode_error row_part(struct jp *j, void *ctx, const char *key)
{
	(void)key;
	struct row_ctx *rc = ctx;
	const char **parts[4] = { &rc->row->context, &rc->row->prefix, &rc->row->activity,
				  &rc->row->unit };
	int i = rc->i++;
	if (i < 4)
		return jp_string(j, parts[i]);
	if (i > 4)
		return DEC_BAD_TYPE;
	double x;
	enum decode_error e = jp_number(j, &x);
	if (e)
		return e;
	if (x < 0 || x > BIG)
		return DEC_OUT_OF_RANGE;
	rc->row->value = x;
	return DEC_OK;
}

static enum decode_error row_el(struct jp *j, void *ctx, const char *key)
{
	(void)key;
	struct vec *v = ctx;
	struct fine_row *row = vec_push(j, v);
	if (!row)
		return v->err;
	if (j->p >= j->end || *j->p != '[')
		return DEC_BAD_TYPE;
	struct row_ctx rc = { row, 0 };
	enum decode_error e = container(j, false, row_part, &rc);
	return e ? e : (rc.i == 5 ? DEC_OK : DEC_BAD_TYPE);
}

/* A list-valued field: fills the pointer at off and the count at off2. */
static enum decode_error list_field(struct jp *j, const struct field *f, char *base)
{
	static const struct {
		size_t size;
		member_fn fn;
		bool object;
	} kinds[] = {
		[K_STRLIST] = { sizeof(const char *), strlist_el, false },
		[K_KV] = { sizeof(struct kv_num), kv_member, true },
		[K_WORKERS] = { sizeof(struct worker_sample), worker_el, false },
		[K_ROWS] = { sizeof(struct fine_row), row_el, false },
	};
	bool object = kinds[f->kind].object;
	if (j->p >= j->end || *j->p != (object ? '{' : '['))
		return DEC_BAD_TYPE;
	struct vec v = { .size = kinds[f->kind].size,
			 .max = f->kind == K_KV ? EVENT_MAX_SECTIONS : EVENT_MAX_LIST };
	enum decode_error e = container(j, object, kinds[f->kind].fn, &v);
	if (e)
		return e;
	if (!v.data && !(v.data = arena_alloc(&j->ev->mem, v.size)))
		return DEC_NO_MEMORY;
	*(void **)(base + f->off) = v.data;
	*(size_t *)(base + f->off2) = v.n;
	return DEC_OK;
}

static enum decode_error enum_field(struct jp *j, const struct field *f, char *base)
{
	static const char *const scopes[] = { "cluster", "span" };
	static const char *const states[] = { "connected", "degraded", "lost" };
	const char *const *names = f->kind == K_SCOPE ? scopes : states;
	int count = f->kind == K_SCOPE ? 2 : 3;
	const char *v;
	enum decode_error e = jp_string(j, &v);
	if (e)
		return e;
	for (int i = 0; i < count; i++) {
		if (strcmp(v, names[i]) == 0) {
			*(int *)(base + f->off) = i;
			return DEC_OK;
		}
	}
	return DEC_OUT_OF_RANGE;
}

static enum decode_error value_field(struct jp *j, const struct field *f, char *base)
{
	void *p = base + f->off;
	switch (f->kind) {
	case K_NUM:
	case K_INT: return number_in(j, f, p);
	case K_STR: return jp_string(j, p);
	case K_SCOPE: return enum_field(j, f, base);
	case K_STATE: j->saw_state = true; return enum_field(j, f, base);
	case K_FILEMETA: {
		enum decode_error e = object_into(j, &filemeta_table, p);
		if (!e && !((struct file_meta *)p)->filename)
			e = DEC_MISSING_FIELD;
		if (!e)
			*(bool *)(base + f->off2) = true;
		return e;
	}
	case K_U32: {
		optnum x;
		enum decode_error e = number_in(j, &(struct field){ f->name, K_INT, 0, 0, f->lo, f->hi }, &x);
		if (!e) {
			*(uint32_t *)p = (uint32_t)x.value;
			j->saw_count = true;
		}
		return e;
	}
	case K_ROWS: j->saw_rows = true; return list_field(j, f, base);
	default: return list_field(j, f, base);
	}
}

/* An unknown chunk field is kept as raw JSON (validated), within a budget. */
static enum decode_error custom_keep(struct jp *j, const char *key)
{
	const char *start = j->p;
	enum decode_error e = skip_value(j);
	if (e)
		return e;
	size_t len = (size_t)(j->p - start);
	if (j->custom.len + len + strlen(key) + 8 > EVENT_CUSTOM_MAX)
		return DEC_OK; /* over budget: dropped, the chunk itself is kept */
	size_t mark = j->custom.len;
	strbuf_puts(&j->custom, j->custom_used ? "," : "{");
	strbuf_json_string(&j->custom, key);
	strbuf_puts(&j->custom, ":");
	strbuf_append(&j->custom, start, len);
	if (!utf8_ok((const unsigned char *)j->custom.data + mark))
		return DEC_BAD_UTF8;
	j->custom_used = true;
	return DEC_OK;
}

static bool is_envelope_key(const char *key)
{
	switch (key[0]) { /* most keys are rejected on their first byte */
	case 'h': return strcmp(key, "host") == 0;
	case 'p': return strcmp(key, "pid") == 0 || strcmp(key, "part") == 0 ||
			 strcmp(key, "parts") == 0;
	case 's': return strcmp(key, "seq") == 0;
	case 'r': return strcmp(key, "report_id") == 0;
	default: return false;
	}
}

static enum decode_error head_member(struct jp *j, void *ctx, const char *key);

static enum decode_error field_member(struct jp *j, void *ctx, const char *key)
{
	struct obj_ctx *c = ctx;
	if (c->top && c->head) {
		/* one pass: the envelope value is read, then decoded again as a field */
		const char *at = j->p;
		bool env = c->head->env && is_envelope_key(key);
		bool both = env && field_find(c->t, key);
		if ((key[0] == 't' && key[1] == '\0') || (env && !both))
			return head_member(j, c->head, key);
		if (both) {
			enum decode_error e = head_member(j, c->head, key);
			if (e)
				return e;
			j->p = at;
		}
	}
	if (c->top && key[0] == 't' && (key[1] == '\0' || strcmp(key, "type") == 0))
		return skip_value(j); /* read by the header pass */
	const struct field *f = field_find(c->t, key);
	if (!f && c->top && j->datagram && (is_envelope_key(key) || strcmp(key, "run_id") == 0 ||
					    strcmp(key, "sent") == 0))
		return skip_value(j);
	if (!f)
		return c->top && c->t == &type_tables[EV_CHUNK] ? custom_keep(j, key) : skip_value(j);
	if (jp_null(j))
		return DEC_OK; /* null: not given */
	return value_field(j, f, c->base);
}


/* A string value into a fixed buffer (envelope fields). */
static enum decode_error fixed_string(struct jp *j, char *buf, size_t size)
{
	if (j->p >= j->end || *j->p != '"')
		return DEC_BAD_TYPE;
	size_t len;
	return string_into(j, buf, size, &len);
}

static enum decode_error envelope_number(struct jp *j, double lo, double hi, double *out,
					 bool *has)
{
	double x;
	enum decode_error e = jp_number(j, &x);
	if (e)
		return e;
	if (x < lo || x > hi || x != floor(x))
		return DEC_OUT_OF_RANGE;
	*out = x;
	if (has)
		*has = true;
	return DEC_OK;
}

static enum decode_error envelope_member(struct jp *j, struct event_envelope *env,
					 const char *key)
{
	double part = 0;
	if (jp_null(j))
		return DEC_OK;
	if (strcmp(key, "host") == 0)
		return fixed_string(j, env->host, sizeof(env->host));
	if (strcmp(key, "pid") == 0)
		return envelope_number(j, 0, 1e9, &env->pid, &env->has_pid);
	if (strcmp(key, "seq") == 0)
		return envelope_number(j, 0, 9007199254740991.0, &env->seq, &env->has_seq);
	if (strcmp(key, "report_id") == 0)
		return fixed_string(j, env->report_id, sizeof(env->report_id));
	if (strcmp(key, "part") == 0 || strcmp(key, "parts") == 0) {
		enum decode_error e = envelope_number(j, 0, 64, &part, NULL);
		*(key[4] ? &env->parts : &env->part) = (int)part;
		return e;
	}
	return skip_value(j);
}


static enum decode_error head_member(struct jp *j, void *ctx, const char *key)
{
	struct head *h = ctx;
	if (h->env && j->depth == 1 && is_envelope_key(key))
		return envelope_member(j, h->env, key);
	if (j->depth != 1 || key[0] != 't')
		return skip_value(j);
	if (strcmp(key, "type") == 0 && j->p < j->end && *j->p == '"') {
		h->type_text = j->p + 1;
		enum decode_error e = string_into(j, NULL, EVENT_MAX_STRING + 1, &h->type_len);
		return e;
	}
	if (key[1] == '\0') {
		h->have_t = true;
		if (jp_number(j, &h->t) == DEC_OK)
			return DEC_OK;
		h->t_bad = true;
	}
	return skip_value(j);
}

static enum decode_error head_finish(const struct head *h, struct event *ev, double now);

static enum decode_error decode_head(struct jp *j, struct event *ev,
				     struct event_envelope *env, double now)
{
	struct head h = { .env = env };
	enum decode_error e = container(j, true, head_member, &h);
	if (e)
		return e;
	ws(j);
	if (j->p != j->end)
		return DEC_NOT_JSON; /* trailing bytes after the object */
	return head_finish(&h, ev, now);
}

static enum decode_error head_finish(const struct head *hp, struct event *ev, double now)
{
	struct head h = *hp;
	if (!h.type_text)
		return DEC_NO_TYPE;
	char name[32];
	if (h.type_len >= sizeof(name))
		return DEC_UNKNOWN_TYPE;
	memcpy(name, h.type_text, h.type_len);
	name[h.type_len] = '\0';
	ev->type = event_type_from_name(name);
	if (ev->type == EV_NONE)
		return DEC_UNKNOWN_TYPE;
	if (h.env) {
		ev->t = now; /* roastop's own clock stamps datagrams */
		return DEC_OK;
	}
	if (!h.have_t || h.t_bad || !(h.t >= T_MIN && h.t <= T_MAX))
		return DEC_NO_TIME;
	ev->t = h.t;
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
	if (!count_given && !s->workers)
		return DEC_MISSING_FIELD;
	if (!count_given)
		s->worker_count = (uint32_t)s->n_workers;
	else if (s->workers && s->worker_count != s->n_workers)
		return DEC_INCONSISTENT;
	return DEC_OK;
}

static enum decode_error check_event(struct jp *j, struct event *ev)
{
	switch (ev->type) {
	case EV_CHUNK: return check_chunk(&ev->u.chunk);
	case EV_SAMPLE: return check_sample(&ev->u.sample, j->saw_count);
	case EV_RUN_START: return ev->u.run_start.run_id ? DEC_OK : DEC_MISSING_FIELD;
	case EV_FINE: return j->saw_rows ? DEC_OK : DEC_MISSING_FIELD;
	case EV_STATUS: return ev->u.status.source && j->saw_state ? DEC_OK : DEC_MISSING_FIELD;
	default: return DEC_OK;
	}
}

/* Unknown chunk fields, kept as one JSON object. */
static enum decode_error custom_finish(struct jp *j)
{
	if (!j->custom_used)
		return DEC_OK;
	strbuf_puts(&j->custom, "}");
	if (j->custom.failed)
		return DEC_NO_MEMORY;
	j->ev->u.chunk.custom_json = arena_strndup(&j->ev->mem, j->custom.data, j->custom.len);
	return j->ev->u.chunk.custom_json ? DEC_OK : DEC_NO_MEMORY;
}

static enum decode_error decode_body(struct jp *j, const char *text)
{
	struct event *ev = j->ev;
	j->p = text;
	j->depth = 0;
	ws(j);
	struct obj_ctx c = { &type_tables[ev->type], (char *)&ev->u, true, NULL };
	enum decode_error e = container(j, true, field_member, &c);
	if (!e)
		e = check_event(j, ev);
	return e ? e : custom_finish(j);
}

/* Does the object start with "type": "<known type>"? Every roastop writer
 * puts it first; then one pass suffices. */
static bool type_first(const struct jp *j0, struct head *h)
{
	struct jp j = *j0;
	j.p++; /* '{' */
	ws(&j);
	if (!lit(&j, "\"type\"", 6))
		return false;
	ws(&j);
	if (!lit(&j, ":", 1))
		return false;
	ws(&j);
	if (j.p >= j.end || *j.p != '"')
		return false;
	h->type_text = j.p + 1;
	if (string_into(&j, NULL, 32, &h->type_len) != DEC_OK)
		return false;
	char name[32];
	memcpy(name, h->type_text, h->type_len);
	name[h->type_len] = '\0';
	return event_type_from_name(name) != EV_NONE;
}

/* One pass: fields, "t" and the envelope together. */
static enum decode_error decode_one_pass(struct jp *j, struct head *h, double now)
{
	struct event *ev = j->ev;
	enum decode_error e = head_finish(h, ev, now); /* the type; "t" is checked below */
	if (e == DEC_NO_TIME)
		e = DEC_OK;
	if (e)
		return e;
	struct obj_ctx c = { &type_tables[ev->type], (char *)&ev->u, true, h };
	e = container(j, true, field_member, &c);
	if (e)
		return e;
	ws(j);
	if (j->p != j->end)
		return DEC_NOT_JSON; /* trailing bytes after the object */
	e = head_finish(h, ev, now);
	if (!e)
		e = check_event(j, ev);
	return e ? e : custom_finish(j);
}

/* Two passes over the text: the header pass checks the syntax and finds
 * "type" and "t" wherever they are; the body pass fills the event. When
 * "type" comes first (always, from roastop's own writers) one pass does. */
static enum decode_error decode(const char *text, size_t len, struct event *ev,
				struct event_envelope *env, double now)
{
	event_reset(ev);
	if (len > EVENT_JSON_MAX)
		return DEC_TOO_LARGE;
	struct jp j = { .p = text, .end = text + len, .ev = ev, .datagram = env != NULL };
	ws(&j);
	enum decode_error e;
	struct head h = { .env = env };
	if (j.p < j.end && *j.p == '{' && type_first(&j, &h)) {
		strbuf_init(&j.custom);
		e = decode_one_pass(&j, &h, now);
		strbuf_free(&j.custom);
		if (e)
			event_reset(ev);
		return e;
	}
	if (j.p < j.end && *j.p == '{') {
		e = decode_head(&j, ev, env, now);
	} else {
		e = skip_value(&j);
		if (e == DEC_OK) {
			ws(&j);
			e = j.p == j.end ? DEC_NOT_OBJECT : DEC_NOT_JSON;
		}
		if (e == DEC_BAD_TYPE || j.p == text)
			e = DEC_NOT_JSON;
	}
	if (!e) {
		strbuf_init(&j.custom);
		e = decode_body(&j, text);
		strbuf_free(&j.custom);
	}
	if (e)
		event_reset(ev); /* all or nothing */
	return e;
}

enum decode_error event_decode_json(const char *text, size_t len, struct event *ev)
{
	return decode(text, len, ev, NULL, 0);
}

enum decode_error event_decode_datagram(const char *text, size_t len, double now,
					struct event *ev, struct event_envelope *env)
{
	memset(env, 0, sizeof(*env));
	enum decode_error e = decode(text, len, ev, env, now);
	if (e)
		memset(env, 0, sizeof(*env));
	return e;
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
