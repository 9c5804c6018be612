/* The datagram codec (docs/protocol.md). What a kind may hold is its event
 * type's rows in event_field.c and the envelope rows below that it takes;
 * bounds are checked exactly as the JSON decoder checks a recording's. */
#include "roastop/event_datagram.h"

#include <endian.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "roastop/event_field.h"
#include "roastop/strutil.h"

#define IDS 128 /* ids are 1..127; 1..15 inside file_metadata */
#define META_IDS 16
#define KINDS (EVENT_DATAGRAM_ACK + 1)

/* The envelope as decoded: optnums and arena strings, as event fields are. */
struct wire_env {
	const char *host, *report_id, *nonce;
	optnum pid, seq, sent, instance, part, parts;
};

#define ENV_NUM(w, f, k, l, h) { #f, sizeof(#f) - 1, k, offsetof(struct wire_env, f), 0, l, h, w }
#define ENV_STR(w, f) { #f, sizeof(#f) - 1, FK_STR, offsetof(struct wire_env, f), 0, 0, 0, w }

/* The envelope's rows; a kind takes those its mask names (ENV_*, by row). */
static const struct event_field envelope_fields[] = {
	ENV_STR(EVENT_DATAGRAM_HOST, host),
	ENV_NUM(EVENT_DATAGRAM_PID, pid, FK_INT, 0, 1e9),
	ENV_NUM(EVENT_DATAGRAM_SEQ, seq, FK_INT, 0, 9007199254740991.0),
	ENV_NUM(EVENT_DATAGRAM_SENT, sent, FK_NUM, -DBL_MAX, DBL_MAX), /* read, not used */
	ENV_NUM(EVENT_DATAGRAM_INSTANCE, instance, FK_INT, 0, 9007199254740991.0),
	ENV_STR(EVENT_DATAGRAM_REPORT_ID, report_id),
	ENV_NUM(EVENT_DATAGRAM_PART, part, FK_INT, 0, 64),
	ENV_NUM(EVENT_DATAGRAM_PARTS, parts, FK_INT, 0, 64),
	ENV_STR(EVENT_DATAGRAM_NONCE, nonce),
};
#define N_ENV (sizeof(envelope_fields) / sizeof(envelope_fields[0]))
#define ENV_SENDER 0x1fu /* host, pid, seq, sent, instance */
#define ENV_SPLIT 0xe0u /* report_id, part, parts */
#define ENV_NONCE 0x100u

/* Every kind: its event type (EV_NONE: no event) and its envelope rows. */
static const struct {
	enum event_type type;
	unsigned env;
} kinds[KINDS] = {
	[EVENT_DATAGRAM_CHUNK] = { EV_CHUNK, ENV_SENDER },
	[EVENT_DATAGRAM_START] = { EV_CHUNK_START, ENV_SENDER },
	[EVENT_DATAGRAM_HEARTBEAT] = { EV_HEARTBEAT, ENV_SENDER },
	[EVENT_DATAGRAM_RUN_START] = { EV_RUN_START, ENV_SENDER },
	[EVENT_DATAGRAM_RUN_END] = { EV_RUN_END, ENV_SENDER },
	[EVENT_DATAGRAM_REPORT] = { EV_REPORT, ENV_SENDER | ENV_SPLIT },
	[EVENT_DATAGRAM_HELLO] = { EV_NONE, (ENV_SENDER & ~0x4u) | ENV_NONCE }, /* no seq */
	[EVENT_DATAGRAM_ACK] = { EV_NONE, ENV_NONCE },
};

/* id -> row, per kind; env: the row is the envelope's, else the event's. */
struct wire_slot {
	const struct event_field *f;
	bool env;
};

static struct wire_slot slots[KINDS][IDS];
/* Per kind, the envelope rows its event holds, with the event's row. */
static struct {
	unsigned n;
	const struct event_field *env[N_ENV], *ev[N_ENV];
} held[KINDS];
static const struct event_field *meta_by_id[META_IDS];
static bool wire_ok; /* every id in range, used once per kind, with an encoding */
static pthread_once_t wire_once = PTHREAD_ONCE_INIT;

static bool wire_row(struct wire_slot *s, const struct event_field *f, bool env)
{
	unsigned id = f->wire;
	if (!id || id >= IDS || !event_field_encoding(f))
		return false;
	if (s[id].f) /* the event holds the envelope's host, pid, seq itself */
		return env && strcmp(s[id].f->name, f->name) == 0 && !s[id].env;
	s[id] = (struct wire_slot){ f, env };
	return true;
}

/* The kind's rows by id; where its event holds an envelope row itself (a
 * chunk's host, pid, seq), the envelope reads it from there (held). */
static bool wire_kind(int k)
{
	bool ok = true;
	const struct field_table *t = event_field_table(kinds[k].type);
	for (size_t i = 0; kinds[k].type != EV_NONE && i < t->n; i++)
		ok = ok && (!t->f[i].wire || wire_row(slots[k], &t->f[i], false));
	for (size_t i = 0; i < N_ENV; i++) {
		const struct wire_slot *s = &slots[k][envelope_fields[i].wire];
		if (!(kinds[k].env >> i & 1))
			continue;
		ok = ok && wire_row(slots[k], &envelope_fields[i], true);
		if (ok && !s->env) {
			held[k].env[held[k].n] = &envelope_fields[i];
			held[k].ev[held[k].n++] = s->f;
		}
	}
	return ok;
}

static void wire_init(void)
{
	event_field_init();
	bool ok = true;
	for (int k = EVENT_DATAGRAM_CHUNK; k < KINDS; k++)
		ok = wire_kind(k) && ok;
	const struct field_table *m = event_field_filemeta();
	for (size_t i = 0; i < m->n; i++) {
		unsigned id = m->f[i].wire;
		ok = ok && id && id < META_IDS && !meta_by_id[id];
		if (ok)
			meta_by_id[id] = &m->f[i];
	}
	wire_ok = ok;
}

/* Exposed for the unit test: every id in range and used once. */
bool event_datagram_wire_ok(void);
bool event_datagram_wire_ok(void)
{
	pthread_once(&wire_once, wire_init);
	return wire_ok;
}

const struct event_field *event_datagram_field(enum event_datagram_kind kind, unsigned id)
{
	pthread_once(&wire_once, wire_init);
	return (unsigned)kind < KINDS && id < IDS ? slots[kind][id].f : NULL;
}

const struct event_field *event_datagram_meta_field(unsigned id)
{
	pthread_once(&wire_once, wire_init);
	return id < META_IDS ? meta_by_id[id] : NULL;
}

struct rd {
	const unsigned char *p, *end;
	struct arena *mem;
};

static bool rd_take(struct rd *r, size_t n, const unsigned char **out)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	*out = r->p;
	r->p += n;
	return true;
}

static enum decode_error rd_u16(struct rd *r, size_t *out)
{
	const unsigned char *b;
	if (!rd_take(r, 2, &b))
		return DEC_BAD_BINARY;
	*out = (size_t)b[0] | (size_t)b[1] << 8;
	return DEC_OK;
}

static enum decode_error rd_num(struct rd *r, double *out)
{
	const unsigned char *b;
	if (!rd_take(r, 8, &b))
		return DEC_BAD_BINARY;
	uint64_t u;
	memcpy(&u, b, 8);
	u = le64toh(u);
	memcpy(out, &u, 8);
	return isfinite(*out) ? DEC_OK : DEC_BAD_BINARY;
}

/* Copies n bytes to dst word by word and tells whether none is NUL and
 * whether all are ASCII: for short strings one pass costs less than a
 * memchr, a scan and a memcpy (a chunk's decode: ~330 -> ~270 ns). */
static bool copy_scan(char *dst, const unsigned char *src, size_t n, bool *ascii)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t any = 0, zero = 0, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, src + i, 8);
		memcpy(dst + i, &w, 8);
		any |= w;
		zero |= (w - ones) & ~w; /* a high bit set where a byte may be 0 */
	}
	for (; i < n; i++) {
		dst[i] = (char)src[i];
		any |= src[i];
		zero |= src[i] ? 0 : highs;
	}
	*ascii = !(any & highs);
	return !(zero & highs);
}

/* At most EVENT_MAX_STRING bytes of UTF-8, no NUL (as the JSON decoder). */
static enum decode_error rd_str(struct rd *r, const char **out)
{
	size_t n;
	const unsigned char *b;
	enum decode_error e = rd_u16(r, &n);
	if (e)
		return e;
	if (!rd_take(r, n, &b))
		return DEC_BAD_BINARY;
	if (n > EVENT_MAX_STRING)
		return DEC_STRING_TOO_LONG;
	char *s = arena_alloc(r->mem, n + 1);
	if (!s)
		return DEC_NO_MEMORY;
	bool ascii;
	if (!copy_scan(s, b, n, &ascii))
		return DEC_BAD_UTF8;
	s[n] = '\0';
	if (!ascii && !strutil_utf8_ok((const unsigned char *)s))
		return DEC_BAD_UTF8;
	*out = s;
	return DEC_OK;
}

/* A count that the rest of the body can hold at `least` bytes an item:
 * nothing is allocated for a count the datagram cannot back. */
static enum decode_error rd_count(struct rd *r, size_t least, size_t *n)
{
	enum decode_error e = rd_u16(r, n);
	if (!e && *n > (size_t)(r->end - r->p) / least)
		e = DEC_BAD_BINARY;
	return e;
}

static enum decode_error rd_kv_item(struct rd *r, struct kv_num *kv)
{
	enum decode_error e = rd_str(r, &kv->key);
	if (!e)
		e = rd_num(r, &kv->value);
	return !e && fabs(kv->value) > EVENT_BIG ? DEC_OUT_OF_RANGE : e;
}

/* A strlist or a kv: a count, then the items. */
static enum decode_error rd_list(struct rd *r, const struct event_field *f, char *base)
{
	bool kv = f->kind == FK_KV;
	size_t n, size = kv ? sizeof(struct kv_num) : sizeof(const char *);
	enum decode_error e = rd_count(r, kv ? 10 : 2, &n);
	if (!e && kv && n > EVENT_MAX_SECTIONS)
		e = DEC_LIST_TOO_LONG;
	if (e)
		return e;
	char *list = arena_alloc(r->mem, (n ? n : 1) * size);
	if (!list)
		return DEC_NO_MEMORY;
	for (size_t i = 0; i < n && !e; i++)
		e = kv ? rd_kv_item(r, (struct kv_num *)(void *)(list + i * size))
		       : rd_str(r, (const char **)(void *)(list + i * size));
	if (e)
		return e;
	*(void **)(base + f->off) = list;
	*(size_t *)(base + f->off2) = n;
	return DEC_OK;
}

/* Most of a chunk's fields are numbers: rd_fields calls this directly, not
 * through rd_value's switch (a chunk's decode: 307 -> 242 ns). */
static inline enum decode_error rd_number_field(struct rd *r, const struct event_field *f,
						char *base)
{
	double x;
	enum decode_error e = rd_num(r, &x);
	if (e)
		return e;
	if (!event_field_number_ok(f, x))
		return DEC_OUT_OF_RANGE;
	*(optnum *)(base + f->off) = optnum_of(x);
	return DEC_OK;
}

static enum decode_error rd_meta(struct rd *r, const struct event_field *f, char *base);

static enum decode_error rd_value(struct rd *r, const struct event_field *f, char *base)
{
	switch (f->kind) {
	case FK_NUM:
	case FK_INT: return rd_number_field(r, f, base);
	case FK_STR: return rd_str(r, (const char **)(void *)(base + f->off));
	case FK_STRLIST:
	case FK_KV: return rd_list(r, f, base);
	case FK_FILEMETA: return rd_meta(r, f, base);
	default: return DEC_BAD_BINARY; /* no chunk field has another kind */
	}
}

/* Marks id seen; false when it was already. */
static bool first_sight(uint64_t *seen, unsigned id)
{
	uint64_t bit = 1ull << (id % 64);
	if (seen[id / 64] & bit)
		return false;
	seen[id / 64] |= bit;
	return true;
}

static enum decode_error rd_meta(struct rd *r, const struct event_field *f, char *base)
{
	const unsigned char *count, *id;
	if (!rd_take(r, 1, &count))
		return DEC_BAD_BINARY;
	struct file_meta *m = (struct file_meta *)(void *)(base + f->off);
	uint64_t seen[1] = { 0 };
	for (unsigned i = 0; i < *count; i++) {
		if (!rd_take(r, 1, &id) || *id >= META_IDS || !meta_by_id[*id] ||
		    !first_sight(seen, *id))
			return DEC_BAD_BINARY;
		enum decode_error e = rd_value(r, meta_by_id[*id], (char *)m);
		if (e)
			return e;
	}
	if (!m->filename)
		return DEC_MISSING_FIELD;
	*(bool *)(base + f->off2) = true;
	return DEC_OK;
}

static enum decode_error rd_fields(struct rd *r, const struct wire_slot *by_id, char *ev_base,
				   char *env_base)
{
	uint64_t seen[IDS / 64] = { 0 };
	while (r->p < r->end) {
		unsigned id = *r->p++;
		if (id >= IDS || !by_id[id].f || !first_sight(seen, id))
			return DEC_BAD_BINARY;
		const struct event_field *f = by_id[id].f;
		char *base = by_id[id].env ? env_base : ev_base;
		enum decode_error e = f->kind == FK_NUM || f->kind == FK_INT
					      ? rd_number_field(r, f, base)
					      : rd_value(r, f, base);
		if (e)
			return e;
	}
	return DEC_OK;
}

/* The envelope rows the kind's event holds itself (a chunk's host, pid,
 * seq) copied into the envelope: strings and optnums, as the rows say. */
static void env_from_event(int k, const char *ev_base, struct wire_env *w)
{
	for (unsigned i = 0; i < held[k].n; i++) {
		const struct event_field *e = held[k].env[i], *f = held[k].ev[i];
		memcpy((char *)w + e->off, ev_base + f->off,
		       e->kind == FK_STR ? sizeof(const char *) : sizeof(optnum));
	}
}

static bool nonce_ok(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return s[n] == '\0' && n >= EVENT_DATAGRAM_NONCE_MIN && n <= EVENT_DATAGRAM_NONCE_MAX;
}

/* A string into a fixed buffer of the envelope. */
static enum decode_error env_string(const char *s, char *buf, size_t size)
{
	size_t n = s ? strlen(s) : 0;
	if (n >= size)
		return DEC_STRING_TOO_LONG;
	memcpy(buf, s ? s : "", n + 1);
	return DEC_OK;
}

static enum decode_error env_out(int k, const struct wire_env *w, struct event_envelope *env)
{
	env->kind = (enum event_datagram_kind)k;
	if ((kinds[k].env & ENV_NONCE) && !(w->nonce && nonce_ok(w->nonce)))
		return DEC_MISSING_FIELD;
	enum decode_error e = env_string(w->host, env->host, sizeof(env->host));
	if (!e && w->report_id)
		e = env_string(w->report_id, env->report_id, sizeof(env->report_id));
	if (!e && w->nonce)
		e = env_string(w->nonce, env->nonce, sizeof(env->nonce));
	env->has_pid = w->pid.valid;
	env->pid = w->pid.value;
	env->has_seq = w->seq.valid;
	env->seq = w->seq.value;
	env->instance = w->instance.valid ? w->instance.value : 0;
	env->part = (int)w->part.value; /* within [0, 64]: the rows' bounds */
	env->parts = (int)w->parts.value;
	return e;
}

static enum decode_error decode_kind(int k, struct rd *r, struct event *ev,
				     struct event_envelope *env)
{
	struct wire_env w = { 0 };
	char *ev_base = (char *)&ev->u;
	ev->type = kinds[k].type;
	enum decode_error e = rd_fields(r, slots[k], ev_base, (char *)&w);
	if (!e && ev->type != EV_NONE)
		e = event_field_check(ev, &(struct field_seen){ 0 });
	if (!e)
		env_from_event(k, ev_base, &w);
	return e ? e : env_out(k, &w, env);
}

enum decode_error event_datagram_decode(const unsigned char *body, size_t len, double now,
					struct event *ev, struct event_envelope *env)
{
	pthread_once(&wire_once, wire_init);
	event_reset(ev);
	event_envelope_clear(env);
	if (len > EVENT_JSON_MAX)
		return DEC_TOO_LARGE;
	int k = len >= 1 ? body[0] : 0;
	if (!wire_ok || k < EVENT_DATAGRAM_CHUNK || k >= KINDS)
		return DEC_BAD_BINARY;
	struct rd r = { body + 1, body + len, &ev->mem };
	ev->t = now;
	enum decode_error e = decode_kind(k, &r, ev, env);
	if (e) {
		event_reset(ev); /* all or nothing */
		event_envelope_clear(env);
	}
	return e;
}

void event_envelope_clear(struct event_envelope *env)
{
	env->kind = 0;
	env->host[0] = env->report_id[0] = env->nonce[0] = '\0';
	env->has_pid = env->has_seq = false;
	env->pid = env->seq = env->instance = 0;
	env->part = env->parts = 0;
}

static void put_u16(struct strbuf *sb, size_t n)
{
	char b[2] = { (char)(n & 0xff), (char)(n >> 8) };
	strbuf_append(sb, b, 2);
}

static void put_num(struct strbuf *sb, double x)
{
	uint64_t u;
	memcpy(&u, &x, 8);
	u = htole64(u);
	strbuf_append(sb, (const char *)&u, 8);
}

static bool put_str(struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);
	if (n > 0xffff)
		return false;
	put_u16(sb, n);
	strbuf_append(sb, s, n);
	return true;
}

static bool put_list(struct strbuf *sb, const struct event_field *f, const char *base)
{
	size_t n = *(const size_t *)(base + f->off2);
	bool ok = n <= 0xffff;
	if (ok)
		put_u16(sb, n);
	if (f->kind == FK_STRLIST) {
		const char *const *list = *(const char *const *const *)(base + f->off);
		for (size_t i = 0; ok && i < n; i++)
			ok = put_str(sb, list[i]);
		return ok;
	}
	const struct kv_num *kv = *(const struct kv_num *const *)(base + f->off);
	for (size_t i = 0; ok && i < n; i++) {
		ok = put_str(sb, kv[i].key);
		put_num(sb, kv[i].value);
	}
	return ok;
}

static bool put_field(struct strbuf *sb, unsigned id, const struct event_field *f,
		      const char *base);

/* file_metadata: a u8 count, then its fields in id order. */
static bool put_meta(struct strbuf *sb, const char *m)
{
	size_t count_at = sb->len;
	bool ok = true;
	strbuf_append(sb, "", 1); /* the count, set below */
	char count = 0;
	for (unsigned id = 1; ok && id < META_IDS; id++)
		if (meta_by_id[id] && event_field_present(meta_by_id[id], m)) {
			ok = put_field(sb, id, meta_by_id[id], m);
			count++;
		}
	if (!sb->failed)
		sb->data[count_at] = count;
	return ok;
}

static bool put_value(struct strbuf *sb, const struct event_field *f, const char *base)
{
	const void *p = base + f->off;
	switch (f->kind) {
	case FK_NUM:
	case FK_INT: put_num(sb, ((const optnum *)p)->value); return true;
	case FK_STR: return put_str(sb, *(const char *const *)p);
	case FK_FILEMETA: return put_meta(sb, p);
	default: return put_list(sb, f, base);
	}
}

static bool put_field(struct strbuf *sb, unsigned id, const struct event_field *f,
		      const char *base)
{
	char b = (char)id;
	strbuf_append(sb, &b, 1);
	return put_value(sb, f, base);
}

/* The envelope's given fields as rows: 0 and "" are not given. */
static void env_in(const struct event_envelope *env, struct wire_env *w)
{
	w->host = env->host[0] ? env->host : NULL;
	w->pid = (optnum){ env->pid, env->has_pid };
	w->seq = (optnum){ env->seq, env->has_seq };
	w->instance = (optnum){ env->instance, env->instance != 0 };
	w->report_id = env->report_id[0] ? env->report_id : NULL;
	w->part = (optnum){ env->part, w->report_id != NULL };
	w->parts = (optnum){ env->parts, w->report_id != NULL };
	w->nonce = env->nonce[0] ? env->nonce : NULL;
}

static int kind_of(const struct event *ev, const struct event_envelope *env)
{
	for (int k = EVENT_DATAGRAM_CHUNK; ev && k < KINDS; k++)
		if (kinds[k].type == ev->type)
			return k;
	return !ev && env && (env->kind == EVENT_DATAGRAM_HELLO || env->kind == EVENT_DATAGRAM_ACK)
		       ? (int)env->kind
		       : 0;
}

/* The fields given (event_field_present), in id order. */
int event_datagram_encode(const struct event *ev, const struct event_envelope *env,
			  struct strbuf *out)
{
	pthread_once(&wire_once, wire_init);
	int k = kind_of(ev, env);
	if (!wire_ok || !k)
		return -1;
	struct wire_env w = { 0 };
	if (env)
		env_in(env, &w);
	char kind = (char)k;
	strbuf_append(out, &kind, 1);
	bool ok = true;
	for (unsigned id = 1; ok && id < IDS; id++) {
		const struct wire_slot *s = &slots[k][id];
		const char *base = s->env ? (const char *)&w : ev ? (const char *)&ev->u : NULL;
		if (s->f && base && event_field_present(s->f, base))
			ok = put_field(out, id, s->f, base);
	}
	return ok && !out->failed ? 0 : -1;
}
