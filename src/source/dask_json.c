/* Dask HTTP bodies -> events. cJSON builds the tree (~350 bytes a worker
 * in state.json), then every field is checked before anything is copied
 * into the event's arena. Missing or null fields stay invalid (the screen
 * shows n/a); present fields of the wrong type reject the body. The tree
 * lives in an arena of its own, freed whole (tree_parse), and is built only
 * within a budget (dec_parse): a hostile body amplifies 32-fold. */
#include "roastop/dask_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/arena.h"
#include "roastop/range.h"
#include "roastop/strutil.h"

static const char *const ERROR_NAMES[DASK__COUNT] = {
	[DASK_OK] = "ok",
	[DASK_BAD_JSON] = "bad_json",
	[DASK_BAD_SHAPE] = "bad_shape",
	[DASK_BAD_FIELD] = "bad_field",
	[DASK_TOO_MANY] = "too_many",
	[DASK_OUT_OF_RANGE] = "out_of_range",
	[DASK_NO_MEMORY] = "no_memory",
	[DASK_OVER_BUDGET] = "over_budget",
	[DASK_STALE_FACTS] = "stale_facts",
};

const char *dask_error_name(enum dask_error e)
{
	return e >= 0 && e < DASK__COUNT ? ERROR_NAMES[e] : "unknown";
}

/* Decoding context: the event being filled, the first error. */
struct dec {
	struct arena *mem;
	enum dask_error error;
	char *err;
	size_t errsz;
};

static void dec_fail(struct dec *d, enum dask_error e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void dec_fail(struct dec *d, enum dask_error e, const char *fmt, ...)
{
	if (d->error != DASK_OK)
		return;
	d->error = e;
	if (!d->err || !d->errsz)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->err, d->errsz, fmt, ap);
	va_end(ap);
}

/* A number within q's range (range.h, the table the recording decoder
 * uses too): valid. Else an error. */
static optnum dec_ranged(struct dec *d, double x, const char *what, enum range_qty q)
{
	if (!range_ok(q, x)) {
		const struct range *r = range_of(q);
		dec_fail(d, DASK_OUT_OF_RANGE, "%s: %g is not %sin [%g, %g] %s", what, x,
			 r->whole ? "whole and " : "", r->lo, r->hi, r->unit);
		return optnum_none();
	}
	return optnum_of(x);
}

/* Absent or null: invalid. A number: as dec_ranged. Else an error. */
static optnum dec_numval(struct dec *d, const cJSON *v, const char *what, enum range_qty q)
{
	if (!v || cJSON_IsNull(v))
		return optnum_none();
	if (!cJSON_IsNumber(v)) {
		dec_fail(d, DASK_BAD_FIELD, "%s: not a number", what);
		return optnum_none();
	}
	return dec_ranged(d, v->valuedouble, what, q);
}

static optnum dec_num(struct dec *d, const cJSON *o, const char *key, enum range_qty q)
{
	return dec_numval(d, cJSON_GetObjectItemCaseSensitive(o, key), key, q);
}

static const char *dec_strval(struct dec *d, const cJSON *v, const char *what)
{
	if (!v || cJSON_IsNull(v))
		return NULL;
	if (!cJSON_IsString(v) || !v->valuestring) {
		dec_fail(d, DASK_BAD_FIELD, "%s: not a string", what);
		return NULL;
	}
	size_t n = strlen(v->valuestring);
	if (n > EVENT_MAX_STRING || !strutil_utf8_ok((const unsigned char *)v->valuestring)) {
		dec_fail(d, DASK_BAD_FIELD, "%s: too long or not UTF-8", what);
		return NULL;
	}
	char *s = arena_strndup(d->mem, v->valuestring, n);
	if (!s)
		dec_fail(d, DASK_NO_MEMORY, "out of memory");
	return s;
}

static const char *dec_str(struct dec *d, const cJSON *o, const char *key)
{
	return dec_strval(d, cJSON_GetObjectItemCaseSensitive(o, key), key);
}

static void *dec_array(struct dec *d, size_t n, size_t size)
{
	if (n == 0)
		return NULL;
	void *p = arena_alloc(d->mem, n * size);
	if (!p)
		dec_fail(d, DASK_NO_MEMORY, "out of memory");
	else
		memset(p, 0, n * size);
	return p;
}

/* A JSON array (or object, for identity's workers{}) of at most
 * EVENT_MAX_LIST members: the arena array for them (NULL when empty or on
 * error; d->error tells which). */
static void *dec_list(struct dec *d, const cJSON *node, bool object, const char *what,
		      size_t elem)
{
	if (object ? !cJSON_IsObject(node) : !cJSON_IsArray(node)) {
		dec_fail(d, DASK_BAD_SHAPE, "%s: not an %s", what, object ? "object" : "array");
		return NULL;
	}
	size_t n = (size_t)cJSON_GetArraySize(node);
	if (n > EVENT_MAX_LIST) {
		dec_fail(d, DASK_TOO_MANY, "%s: %zu entries", what, n);
		return NULL;
	}
	return dec_array(d, n, elem);
}

/* cJSON allocates every node, key and string on its own: malloc, free and
 * malloc_consolidate were a third of decoding a 2,000-worker identity.json.
 * So the tree is parsed into a bump arena and freed with it, never with
 * cJSON_Delete. cJSON's allocator is global: it points at the arena only
 * for the one cJSON_ParseWithLength call (roastop decodes on one thread),
 * and reading a tree allocates nothing. */
static struct arena *tree_mem;

static void *tree_alloc(size_t n)
{
	return arena_alloc(tree_mem, n);
}

static void tree_free(void *p)
{
	(void)p; /* freed with the arena */
}

static cJSON *tree_parse(struct arena *mem, const char *body, size_t len)
{
	cJSON_Hooks hooks = { tree_alloc, tree_free };
	tree_mem = mem;
	cJSON_InitHooks(&hooks);
	cJSON *root = cJSON_ParseWithLength(body, len);
	cJSON_InitHooks(NULL);
	tree_mem = NULL;
	return root;
}

/* What a body would cost as a tree, counted before any is built. */
struct scan {
	size_t nodes; /* an upper bound on the JSON values: 1 + commas + containers */
	size_t workers; /* members of the top-level "workers" array or object */
	size_t depth;
	bool key_workers; /* the last string at depth 1 was "workers" */
	bool in_workers, empty; /* inside its value; no member seen yet */
};

/* The index of the quote closing the string opened at p[i] (len if none:
 * a last backslash must not step past the end). */
static size_t scan_string(const char *p, size_t len, size_t i)
{
	for (i++; i < len && p[i] != '"'; i++)
		if (p[i] == '\\')
			i++;
	return i < len ? i : len;
}

static void scan_open(struct scan *sc)
{
	sc->nodes++;
	sc->in_workers |= ++sc->depth == 2 && sc->key_workers;
}

static void scan_close(struct scan *sc)
{
	if (sc->depth == 0)
		return;
	if (sc->depth-- == 2 && sc->in_workers) {
		sc->workers += !sc->empty;
		sc->in_workers = sc->key_workers = false;
		sc->empty = true;
	}
}

/* One pass, no allocation: outside strings every value but the first
 * follows a comma or opens a container. The members of "workers" are
 * counted to size the budget, so a malformed body merely counts oddly
 * (cJSON rejects it next). */
static void dec_scan(const char *p, size_t len, struct scan *sc)
{
	*sc = (struct scan){ .nodes = 1, .empty = true };
	for (size_t i = 0; i < len; i++) {
		char c = p[i];
		if (sc->in_workers && sc->depth == 2 && c != ' ' && c != '\n' && c != '\t' &&
		    c != '\r' && c != ']' && c != '}')
			sc->empty = false;
		if (c == '"') {
			size_t end = scan_string(p, len, i);
			if (sc->depth == 1 && end < len) /* a key, or a value the next key replaces */
				sc->key_workers = end - i - 1 == 7 && memcmp(p + i + 1, "workers", 7) == 0;
			i = end;
		} else if (c == '{' || c == '[') {
			scan_open(sc);
		} else if (c == '}' || c == ']') {
			scan_close(sc);
		} else if (c == ',') {
			sc->nodes++;
			sc->workers += sc->in_workers && sc->depth == 2;
		}
	}
}

/* Values a route may legitimately hold for the workers it declares; never
 * more than the tree's byte cap can take at one cJSON node a value. */
static size_t dec_budget(size_t workers)
{
	size_t w = workers < EVENT_MAX_LIST ? workers : EVENT_MAX_LIST;
	size_t n = DASK_NODES_BASE + DASK_NODES_PER_WORKER * w;
	size_t cap = DASK_TREE_MAX / sizeof(cJSON);
	return n < cap ? n : cap;
}

/* The body's tree in `tree` (arena_free it, not cJSON_Delete), built only
 * when the pre-scan finds it within budget; the arena's limit backstops
 * the strings and anything the scan under-counts. */
static cJSON *dec_parse(struct dec *d, struct arena *tree, const char *body, size_t len)
{
	if (len > DASK_MAX_JSON_BODY) {
		dec_fail(d, DASK_OVER_BUDGET, "body of %zu bytes is over the limit", len);
		return NULL;
	}
	struct scan sc;
	dec_scan(body, len, &sc);
	size_t budget = dec_budget(sc.workers);
	if (sc.nodes > budget) {
		dec_fail(d, DASK_OVER_BUDGET, "%zu JSON values, budget %zu for %zu workers",
			 sc.nodes, budget, sc.workers);
		return NULL;
	}
	cJSON *root = tree_parse(tree, body, len);
	if (!root && tree->refused)
		dec_fail(d, DASK_OVER_BUDGET, "tree over %u MiB", DASK_TREE_MAX >> 20);
	else if (!root)
		dec_fail(d, DASK_BAD_JSON, "not JSON");
	else if (!cJSON_IsObject(root))
		dec_fail(d, DASK_BAD_SHAPE, "not a JSON object");
	return root;
}

/* ---- state.json -------------------------------------------------------- */

static void state_worker(struct dec *d, const cJSON *o, struct worker_sample *w)
{
	if (!cJSON_IsObject(o)) {
		dec_fail(d, DASK_BAD_SHAPE, "workers[]: not an object");
		return;
	}
	w->id = dec_str(d, o, "address");
	if (!w->id && d->error == DASK_OK)
		dec_fail(d, DASK_BAD_FIELD, "workers[].address: missing");
	w->name = dec_str(d, o, "name");
	w->host = dec_str(d, o, "host");
	w->status = dec_str(d, o, "status");
	w->nthreads = dec_num(d, o, "nthreads", RANGE_NTHREADS);
	w->memory_bytes = dec_num(d, o, "memory", RANGE_BYTES);
	w->memory_limit = dec_num(d, o, "memory_limit", RANGE_BYTES);
	w->cpu_percent = dec_num(d, o, "cpu", RANGE_CPU_PERCENT);
	w->executing = dec_num(d, o, "executing", RANGE_TASKS);
	w->processing = dec_num(d, o, "processing", RANGE_TASKS);
	w->managed_bytes = dec_num(d, o, "managed_bytes", RANGE_BYTES);
	w->spilled_bytes = dec_num(d, o, "spilled_bytes", RANGE_BYTES);
	w->pid = dec_num(d, o, "pid", RANGE_PID);
}

static void state_workers_v1(struct dec *d, const cJSON *arr, struct ev_sample *s)
{
	s->workers = dec_list(d, arr, false, "workers", sizeof(*s->workers));
	const cJSON *o;
	cJSON_ArrayForEach(o, arr)
	{
		if (d->error != DASK_OK)
			return;
		state_worker(d, o, &s->workers[s->n_workers++]);
	}
}

/* Versions 2 and 3: "workers" holds [address, name, host, nthreads,
 * memory_limit, pid] rows, "worker_status" the status names and
 * "worker_state" six little-endian numbers a worker in base64 (STATE_NUMS
 * below), all in the same order. Version 2: float64, worker after worker.
 * Version 3: column after column (the scheduler builds each column in one C
 * call), int64 but for cpu (a negative count is null), and the managed
 * column is WorkerState.nbytes, which roastop caps at the process memory as
 * WorkerState.memory does. 48 bytes a worker are exactly 64 base64
 * characters. */
#define STATE_B64 64u
#define STATE_RAW 48u

static int b64_digit(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* n characters (a multiple of 4, no padding) into n / 4 * 3 bytes; false on
 * a character outside base64. */
static bool b64_decode(const char *in, size_t n, unsigned char *out)
{
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		for (size_t k = 0; k < 4; k++) {
			int x = b64_digit((unsigned char)in[i + k]);
			if (x < 0)
				return false;
			v = v << 6 | (uint32_t)x;
		}
		unsigned char *o = out + i / 4 * 3;
		o[0] = (unsigned char)(v >> 16);
		o[1] = (unsigned char)(v >> 8);
		o[2] = (unsigned char)v;
	}
	return true;
}

static double le_double(const unsigned char *b)
{
	uint64_t u = 0;
	for (int i = 7; i >= 0; i--)
		u = u << 8 | b[i];
	double x;
	memcpy(&x, &u, sizeof(x));
	return x;
}

/* A version-3 count: int64, negative for null (NaN here). */
static double le_count(const unsigned char *b)
{
	uint64_t u = 0;
	for (int i = 7; i >= 0; i--)
		u = u << 8 | b[i];
	return u >> 63 ? NAN : (double)u;
}

static const struct {
	size_t off;
	const char *what;
	enum range_qty q;
	bool real; /* float64 in version 3 too */
} STATE_NUMS[] = {
	{ offsetof(struct worker_sample, memory_bytes), "worker_state.memory", RANGE_BYTES, false },
	{ offsetof(struct worker_sample, managed_bytes), "worker_state.managed_bytes", RANGE_BYTES,
	  false },
	{ offsetof(struct worker_sample, spilled_bytes), "worker_state.spilled_bytes", RANGE_BYTES,
	  false },
	{ offsetof(struct worker_sample, cpu_percent), "worker_state.cpu", RANGE_CPU_PERCENT, true },
	{ offsetof(struct worker_sample, executing), "worker_state.executing", RANGE_TASKS, false },
	{ offsetof(struct worker_sample, processing), "worker_state.processing", RANGE_TASKS,
	  false },
};
#define STATE_N (sizeof(STATE_NUMS) / sizeof(STATE_NUMS[0]))

/* "worker_state" of n workers, decoded whole (free it); NULL on error. */
static unsigned char *state_raw(struct dec *d, const cJSON *nums, size_t n)
{
	if (!cJSON_IsString(nums) || strlen(nums->valuestring) != n * STATE_B64) {
		dec_fail(d, DASK_BAD_SHAPE, "worker_state: not %zu workers", n);
		return NULL;
	}
	unsigned char *raw = malloc(n * STATE_RAW + 1);
	if (!raw)
		dec_fail(d, DASK_NO_MEMORY, "out of memory");
	else if (!b64_decode(nums->valuestring, n * STATE_B64, raw)) {
		dec_fail(d, DASK_BAD_FIELD, "worker_state: not base64");
		free(raw);
		raw = NULL;
	}
	return raw;
}

/* Worker i of n's numbers (columns: version 3); one not finite (NaN is
 * the route's null) is not measured. */
static void state_numbers(struct dec *d, const unsigned char *raw, size_t n, size_t i,
			  bool columns, struct worker_sample *w)
{
	for (size_t c = 0; c < STATE_N; c++) {
		const unsigned char *p = raw + 8 * (columns ? c * n + i : i * STATE_N + c);
		double x = columns && !STATE_NUMS[c].real ? le_count(p) : le_double(p);
		optnum *slot = (optnum *)((char *)w + STATE_NUMS[c].off);
		*slot = isfinite(x) ? dec_ranged(d, x, STATE_NUMS[c].what, STATE_NUMS[c].q)
				    : optnum_none();
	}
	if (columns && w->managed_bytes.valid && w->memory_bytes.valid &&
	    w->managed_bytes.value > w->memory_bytes.value)
		w->managed_bytes = w->memory_bytes;
}

/* One [address, name, host, nthreads, memory_limit, pid] row. */
static void state_facts(struct dec *d, const cJSON *a, struct worker_sample *w)
{
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 6) {
		dec_fail(d, DASK_BAD_SHAPE, "workers[]: not a 6-element array");
		return;
	}
	const cJSON *v = a->child;
	w->id = dec_strval(d, v, "workers[][0]");
	if (!w->id && d->error == DASK_OK)
		dec_fail(d, DASK_BAD_FIELD, "workers[][0]: missing address");
	w->name = dec_strval(d, v = v->next, "workers[][1]");
	w->host = dec_strval(d, v = v->next, "workers[][2]");
	w->nthreads = dec_numval(d, v = v->next, "workers[][3]", RANGE_NTHREADS);
	w->memory_limit = dec_numval(d, v = v->next, "workers[][4]", RANGE_BYTES);
	w->pid = dec_numval(d, v->next, "workers[][5]", RANGE_PID);
}

static void state_workers_full(struct dec *d, const cJSON *root, bool columns,
			       struct ev_sample *s)
{
	const cJSON *facts = cJSON_GetObjectItemCaseSensitive(root, "workers");
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "worker_status");
	s->workers = dec_list(d, facts, false, "workers", sizeof(*s->workers));
	if (d->error != DASK_OK)
		return;
	size_t n = (size_t)cJSON_GetArraySize(facts);
	if (!cJSON_IsArray(status) || (size_t)cJSON_GetArraySize(status) != n) {
		dec_fail(d, DASK_BAD_SHAPE, "worker_status: not %zu workers", n);
		return;
	}
	unsigned char *raw = state_raw(d, cJSON_GetObjectItemCaseSensitive(root, "worker_state"), n);
	const cJSON *f = facts->child, *st = status->child;
	for (size_t i = 0; raw && i < n && d->error == DASK_OK; i++, f = f->next, st = st->next) {
		struct worker_sample *w = &s->workers[s->n_workers++];
		state_facts(d, f, w);
		w->status = dec_strval(d, st, "worker_status[]");
		state_numbers(d, raw, n, i, columns, w);
	}
	free(raw);
}

/* A kept string into the event's arena (NULL stays NULL). */
static const char *dec_copy(struct dec *d, const char *s)
{
	char *c = s ? arena_strdup(d->mem, s) : NULL;
	if (s && !c)
		dec_fail(d, DASK_NO_MEMORY, "out of memory");
	return c;
}

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The facts a worker keeps between bodies (not its numbers). */
static void facts_copy(struct dec *d, const struct worker_sample *from, struct worker_sample *to)
{
	to->id = dec_copy(d, from->id);
	to->name = dec_copy(d, from->name);
	to->host = dec_copy(d, from->host);
	to->status = dec_copy(d, from->status);
	to->nthreads = from->nthreads;
	to->memory_limit = from->memory_limit;
	to->pid = from->pid;
}

/* Version 3 without "workers": the kept facts, if they are this body's
 * (its token, its scheduler, as many workers). */
static void state_workers_kept(struct dec *d, const cJSON *root, const char *token,
			       const struct dask_facts *f, struct ev_sample *s)
{
	const cJSON *nums = cJSON_GetObjectItemCaseSensitive(root, "worker_state");
	if (cJSON_GetObjectItemCaseSensitive(root, "worker_status") || !cJSON_IsString(nums) ||
	    strlen(nums->valuestring) % STATE_B64) {
		dec_fail(d, DASK_BAD_SHAPE, "worker_state or worker_status: not as without workers");
		return;
	}
	size_t n = strlen(nums->valuestring) / STATE_B64;
	if (!f || !f->token || strcmp(f->token, token) != 0 ||
	    !str_same(f->scheduler_id, s->scheduler_id) || f->n != n) {
		dec_fail(d, DASK_STALE_FACTS, "workers left out, facts %.64s not kept for %zu workers",
			 token, n);
		return;
	}
	s->workers = dec_array(d, n, sizeof(*s->workers));
	unsigned char *raw = n ? state_raw(d, nums, n) : NULL;
	for (size_t i = 0; raw && i < n && d->error == DASK_OK; i++) {
		struct worker_sample *w = &s->workers[s->n_workers++];
		facts_copy(d, &f->rows[i], w);
		state_numbers(d, raw, n, i, true, w);
	}
	free(raw);
}

void dask_facts_init(struct dask_facts *f)
{
	*f = (struct dask_facts){ 0 };
	arena_init(&f->mem, EVENT_ARENA_LIMIT);
}

void dask_facts_drop(struct dask_facts *f)
{
	arena_reset(&f->mem);
	f->token = f->scheduler_id = NULL;
	f->n = 0;
	f->rows = NULL;
}

void dask_facts_free(struct dask_facts *f)
{
	dask_facts_drop(f);
	arena_free(&f->mem);
}

/* A full body's facts kept under its token; nothing kept if they do not
 * fit (the next body then comes whole). */
static void facts_keep(struct dask_facts *f, const char *token, const struct ev_sample *s)
{
	dask_facts_drop(f);
	struct dec d = { .mem = &f->mem };
	const char *t = dec_copy(&d, token), *id = dec_copy(&d, s->scheduler_id);
	struct worker_sample *rows = dec_array(&d, s->n_workers, sizeof(*rows));
	for (size_t i = 0; i < s->n_workers && d.error == DASK_OK; i++)
		facts_copy(&d, &s->workers[i], &rows[i]);
	if (d.error != DASK_OK) {
		dask_facts_drop(f);
		return;
	}
	f->token = t;
	f->scheduler_id = id;
	f->n = s->n_workers;
	f->rows = rows;
}

/* One [context, prefix, activity, unit, value] row. */
static void fine_row(struct dec *d, const cJSON *a, struct fine_row *row)
{
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 5) {
		dec_fail(d, DASK_BAD_SHAPE, "fine[]: not a 5-element array");
		return;
	}
	const char **parts[4] = { &row->context, &row->prefix, &row->activity, &row->unit };
	for (int i = 0; i < 4; i++) {
		*parts[i] = dec_strval(d, cJSON_GetArrayItem(a, i), "fine[][i]");
		if (!*parts[i] && d->error == DASK_OK)
			dec_fail(d, DASK_BAD_FIELD, "fine[][%d]: missing", i);
	}
	const cJSON *v = cJSON_GetArrayItem(a, 4);
	if (!cJSON_IsNumber(v))
		dec_fail(d, DASK_BAD_FIELD, "fine[][4]: not a number");
	else if (!range_ok(RANGE_FINE, v->valuedouble))
		dec_fail(d, DASK_OUT_OF_RANGE, "fine[][4]: %g is not in [0, %g]", v->valuedouble,
			 RANGE_FINE_MAX);
	else
		row->value = v->valuedouble;
}

static void fine_rows(struct dec *d, const cJSON *arr, struct event *ev, enum fine_scope scope)
{
	struct ev_fine *f = &ev->u.fine;
	f->scope = scope;
	f->rows = dec_list(d, arr, false, "fine", sizeof(*f->rows));
	const cJSON *a;
	cJSON_ArrayForEach(a, arr)
	{
		if (d->error != DASK_OK)
			return;
		fine_row(d, a, &f->rows[f->n_rows++]);
	}
}

/* What state_read tells dask_parse_state_facts. */
struct state_ctx {
	struct dask_facts *facts; /* may be NULL */
	const char *token; /* version 3's facts_token */
	bool keep; /* a full version-3 body: its facts replace the kept ones */
};

/* The token travels back in a query string: URL-safe characters only. */
static const char *state_token(struct dec *d, const cJSON *root)
{
	const char *t = dec_str(d, root, "facts_token");
	size_t n = t ? strlen(t) : 0;
	if (d->error == DASK_OK &&
	    (n == 0 || n > DASK_TOKEN_MAX ||
	     strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n))
		dec_fail(d, DASK_BAD_FIELD, "facts_token: not 1 to %u of [A-Za-z0-9._-]",
			 DASK_TOKEN_MAX);
	return t;
}

static void state_workers_v3(struct dec *d, const cJSON *root, struct state_ctx *c,
			     struct ev_sample *s)
{
	c->token = state_token(d, root);
	if (d->error != DASK_OK)
		return;
	c->keep = cJSON_GetObjectItemCaseSensitive(root, "workers") != NULL;
	if (c->keep)
		state_workers_full(d, root, true, s);
	else
		state_workers_kept(d, root, c->token, c->facts, s);
}

/* An array of at most max members, each an array of n: the arena array for
 * them (NULL when empty or on error). */
static void *state_tuples(struct dec *d, const cJSON *arr, size_t max, int n, const char *what,
			  size_t elem)
{
	if (!cJSON_IsArray(arr)) {
		dec_fail(d, DASK_BAD_SHAPE, "%s: not an array", what);
		return NULL;
	}
	if ((size_t)cJSON_GetArraySize(arr) > max) {
		dec_fail(d, DASK_TOO_MANY, "%s: over %zu entries", what, max);
		return NULL;
	}
	const cJSON *a;
	cJSON_ArrayForEach(a, arr)
	{
		if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) {
			dec_fail(d, DASK_BAD_SHAPE, "%s[]: not a %d-element array", what, n);
			return NULL;
		}
	}
	return dec_array(d, (size_t)cJSON_GetArraySize(arr), elem);
}

/* A number that must be there: null or absent is an error too. */
static double state_needed(struct dec *d, const cJSON *v, const char *what, enum range_qty q)
{
	optnum x = dec_numval(d, v, what, q);
	if (!x.valid)
		dec_fail(d, DASK_BAD_FIELD, "%s: missing", what);
	return x.value;
}

/* Version 4: "erred", [prefix, tasks gone into erred since "erred_since"]
 * of the prefixes with some, and "erred_left_out", the prefixes not
 * listed. */
static void state_erred(struct dec *d, const cJSON *root, struct ev_sample *s)
{
	s->erred_left_out = dec_num(d, root, "erred_left_out", RANGE_TASKS);
	s->erred_since = dec_num(d, root, "erred_since", RANGE_EPOCH);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "erred");
	if (!s->erred_left_out.valid && arr && d->error == DASK_OK)
		dec_fail(d, DASK_BAD_FIELD, "erred: without erred_left_out");
	if (s->erred_left_out.valid != s->erred_since.valid && d->error == DASK_OK)
		dec_fail(d, DASK_BAD_FIELD, "erred_left_out and erred_since: one without the other");
	if (!s->erred_left_out.valid)
		return; /* not measured */
	s->erred = state_tuples(d, arr, EVENT_MAX_SECTIONS, 2, "erred", sizeof(*s->erred));
	const cJSON *a;
	cJSON_ArrayForEach(a, arr)
	{
		if (d->error != DASK_OK)
			return;
		struct kv_num *kv = &s->erred[s->n_erred++];
		kv->key = dec_strval(d, a->child, "erred[][0]");
		kv->value = state_needed(d, a->child->next, "erred[][1]", RANGE_TASKS);
	}
}

/* Version 4: "running", [key, prefix, worker, seconds] of the tasks
 * executing longest, and "running_left_out", those not listed. */
static void state_running(struct dec *d, const cJSON *root, struct ev_sample *s)
{
	s->running_left_out = dec_num(d, root, "running_left_out", RANGE_TASKS);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "running");
	if (!s->running_left_out.valid && arr && d->error == DASK_OK)
		dec_fail(d, DASK_BAD_FIELD, "running: without running_left_out");
	if (!s->running_left_out.valid)
		return;
	s->running = state_tuples(d, arr, EVENT_MAX_RUNNING, 4, "running", sizeof(*s->running));
	const cJSON *a;
	cJSON_ArrayForEach(a, arr)
	{
		if (d->error != DASK_OK)
			return;
		struct task_running *r = &s->running[s->n_running++];
		const cJSON *v = a->child;
		r->key = dec_strval(d, v, "running[][0]");
		r->prefix = dec_strval(d, v = v->next, "running[][1]");
		r->worker = dec_strval(d, v = v->next, "running[][2]");
		r->seconds = state_needed(d, v->next, "running[][3]", RANGE_TASK_SECONDS);
	}
}

static void state_sample(struct dec *d, const cJSON *root, int version, struct state_ctx *c,
			 struct ev_sample *s)
{
	s->source = "state";
	s->scheduler_id = dec_str(d, root, "scheduler_id");
	s->dask_version = dec_str(d, root, "dask_version");
	s->total_threads = dec_num(d, root, "total_threads", RANGE_TOTAL_THREADS);
	s->tasks_processing = dec_num(d, root, "tasks_processing", RANGE_TASKS);
	s->tasks_done = dec_num(d, root, "tasks_done", RANGE_TASKS);
	s->tasks_total = dec_num(d, root, "tasks_total", RANGE_TASKS);
	s->tasks_done_cumulative = dec_num(d, root, "tasks_done_cumulative", RANGE_TASKS);
	s->tasks_total_cumulative = dec_num(d, root, "tasks_total_cumulative", RANGE_TASKS);
	if (!event_sample_progress_ok(s))
		dec_fail(d, DASK_BAD_FIELD, "tasks_done: without tasks_total, or above it");
	if (version == 1)
		state_workers_v1(d, cJSON_GetObjectItemCaseSensitive(root, "workers"), s);
	else if (version == 2)
		state_workers_full(d, root, false, s);
	else
		state_workers_v3(d, root, c, s);
	s->worker_count = (uint32_t)s->n_workers;
	if (version < 4)
		return;
	state_erred(d, root, s);
	state_running(d, root, s);
	if (d->error == DASK_OK && !event_sample_tasks_ok(s))
		dec_fail(d, DASK_BAD_FIELD, "erred or running: an entry missing or out of range");
}

static void state_span(struct dec *d, const cJSON *root, struct event *span)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "span");
	if (!o || cJSON_IsNull(o))
		return;
	if (!cJSON_IsObject(o)) {
		dec_fail(d, DASK_BAD_SHAPE, "span: not an object");
		return;
	}
	span->type = EV_FINE;
	fine_rows(d, cJSON_GetObjectItemCaseSensitive(o, "fine"), span, FINE_SPAN);
}

static void events_begin(double t, struct event *const evs[], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		event_reset(evs[i]);
		evs[i]->t = t;
	}
}

static enum dask_error events_end(struct dec *d, struct event *const evs[], size_t n)
{
	if (d->error != DASK_OK)
		for (size_t i = 0; i < n; i++)
			event_reset(evs[i]); /* never half an answer */
	return d->error;
}

/* Reads a parsed document into the events (evs[0]'s arena first). */
typedef void (*doc_read_fn)(struct dec *d, const cJSON *root, struct event *const evs[],
			    void *ctx);

/* One JSON body into events: its tree built within the parse budget and
 * freed whole; on any failure every event is reset (never half an answer). */
static enum dask_error dec_document(const char *body, size_t len, double t,
				    struct event *const evs[], size_t n, doc_read_fn read,
				    void *ctx, char *err, size_t errsz)
{
	events_begin(t, evs, n);
	struct dec d = { .mem = &evs[0]->mem, .err = err, .errsz = errsz };
	struct arena tree;
	arena_init(&tree, DASK_TREE_MAX);
	cJSON *root = dec_parse(&d, &tree, body, len);
	if (root && d.error == DASK_OK)
		read(&d, root, evs, ctx);
	arena_free(&tree);
	return events_end(&d, evs, n);
}

static void state_read(struct dec *d, const cJSON *root, struct event *const evs[], void *ctx)
{
	struct event *sample = evs[0], *fine = evs[1], *span = evs[2];
	/* version 1: the handler an earlier collector left on a scheduler */
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "roastop_route");
	if (!cJSON_IsNumber(ver) || !(ver->valuedouble == 1.0 || ver->valuedouble == 2.0 ||
				      ver->valuedouble == 3.0 || ver->valuedouble == 4.0)) {
		dec_fail(d, DASK_BAD_SHAPE, "roastop_route: not version 1 to 4");
		return;
	}
	sample->type = EV_SAMPLE;
	state_sample(d, root, (int)ver->valuedouble, ctx, &sample->u.sample);
	d->mem = &fine->mem;
	fine->type = EV_FINE;
	fine_rows(d, cJSON_GetObjectItemCaseSensitive(root, "fine"), fine, FINE_CLUSTER);
	d->mem = &span->mem;
	state_span(d, root, span);
}

enum dask_error dask_parse_state_facts(const char *body, size_t len, double t,
				       struct event *sample, struct event *fine,
				       struct event *span, struct dask_facts *facts, char *err,
				       size_t errsz)
{
	struct event *const evs[] = { sample, fine, span };
	struct state_ctx c = { .facts = facts };
	enum dask_error e = dec_document(body, len, t, evs, 3, state_read, &c, err, errsz);
	if (e == DASK_OK && c.keep && facts)
		facts_keep(facts, c.token, &sample->u.sample);
	return e;
}

enum dask_error dask_parse_state(const char *body, size_t len, double t, struct event *sample,
				 struct event *fine, struct event *span, char *err, size_t errsz)
{
	return dask_parse_state_facts(body, len, t, sample, fine, span, NULL, err, errsz);
}

/* ---- sitemap.json ------------------------------------------------------ */

/* Does "paths" list a route ending in `route`? -1: no usable sitemap (an
 * old Dask, a proxy's error page, a cut body). */
static int sitemap_has(const cJSON *paths, const char *route)
{
	if (!cJSON_IsArray(paths))
		return -1;
	size_t rl = strlen(route);
	const cJSON *p;
	cJSON_ArrayForEach(p, paths)
	{
		size_t n = cJSON_IsString(p) ? strlen(p->valuestring) : 0;
		if (n >= rl && strcmp(p->valuestring + n - rl, route) == 0)
			return 1;
	}
	return 0;
}

void dask_parse_sitemap(const char *body, size_t len, int *identity, int *prom, int *counts)
{
	struct dec d = { 0 };
	struct arena tree;
	arena_init(&tree, DASK_TREE_MAX);
	cJSON *root = dec_parse(&d, &tree, body, len);
	const cJSON *paths =
		d.error == DASK_OK ? cJSON_GetObjectItemCaseSensitive(root, "paths") : NULL;
	*identity = sitemap_has(paths, "/json/identity.json");
	*prom = sitemap_has(paths, "/metrics");
	*counts = sitemap_has(paths, "/json/counts.json");
	arena_free(&tree);
}

/* ---- identity.json ----------------------------------------------------- */

/* metrics.spilled_bytes is {"memory": m, "disk": d}: what went to disk. */
static optnum identity_spilled(struct dec *d, const cJSON *metrics)
{
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(metrics, "spilled_bytes");
	if (cJSON_IsObject(sp))
		return dec_num(d, sp, "disk", RANGE_BYTES);
	return dec_num(d, metrics, "spilled_bytes", RANGE_BYTES);
}

static void identity_metrics(struct dec *d, const cJSON *m, struct worker_sample *w)
{
	if (!m || cJSON_IsNull(m))
		return;
	if (!cJSON_IsObject(m)) {
		dec_fail(d, DASK_BAD_SHAPE, "workers{}.metrics: not an object");
		return;
	}
	w->memory_bytes = dec_num(d, m, "memory", RANGE_BYTES);
	w->cpu_percent = dec_num(d, m, "cpu", RANGE_CPU_PERCENT);
	w->managed_bytes = dec_num(d, m, "managed_bytes", RANGE_BYTES);
	w->spilled_bytes = identity_spilled(d, m);
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(m, "task_counts");
	if (cJSON_IsObject(tc)) { /* an empty object means nothing is executing */
		optnum ex = dec_num(d, tc, "executing", RANGE_TASKS);
		w->executing = ex.valid ? ex : optnum_of(0);
	}
}

static void identity_endpoint(const cJSON *o, const struct worker_sample *w,
			      dask_endpoint_fn fn, void *ctx)
{
	const cJSON *svc = cJSON_GetObjectItemCaseSensitive(o, "services");
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(svc, "dashboard");
	/* written so that a NaN fails it too: the cast below needs the range */
	if (!fn || !w->host || !cJSON_IsNumber(port) ||
	    !(port->valuedouble >= 1 && port->valuedouble <= 65535))
		return;
	fn(ctx, w->id, w->host, (int)port->valuedouble);
}

static void identity_worker(struct dec *d, const cJSON *o, struct worker_sample *w)
{
	if (!cJSON_IsObject(o)) {
		dec_fail(d, DASK_BAD_SHAPE, "workers{}: not an object");
		return;
	}
	if (!o->string || strlen(o->string) > EVENT_MAX_STRING ||
	    !strutil_utf8_ok((const unsigned char *)o->string)) {
		dec_fail(d, DASK_BAD_FIELD, "workers{}: bad address key");
		return;
	}
	w->id = arena_strdup(d->mem, o->string);
	if (!w->id)
		dec_fail(d, DASK_NO_MEMORY, "out of memory");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
	w->name = cJSON_IsNumber(name) ? NULL : dec_strval(d, name, "name"); /* names may be ints */
	w->host = dec_str(d, o, "host");
	w->status = dec_str(d, o, "status");
	w->nthreads = dec_num(d, o, "nthreads", RANGE_NTHREADS);
	w->memory_limit = dec_num(d, o, "memory_limit", RANGE_BYTES);
	identity_metrics(d, cJSON_GetObjectItemCaseSensitive(o, "metrics"), w);
}

static void identity_workers(struct dec *d, const cJSON *obj, struct ev_sample *s,
			     dask_endpoint_fn fn, void *ctx)
{
	s->workers = dec_list(d, obj, true, "workers", sizeof(*s->workers));
	const cJSON *o;
	cJSON_ArrayForEach(o, obj)
	{
		if (d->error != DASK_OK)
			return;
		struct worker_sample *w = &s->workers[s->n_workers++];
		identity_worker(d, o, w);
		if (d->error == DASK_OK)
			identity_endpoint(o, w, fn, ctx);
	}
}

struct endpoint_sink {
	dask_endpoint_fn fn;
	void *ctx;
};

static void identity_read(struct dec *d, const cJSON *root, struct event *const evs[],
			  void *ctx)
{
	const struct endpoint_sink *sink = ctx;
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
	if (!cJSON_IsString(type) || strcmp(type->valuestring, "Scheduler") != 0) {
		dec_fail(d, DASK_BAD_SHAPE, "type: not \"Scheduler\"");
		return;
	}
	struct ev_sample *s = &evs[0]->u.sample;
	evs[0]->type = EV_SAMPLE;
	s->source = "identity";
	s->scheduler_id = dec_str(d, root, "id");
	s->total_threads = dec_num(d, root, "total_threads", RANGE_TOTAL_THREADS);
	identity_workers(d, cJSON_GetObjectItemCaseSensitive(root, "workers"), s, sink->fn,
			 sink->ctx);
	s->worker_count = (uint32_t)s->n_workers;
}

enum dask_error dask_parse_identity(const char *body, size_t len, double t, struct event *sample,
				    dask_endpoint_fn fn, void *ctx, char *err, size_t errsz)
{
	struct event *const evs[] = { sample };
	struct endpoint_sink sink = { fn, ctx };
	return dec_document(body, len, t, evs, 1, identity_read, &sink, err, errsz);
}

/* ---- counts.json --------------------------------------------------------- */

/* Dask serves /json/counts.json without prometheus_client and while
 * identity.json answers 500: the cluster's counts, no worker rows. */
static void counts_read(struct dec *d, const cJSON *root, struct event *const evs[], void *ctx)
{
	(void)ctx;
	struct ev_sample *s = &evs[0]->u.sample;
	optnum workers = dec_num(d, root, "workers", RANGE_WORKERS);
	s->total_threads = dec_num(d, root, "cores", RANGE_TOTAL_THREADS);
	s->tasks_processing = dec_num(d, root, "processing", RANGE_TASKS);
	if (!workers.valid && d->error == DASK_OK)
		dec_fail(d, DASK_BAD_SHAPE, "workers: missing");
	evs[0]->type = EV_SAMPLE;
	s->source = "counts";
	s->worker_count = workers.valid ? (uint32_t)workers.value : 0; /* RANGE_WORKERS fits */
}

enum dask_error dask_parse_counts(const char *body, size_t len, double t, struct event *sample,
				  char *err, size_t errsz)
{
	struct event *const evs[] = { sample };
	return dec_document(body, len, t, evs, 1, counts_read, NULL, err, errsz);
}

/* ---- Prometheus ---------------------------------------------------------- */

/* Only the families read here are checked, against the same range table as
 * the JSON routes; a value out of range rejects the whole body, and a sum
 * is checked again before it is narrowed. */
struct sched_prom {
	bool has_workers, has_processing, out_of_range;
	double workers, processing;
};

static void sched_prom_sample(void *ctx, const struct prom_sample *s)
{
	struct sched_prom *p = ctx;
	if (strcmp(s->name, "dask_scheduler_workers") == 0) {
		p->has_workers = true; /* the states partition the scheduler's workers */
		p->out_of_range |= !range_ok(RANGE_WORKERS, s->value);
		p->workers += s->value;
	} else if (strcmp(s->name, "dask_scheduler_tasks") == 0) {
		const char *st = prom_label(s, "state");
		if (st && strcmp(st, "processing") == 0) {
			p->has_processing = true;
			p->out_of_range |= !range_ok(RANGE_TASKS, s->value);
			p->processing = s->value;
		}
	}
}

enum dask_error dask_parse_scheduler_prom(const char *body, size_t len, double t,
					  struct event *sample, struct prom_stats *st)
{
	event_reset(sample);
	sample->t = t;
	struct sched_prom p = { 0 };
	prom_parse(body, len, sched_prom_sample, &p, st);
	if (!p.has_workers)
		return DASK_BAD_SHAPE;
	/* states summing past the table's maximum: 8e9 once came out as 3.7e9 */
	if (p.out_of_range || !range_ok(RANGE_WORKERS, p.workers))
		return DASK_OUT_OF_RANGE;
	sample->type = EV_SAMPLE;
	struct ev_sample *s = &sample->u.sample;
	s->source = "prometheus";
	s->worker_count = (uint32_t)p.workers;
	s->tasks_processing = p.has_processing ? optnum_of(p.processing) : optnum_none();
	return DASK_OK;
}

struct worker_prom_acc {
	bool has_memory, out_of_range;
	optnum managed, unmanaged, spilled, threads, cpu_seconds;
};

/* The accumulator's slot for s, and the quantity it is (NULL: not read). */
static optnum *worker_prom_slot(struct worker_prom_acc *a, const struct prom_sample *s,
				enum range_qty *q)
{
	*q = RANGE_BYTES;
	if (strcmp(s->name, "dask_worker_memory_bytes") == 0) {
		const char *type = prom_label(s, "type");
		a->has_memory = true;
		if (!type)
			return NULL;
		if (strcmp(type, "managed") == 0)
			return &a->managed;
		if (strcmp(type, "unmanaged") == 0)
			return &a->unmanaged;
		return strcmp(type, "spilled") == 0 ? &a->spilled : NULL;
	}
	if (strcmp(s->name, "dask_worker_threads") == 0) {
		*q = RANGE_NTHREADS;
		return &a->threads;
	}
	*q = RANGE_CPU_SECONDS;
	return strcmp(s->name, "process_cpu_seconds_total") == 0 ? &a->cpu_seconds : NULL;
}

static void worker_prom_sample(void *ctx, const struct prom_sample *s)
{
	struct worker_prom_acc *a = ctx;
	enum range_qty q;
	optnum *slot = worker_prom_slot(a, s, &q);
	if (slot && !range_ok(q, s->value))
		a->out_of_range = true;
	else if (slot)
		*slot = optnum_of(s->value);
}

enum dask_error dask_parse_worker_prom(const char *body, size_t len, struct dask_worker_prom *out,
				       struct prom_stats *st)
{
	*out = (struct dask_worker_prom){ 0 };
	struct worker_prom_acc a = { 0 };
	prom_parse(body, len, worker_prom_sample, &a, st);
	if (!a.has_memory)
		return DASK_BAD_SHAPE;
	/* Dask's process memory is managed + unmanaged (spilled is on disk):
	 * with either part missing it is not measured, never a partial sum. */
	bool both = a.managed.valid && a.unmanaged.valid;
	double memory = both ? a.managed.value + a.unmanaged.value : 0;
	if (a.out_of_range || !range_ok(RANGE_BYTES, memory))
		return DASK_OUT_OF_RANGE;
	out->memory_bytes = both ? optnum_of(memory) : optnum_none();
	out->managed_bytes = a.managed;
	out->spilled_bytes = a.spilled;
	out->threads = a.threads;
	out->cpu_seconds = a.cpu_seconds;
	return DASK_OK;
}
