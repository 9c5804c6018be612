/* Event <-> JSON. One field table per event type drives both directions, so
 * a field cannot be decoded under one name and encoded under another.
 *
 * Decoding is a one-pass pull parser straight into the event's arena, not a
 * cJSON tree: a tree costs an allocation per value and a second walk, and
 * replay must decode far above 500k chunk lines a second on one core. The
 * limits a tree parse would need a pre-scan for (nesting depth, sizes) are
 * checked as the parser goes. */
#include "roastop/event_datagram.h"
#include "roastop/event_field.h"
#include "roastop/range.h"
#include "roastop/strutil.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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


/* ---- the pull parser ---------------------------------------------------
 * One pass over the text, no tree: values are decoded straight into the
 * event's arena. Strict JSON (RFC 8259) plus roastop's limits: nesting
 * depth, string length, UTF-8 validity (including what \u escapes make). */


struct jp {
	const char *p, *end;
	int depth;
	struct event *ev;
	struct strbuf custom; /* unknown chunk fields, compact JSON members */
	bool custom_used;
	bool saw_count, saw_rows, saw_state; /* fields whose presence is required */
	bool datagram; /* envelope-only keys are not custom chunk fields */
};

static void ws_skip(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* Compact JSON has no whitespace: one inlined test settles that case. */
static inline void ws(struct jp *j)
{
	if (j->p < j->end && (unsigned char)*j->p > ' ')
		return;
	ws_skip(j);
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

/* The end of a run of bytes that need no attention inside a string: not a
 * quote, backslash or control byte. Eight bytes at a time (SWAR): each test
 * sets the high bit of a matching byte, with false alarms only in bytes
 * after a real match, so the lowest flagged byte is the first special one.
 * ORs the bytes it passed over into *seen, so the caller learns whether
 * any byte >= 0x80 needs UTF-8 validation. */
static const char *plain_end(const char *p, const char *end, uint64_t *seen)
{
	uint64_t acc = 0;
#ifdef __SSE2__
	/* the same test sixteen bytes at a time; movemask gives the high bits */
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i ctl = _mm_set1_epi8(0x1F);
	while (end - p >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
							_mm_cmpeq_epi8(x, bslash)),
					   _mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));
		unsigned mask = (unsigned)_mm_movemask_epi8(hit);
		unsigned high = (unsigned)_mm_movemask_epi8(x);
		if (mask) {
			unsigned skip = (unsigned)__builtin_ctz(mask);
			*seen |= acc | ((high & ((1u << skip) - 1)) ? 0x80 : 0);
			return p + skip;
		}
		acc |= high ? 0x80 : 0;
		p += 16;
	}
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	while (end - p >= 8) {
		uint64_t x, q, b;
		memcpy(&x, p, 8);
		q = x ^ (ones * '"');
		b = x ^ (ones * '\\');
		uint64_t hit = ((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x);
		hit &= highs;
		if (hit) {
			unsigned skip = (unsigned)__builtin_ctzll(hit) / 8;
			*seen |= acc | (x & ((1ull << (8 * skip)) - 1));
			return p + skip;
		}
		acc |= x;
		p += 8;
	}
#endif
	for (; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\' || c < 0x20)
			break;
		acc |= c;
	}
	*seen |= acc;
	return p;
}

/* A string into buf (cap bytes, NUL-terminated); the opening quote is at p.
 * With buf NULL the string is only checked (for skipped values). Runs of
 * plain bytes are copied at once; UTF-8 is validated only when a byte
 * >= 0x80 appeared. */
static enum decode_error string_into(struct jp *j, char *buf, size_t cap, size_t *len)
{
	j->p++; /* opening quote */
	size_t n = 0;
	uint64_t seen = 0;
	while (j->p < j->end) {
		const char *run = j->p;
		j->p = plain_end(run, j->end, &seen);
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
			bool high = seen & 0x8080808080808080u;
			if (buf && high && !strutil_utf8_ok((const unsigned char *)buf))
				return DEC_BAD_UTF8;
			return DEC_OK;
		}
		if (c < 0x20)
			return DEC_NOT_JSON;
		char tmp[4];
		j->p++; /* backslash */
		enum decode_error e = escape(j, tmp, &k);
		if (e)
			return e;
		seen |= (unsigned char)tmp[0];
		if (n + k >= cap)
			return DEC_STRING_TOO_LONG;
		if (buf)
			memcpy(buf + n, tmp, k);
		n += k;
	}
	return DEC_NOT_JSON;
}

/* A string value into the arena. One without escapes (nearly all) is
 * copied straight from the text. */
static enum decode_error jp_string(struct jp *j, const char **out)
{
	if (j->p >= j->end || *j->p != '"')
		return DEC_BAD_TYPE;
	uint64_t seen = 0;
	const char *s = j->p + 1, *q = plain_end(s, j->end, &seen);
	if (q < j->end && *q == '"') {
		if ((size_t)(q - s) > EVENT_MAX_STRING)
			return DEC_STRING_TOO_LONG;
		char *d = arena_strndup(&j->ev->mem, s, (size_t)(q - s));
		if (!d)
			return DEC_NO_MEMORY;
		if ((seen & 0x8080808080808080u) && !strutil_utf8_ok((const unsigned char *)d))
			return DEC_BAD_UTF8;
		j->p = q + 1;
		*out = d;
		return DEC_OK;
	}
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

#define MAX_DIGITS 19 /* 10^19 < 2^64: up to so many digits accumulate exactly */

/* Decimal digits from p appended to *mant (which wraps past MAX_DIGITS
 * digits: the caller counts them and then does not use it). */
static const char *digits(const char *p, const char *end, uint64_t *mant)
{
	uint64_t m = *mant;
	unsigned d;
	for (; p < end && (d = (unsigned)(*p - '0')) < 10; p++)
		m = m * 10 + d;
	*mant = m;
	return p;
}

/* An exponent (sign and digits), saturated far beyond any double's range. */
static const char *exponent(const char *p, const char *end, long *out)
{
	bool neg = *p == '-';
	p += *p == '-' || *p == '+';
	long e = 0;
	for (; p < end && (unsigned)(*p - '0') < 10; p++)
		if (e < 100000)
			e = e * 10 + (*p - '0');
	*out = neg ? -e : e;
	return p;
}

static bool digit_at(const char *p, const char *end)
{
	return p < end && (unsigned)(*p - '0') < 10;
}

/* RFC 8259 number grammar. When the digits make an exact integer mantissa
 * up to 2^53 and the power of ten is exact too (|e| <= 22), one IEEE
 * multiplication or division is correctly rounded (Clinger's fast path), so
 * the value equals strtod's; other numbers go to strtod on a bounded copy. */
static enum decode_error number_scan(struct jp *j, double *out)
{
	const char *s = j->p, *p = j->p, *end = j->end;
	bool neg = p < end && *p == '-';
	p += neg;
	if (!digit_at(p, end))
		return DEC_BAD_TYPE;
	uint64_t mant = 0;
	long e10 = 0, ex;
	const char *i = p;
	p = *p == '0' ? p + 1 : digits(p, end, &mant);
	size_t count = (size_t)(p - i);
	if (p < end && *p == '.') {
		const char *f = p + 1;
		p = digits(f, end, &mant);
		if (p == f)
			return DEC_NOT_JSON;
		e10 = -(long)(p - f);
		count += (size_t)(p - f);
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (!digit_at(p + (p < end && (*p == '+' || *p == '-')), end))
			return DEC_NOT_JSON;
		p = exponent(p, end, &ex);
		e10 += ex;
	}
	j->p = p;
	/* FLT_EVAL_METHOD 0: no x87 double rounding to spoil the one rounding */
	if (FLT_EVAL_METHOD == 0 && count <= MAX_DIGITS && mant <= (1ull << 53) && e10 >= -22 &&
	    e10 <= 22) {
		double m = (double)mant;
		double v = e10 < 0 ? m / pow10_exact[-e10] : m * pow10_exact[e10];
		*out = neg ? -v : v;
		return DEC_OK;
	}
	char buf[64];
	size_t n = (size_t)(p - s);
	if (n >= sizeof(buf))
		return DEC_OUT_OF_RANGE;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	return isfinite(*out) ? DEC_OK : DEC_OUT_OF_RANGE;
}

static enum decode_error jp_number(struct jp *j, double *out)
{
	return number_scan(j, out);
}

static bool jp_null(struct jp *j)
{
	return j->p < j->end && *j->p == 'n' && lit(j, "null", 4);
}

static enum decode_error skip_value(struct jp *j);

/* An object key. A plain ASCII key without escapes (all of roastop's) is
 * used where it stands in the text; any other is decoded into kbuf. Either
 * way it is not NUL-terminated: compare with KEY_IS. */
static enum decode_error key_scan(struct jp *j, char *kbuf, const char **key, size_t *klen)
{
	if (j->p >= j->end || *j->p != '"')
		return DEC_NOT_JSON;
#ifdef __SSE2__
	/* A key of up to 15 plain ASCII bytes (every field name but two), read
	 * whole in one 16-byte test: the first byte that is a quote, backslash,
	 * control or >= 0x80 must be the closing quote. */
	if (j->end - j->p >= 17) {
		const char *k = j->p + 1;
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)k);
		const __m128i ctl = _mm_set1_epi8(0x1F);
		__m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
					   _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
		hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));
		unsigned mask = (unsigned)_mm_movemask_epi8(hit) | (unsigned)_mm_movemask_epi8(x);
		if (mask) {
			unsigned n = (unsigned)__builtin_ctz(mask);
			if (k[n] == '"') {
				*key = k;
				*klen = n;
				j->p = k + n + 1;
				return DEC_OK;
			}
		}
	}
#endif
	uint64_t seen = 0;
	const char *s = j->p + 1, *q = plain_end(s, j->end, &seen);
	if (q < j->end && *q == '"' && !(seen & 0x8080808080808080u)) {
		if ((size_t)(q - s) > EVENT_MAX_STRING)
			return DEC_STRING_TOO_LONG;
		*key = s;
		*klen = (size_t)(q - s);
		j->p = q + 1;
		return DEC_OK;
	}
	*key = kbuf;
	return string_into(j, kbuf, EVENT_MAX_STRING + 1, klen);
}

#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), lit, sizeof(lit) - 1) == 0)

/* Walks an object or array, calling each member/element through fn. */
typedef enum decode_error (*member_fn)(struct jp *j, void *ctx, const char *key, size_t klen);

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
		char kbuf[EVENT_MAX_STRING + 8];
		const char *key = NULL;
		size_t klen = 0;
		ws(j);
		if (object) {
			enum decode_error e = key_scan(j, kbuf, &key, &klen);
			if (e)
				return e;
			ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return DEC_NOT_JSON;
			ws(j);
		}
		enum decode_error e = fn(j, ctx, key, klen);
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

static enum decode_error skip_member(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)ctx;
	(void)key;
	(void)klen;
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
	default:
		/* out of range is still JSON, and this value is not used */
		switch (number_scan(j, &d)) {
		case DEC_OK:
		case DEC_OUT_OF_RANGE: return DEC_OK;
		default: return DEC_NOT_JSON;
		}
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

static enum decode_error number_in(struct jp *j, const struct event_field *f, optnum *out)
{
	double x;
	enum decode_error e = jp_number(j, &x);
	if (e)
		return e;
	if (!event_field_number_ok(f, x))
		return DEC_OUT_OF_RANGE;
	*out = optnum_of(x);
	return DEC_OK;
}

static enum decode_error strlist_el(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)key;
	(void)klen;
	struct vec *v = ctx;
	const char **slot = vec_push(j, v);
	return slot ? jp_string(j, slot) : v->err;
}

static enum decode_error kv_member(struct jp *j, void *ctx, const char *key, size_t klen)
{
	struct vec *v = ctx;
	struct kv_num *kv = vec_push(j, v);
	if (!kv)
		return v->err;
	double x;
	enum decode_error e = jp_number(j, &x);
	if (e)
		return e;
	if (fabs(x) > EVENT_BIG)
		return DEC_OUT_OF_RANGE;
	kv->value = x;
	kv->key = arena_strndup(&j->ev->mem, key, klen);
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
	const struct field_table *t;
	char *base;
	bool top;
	struct head *head; /* one-pass mode: "t" and the envelope are read here */
};

static enum decode_error field_member(struct jp *j, void *ctx, const char *key, size_t klen);

static enum decode_error object_into(struct jp *j, const struct field_table *t, void *base)
{
	if (j->p >= j->end || *j->p != '{')
		return DEC_BAD_TYPE;
	struct obj_ctx c = { t, base, false, NULL };
	return container(j, true, field_member, &c);
}

static enum decode_error worker_el(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)key;
	(void)klen;
	struct vec *v = ctx;
	struct worker_sample *w = vec_push(j, v);
	if (!w)
		return v->err;
	enum decode_error e = object_into(j, event_field_workers(), w);
	return e ? e : (w->id ? DEC_OK : DEC_MISSING_FIELD);
}

/* [context, prefix, activity, unit, value] */
struct row_ctx {
	struct fine_row *row;
	int i;
};

static enum decode_error row_part(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)key;
	(void)klen;
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
	if (!range_ok(RANGE_FINE, x))
		return DEC_OUT_OF_RANGE;
	rc->row->value = x;
	return DEC_OK;
}

static enum decode_error row_el(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)key;
	(void)klen;
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

/* [group or null, name, value]: one counter of a source's statistics. */
struct counter_ctx {
	struct source_counter *c;
	int i;
};

static enum decode_error counter_part(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)key;
	(void)klen;
	struct counter_ctx *cc = ctx;
	int i = cc->i++;
	if (i == 0 && jp_null(j))
		return DEC_OK; /* no group */
	if (i < 2)
		return jp_string(j, i ? &cc->c->name : &cc->c->group);
	if (i > 2)
		return DEC_BAD_TYPE;
	double x;
	enum decode_error e = jp_number(j, &x);
	if (e)
		return e;
	if (!(x >= 0 && x <= EVENT_COUNTER_VALUE_MAX && x == (double)(int64_t)x))
		return DEC_OUT_OF_RANGE;
	cc->c->value = (uint64_t)x;
	return DEC_OK;
}

static enum decode_error counter_el(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)key;
	(void)klen;
	struct vec *v = ctx;
	struct source_counter *c = vec_push(j, v);
	if (!c)
		return v->err;
	if (j->p >= j->end || *j->p != '[')
		return DEC_BAD_TYPE;
	struct counter_ctx cc = { c, 0 };
	enum decode_error e = container(j, false, counter_part, &cc);
	return e ? e : (cc.i == 3 ? DEC_OK : DEC_BAD_TYPE);
}

/* [key, prefix, worker, seconds]: a task executing now (a sample's). */
struct running_ctx {
	struct task_running *r;
	int i;
};

static enum decode_error running_part(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)key;
	(void)klen;
	struct running_ctx *rc = ctx;
	const char **parts[3] = { &rc->r->key, &rc->r->prefix, &rc->r->worker };
	int i = rc->i++;
	if (i < 3)
		return jp_string(j, parts[i]);
	if (i > 3)
		return DEC_BAD_TYPE;
	enum decode_error e = jp_number(j, &rc->r->seconds);
	return e ? e : range_ok(RANGE_TASK_SECONDS, rc->r->seconds) ? DEC_OK : DEC_OUT_OF_RANGE;
}

static enum decode_error running_el(struct jp *j, void *ctx, const char *key, size_t klen)
{
	(void)key;
	(void)klen;
	struct vec *v = ctx;
	struct task_running *r = vec_push(j, v);
	if (!r)
		return v->err;
	if (j->p >= j->end || *j->p != '[')
		return DEC_BAD_TYPE;
	struct running_ctx rc = { r, 0 };
	enum decode_error e = container(j, false, running_part, &rc);
	return e ? e : (rc.i == 4 ? DEC_OK : DEC_BAD_TYPE);
}

/* A list-valued field: fills the pointer at off and the count at off2. */
static enum decode_error list_field(struct jp *j, const struct event_field *f, char *base)
{
	static const struct {
		size_t size;
		member_fn fn;
		bool object;
	} kinds[] = {
		[FK_STRLIST] = { sizeof(const char *), strlist_el, false },
		[FK_KV] = { sizeof(struct kv_num), kv_member, true },
		[FK_WORKERS] = { sizeof(struct worker_sample), worker_el, false },
		[FK_ROWS] = { sizeof(struct fine_row), row_el, false },
		[FK_COUNTERS] = { sizeof(struct source_counter), counter_el, false },
		[FK_RUNNING] = { sizeof(struct task_running), running_el, false },
	};
	bool object = kinds[f->kind].object;
	if (j->p >= j->end || *j->p != (object ? '{' : '['))
		return DEC_BAD_TYPE;
	size_t max = f->kind == FK_KV ? EVENT_MAX_SECTIONS : EVENT_MAX_LIST;
	if (f->kind == FK_COUNTERS)
		max = EVENT_COUNTERS_MAX;
	if (f->kind == FK_RUNNING)
		max = EVENT_MAX_RUNNING;
	struct vec v = { .size = kinds[f->kind].size, .max = max };
	enum decode_error e = container(j, object, kinds[f->kind].fn, &v);
	if (e)
		return e;
	if (!v.data && !(v.data = arena_alloc(&j->ev->mem, v.size)))
		return DEC_NO_MEMORY;
	*(void **)(base + f->off) = v.data;
	*(size_t *)(base + f->off2) = v.n;
	return DEC_OK;
}

static enum decode_error enum_field(struct jp *j, const struct event_field *f, char *base)
{
	static const char *const scopes[] = { "cluster", "span" };
	static const char *const states[] = { "connected", "degraded", "lost" };
	const char *const *names = f->kind == FK_SCOPE ? scopes : states;
	int count = f->kind == FK_SCOPE ? 2 : 3;
	const char *v;
	enum decode_error e = jp_string(j, &v);
	if (e)
		return e;
	if (f->kind == FK_LEVEL) {
		enum log_kind k = log_kind_from_name(v);
		*(int *)(base + f->off) = (int)k;
		return k == LOG__COUNT ? DEC_OUT_OF_RANGE : DEC_OK;
	}
	for (int i = 0; i < count; i++) {
		if (strcmp(v, names[i]) == 0) {
			*(int *)(base + f->off) = i;
			return DEC_OK;
		}
	}
	return DEC_OUT_OF_RANGE;
}

static enum decode_error value_field(struct jp *j, const struct event_field *f, char *base)
{
	void *p = base + f->off;
	switch (f->kind) {
	case FK_NUM:
	case FK_INT: return number_in(j, f, p);
	case FK_STR: return jp_string(j, p);
	case FK_SCOPE:
	case FK_LEVEL: return enum_field(j, f, base);
	case FK_STATE: j->saw_state = true; return enum_field(j, f, base);
	case FK_FILEMETA: {
		enum decode_error e = object_into(j, event_field_filemeta(), p);
		if (!e && !((struct file_meta *)p)->filename)
			e = DEC_MISSING_FIELD;
		if (!e)
			*(bool *)(base + f->off2) = true;
		return e;
	}
	case FK_U32: {
		optnum x;
		const struct event_field as_int = { f->name, f->len, FK_INT, 0, 0, f->lo, f->hi, 0 };
		enum decode_error e = number_in(j, &as_int, &x);
		if (!e) {
			*(uint32_t *)p = (uint32_t)x.value;
			j->saw_count = true;
		}
		return e;
	}
	case FK_ROWS: j->saw_rows = true; return list_field(j, f, base);
	default: return list_field(j, f, base);
	}
}

/* Valid JSON text without the whitespace between tokens. */
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

/* An unknown chunk field is kept as compact JSON (validated), within a
 * budget. */
static enum decode_error custom_keep(struct jp *j, const char *key, size_t klen)
{
	const char *start = j->p;
	enum decode_error e = skip_value(j);
	if (e)
		return e;
	size_t len = (size_t)(j->p - start);
	if (j->custom.len + len + 6 * klen + 8 > EVENT_CUSTOM_MAX)
		return DEC_OK; /* over budget: dropped, the chunk itself is kept */
	char name[EVENT_MAX_STRING + 1]; /* keys hold no NUL: \u0000 is rejected */
	memcpy(name, key, klen);
	name[klen] = '\0';
	size_t mark = j->custom.len;
	strbuf_puts(&j->custom, j->custom_used ? "," : "{");
	strbuf_json_string(&j->custom, name);
	strbuf_puts(&j->custom, ":");
	compact_append(&j->custom, start, len);
	if (j->custom.failed)
		return DEC_NO_MEMORY;
	if (!strutil_utf8_ok((const unsigned char *)j->custom.data + mark))
		return DEC_BAD_UTF8;
	j->custom_used = true;
	return DEC_OK;
}

static bool is_envelope_key(const char *key, size_t klen)
{
	switch (klen ? key[0] : 0) { /* most keys are rejected on their first byte */
	case 'h': return KEY_IS(key, klen, "host");
	case 'i': return KEY_IS(key, klen, "instance");
	case 'p': return KEY_IS(key, klen, "pid") || KEY_IS(key, klen, "part") ||
			 KEY_IS(key, klen, "parts");
	case 's': return KEY_IS(key, klen, "seq");
	case 'r': return KEY_IS(key, klen, "report_id");
	default: return false;
	}
}

/* Datagram keys that are no event field: not custom chunk fields either.
 * (run_id is a field of every type that carries it.) */
static bool envelope_only(const char *key, size_t klen)
{
	return is_envelope_key(key, klen) || KEY_IS(key, klen, "sent");
}

static enum decode_error head_member(struct jp *j, void *ctx, const char *key, size_t klen);

static enum decode_error field_member(struct jp *j, void *ctx, const char *key, size_t klen)
{
	struct obj_ctx *c = ctx;
	bool is_t = klen == 1 && key[0] == 't';
	const struct event_field *f = event_field_find(c->t, key, klen);
	if (c->top && c->head) {
		/* one pass: the envelope value is read, then decoded again as a field */
		const char *at = j->p;
		bool env = c->head->env && is_envelope_key(key, klen);
		if (is_t || (env && !f))
			return head_member(j, c->head, key, klen);
		if (env) {
			enum decode_error e = head_member(j, c->head, key, klen);
			if (e)
				return e;
			j->p = at;
		}
	}
	if (c->top && (is_t || KEY_IS(key, klen, "type")))
		return skip_value(j); /* read by the header pass */
	if (!f && c->top && j->datagram && envelope_only(key, klen))
		return skip_value(j);
	if (!f)
		return c->top && c->t == event_field_table(EV_CHUNK) ? custom_keep(j, key, klen)
								 : skip_value(j);
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
					 const char *key, size_t klen)
{
	double part = 0;
	if (jp_null(j))
		return DEC_OK;
	if (KEY_IS(key, klen, "host"))
		return fixed_string(j, env->host, sizeof(env->host));
	if (KEY_IS(key, klen, "pid"))
		return envelope_number(j, 0, 1e9, &env->pid, &env->has_pid);
	if (KEY_IS(key, klen, "seq"))
		return envelope_number(j, 0, 9007199254740991.0, &env->seq, &env->has_seq);
	if (KEY_IS(key, klen, "instance"))
		return envelope_number(j, 0, 9007199254740991.0, &env->instance, NULL);
	if (KEY_IS(key, klen, "report_id"))
		return fixed_string(j, env->report_id, sizeof(env->report_id));
	if (KEY_IS(key, klen, "part") || KEY_IS(key, klen, "parts")) {
		enum decode_error e = envelope_number(j, 0, 64, &part, NULL);
		if (!e)
			*(klen == 5 ? &env->parts : &env->part) = (int)part;
		return e;
	}
	return skip_value(j);
}


static enum decode_error head_member(struct jp *j, void *ctx, const char *key, size_t klen)
{
	struct head *h = ctx;
	if (h->env && j->depth == 1 && is_envelope_key(key, klen))
		return envelope_member(j, h->env, key, klen);
	if (j->depth != 1 || !klen || key[0] != 't')
		return skip_value(j);
	if (KEY_IS(key, klen, "type") && j->p < j->end && *j->p == '"') {
		h->type_text = j->p + 1;
		enum decode_error e = string_into(j, NULL, EVENT_MAX_STRING + 1, &h->type_len);
		return e;
	}
	if (klen == 1) {
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

/* The types an analysis process sends. The rest are roastop's own (log
 * lines, counters) or its scheduler sources' (samples, fine metrics,
 * statuses, tasks): a sender holding the key may not forge them. */
static bool head_sent_by_emitter(enum event_type t)
{
	switch (t) {
	case EV_RUN_START:
	case EV_RUN_END:
	case EV_REPORT:
	case EV_CHUNK:
	case EV_CHUNK_START:
	case EV_HEARTBEAT: return true;
	default: return false;
	}
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
	if (h.env && !head_sent_by_emitter(ev->type))
		ev->type = EV_NONE;
	if (ev->type == EV_NONE)
		return DEC_UNKNOWN_TYPE;
	if (h.env) {
		ev->t = now; /* roastop's own clock stamps datagrams */
		return DEC_OK;
	}
	if (!h.have_t || h.t_bad || !(h.t >= EVENT_T_MIN && h.t <= EVENT_T_MAX))
		return DEC_NO_TIME;
	ev->t = h.t;
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
	if (!event_sample_progress_ok(s))
		return DEC_INCONSISTENT; /* progress comes as a pair, done <= total */
	return event_sample_tasks_ok(s) ? DEC_OK : DEC_OUT_OF_RANGE;
}

/* A status roastop does not know would leave the run's end unexplained:
 * rejected whole, like any other value out of range. */
static enum decode_error check_run_end(const struct ev_run_end *e)
{
	if (!e->status)
		return DEC_OK;
	enum run_status s = run_status_from_name(e->status);
	return s == RUN_STATUS__COUNT ? DEC_OUT_OF_RANGE : DEC_OK;
}

/* A recording older than gaps_timelines: only the scheduler's loss made a
 * gap then. */
static enum decode_error check_status(struct ev_status *st, bool saw_state)
{
	if (!st->source || !saw_state)
		return DEC_MISSING_FIELD;
	if (!st->gaps_timelines.valid)
		st->gaps_timelines = (optnum){ strcmp(st->source, "scheduler") == 0, true };
	return DEC_OK;
}

/* A name: absent is an error only when required; given, 1 to max bytes. */
static enum decode_error check_name(const char *s, size_t max, bool required)
{
	if (!s)
		return required ? DEC_MISSING_FIELD : DEC_OK;
	size_t n = strlen(s);
	if (n == 0)
		return DEC_OUT_OF_RANGE;
	return n > max ? DEC_STRING_TOO_LONG : DEC_OK;
}

static bool same_group(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* A name given twice in one group: it would be a JSON object's key twice. */
static bool counters_repeat(const struct ev_counters *c)
{
	for (size_t i = 0; i < c->n_counters; i++)
		for (size_t k = 0; k < i; k++)
			if (same_group(c->counters[i].group, c->counters[k].group) &&
			    strcmp(c->counters[i].name, c->counters[k].name) == 0)
				return true;
	return false;
}

/* Names bounded and once each per group, the state with its key. */
static enum decode_error check_counters(const struct ev_counters *c)
{
	enum decode_error e = check_name(c->source, EVENT_COUNTER_NAME_MAX, true);
	if (!e)
		e = check_name(c->state_key, EVENT_COUNTER_NAME_MAX, false);
	if (!e && c->state && strlen(c->state) > EVENT_COUNTER_STATE_MAX)
		e = DEC_STRING_TOO_LONG;
	if (!e && !c->state_key != !c->state)
		e = DEC_INCONSISTENT;
	for (size_t i = 0; !e && i < c->n_counters; i++) {
		e = check_name(c->counters[i].group, EVENT_COUNTER_NAME_MAX, false);
		if (!e)
			e = check_name(c->counters[i].name, EVENT_COUNTER_NAME_MAX, true);
	}
	return !e && counters_repeat(c) ? DEC_INCONSISTENT : e;
}

static enum decode_error check_event(struct jp *j, struct event *ev)
{
	switch (ev->type) {
	case EV_CHUNK: return event_field_check_chunk(&ev->u.chunk);
	case EV_CHUNK_START: return event_field_check_start(&ev->u.chunk);
	case EV_SAMPLE: return check_sample(&ev->u.sample, j->saw_count);
	case EV_RUN_START: return ev->u.run_start.run_id ? DEC_OK : DEC_MISSING_FIELD;
	case EV_RUN_END: return check_run_end(&ev->u.run_end);
	case EV_FINE: return j->saw_rows ? DEC_OK : DEC_MISSING_FIELD;
	case EV_STATUS: return check_status(&ev->u.status, j->saw_state);
	case EV_HEARTBEAT:
		return ev->u.heartbeat.host && ev->u.heartbeat.pid.valid ? DEC_OK : DEC_MISSING_FIELD;
	case EV_TASK:
		if (!ev->u.task.key || !ev->u.task.prefix || !ev->u.task.action)
			return DEC_MISSING_FIELD;
		if (!ev->u.task.start.valid || !ev->u.task.stop.valid)
			return DEC_MISSING_FIELD;
		return event_task_times_ok(&ev->u.task) ? DEC_OK : DEC_OUT_OF_RANGE;
	case EV_LOG:
		if (!ev->u.log.text)
			return DEC_MISSING_FIELD;
		return strlen(ev->u.log.text) > EVENT_LOG_TEXT_MAX ? DEC_STRING_TOO_LONG : DEC_OK;
	case EV_COUNTERS: return check_counters(&ev->u.counters);
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
	struct obj_ctx c = { event_field_table(ev->type), (char *)&ev->u, true, NULL };
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
	struct obj_ctx c = { event_field_table(ev->type), (char *)&ev->u, true, h };
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
	event_field_init();
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
	event_envelope_clear(env);
	enum decode_error e = decode(text, len, ev, env, now);
	if (e)
		event_envelope_clear(env);
	return e;
}

/* ---- encoding --------------------------------------------------------- */

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
