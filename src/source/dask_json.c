/* Dask HTTP bodies -> events: the checked reads every route makes, and the
 * budgeted parse. Missing or null fields stay invalid (n/a); present fields
 * of the wrong type reject the body. The tree lives in an arena of its own,
 * freed whole (malloc and free were a third of decoding a 2,000-worker
 * identity.json), built only within a budget: a hostile body amplifies
 * 32-fold. */
#include "roastop/dask_json.h"
#include "dask_jsonpriv.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "roastop/arena.h"
#include "roastop/cjson_lock.h"
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

void dask_dec_fail(struct dec *d, enum dask_error e, const char *fmt, ...)
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

/* A number within q's range (range.h): valid. Else an error. */
optnum dask_dec_ranged(struct dec *d, double x, const char *what, enum range_qty q)
{
	if (!range_ok(q, x)) {
		const struct range *r = range_of(q);
		dask_dec_fail(d, DASK_OUT_OF_RANGE, "%s: %g is not %sin [%g, %g] %s", what, x,
			      r->whole ? "whole and " : "", r->lo, r->hi, r->unit);
		return optnum_none();
	}
	return optnum_of(x);
}

/* Absent or null: invalid. A number: as dask_dec_ranged. Else an error. */
optnum dask_dec_numval(struct dec *d, const cJSON *v, const char *what, enum range_qty q)
{
	if (!v || cJSON_IsNull(v))
		return optnum_none();
	if (!cJSON_IsNumber(v)) {
		dask_dec_fail(d, DASK_BAD_FIELD, "%s: not a number", what);
		return optnum_none();
	}
	return dask_dec_ranged(d, v->valuedouble, what, q);
}

optnum dask_dec_num(struct dec *d, const cJSON *o, const char *key, enum range_qty q)
{
	return dask_dec_numval(d, cJSON_GetObjectItemCaseSensitive(o, key), key, q);
}

const char *dask_dec_strval(struct dec *d, const cJSON *v, const char *what)
{
	if (!v || cJSON_IsNull(v))
		return NULL;
	if (!cJSON_IsString(v) || !v->valuestring) {
		dask_dec_fail(d, DASK_BAD_FIELD, "%s: not a string", what);
		return NULL;
	}
	size_t n = strlen(v->valuestring);
	if (n > EVENT_MAX_STRING || !strutil_utf8_ok((const unsigned char *)v->valuestring)) {
		dask_dec_fail(d, DASK_BAD_FIELD, "%s: too long or not UTF-8", what);
		return NULL;
	}
	char *s = arena_strndup(d->mem, v->valuestring, n);
	if (!s)
		dask_dec_fail(d, DASK_NO_MEMORY, "out of memory");
	return s;
}

const char *dask_dec_str(struct dec *d, const cJSON *o, const char *key)
{
	return dask_dec_strval(d, cJSON_GetObjectItemCaseSensitive(o, key), key);
}

void *dask_dec_array(struct dec *d, size_t n, size_t size)
{
	if (n == 0)
		return NULL;
	void *p = arena_alloc(d->mem, n * size);
	if (!p)
		dask_dec_fail(d, DASK_NO_MEMORY, "out of memory");
	else
		memset(p, 0, n * size);
	return p;
}

/* A JSON array (or object, for identity's workers{}) of at most
 * EVENT_MAX_LIST members: the arena array for them (NULL when empty or on
 * error; d->error tells which). */
void *dask_dec_list(struct dec *d, const cJSON *node, bool object, const char *what,
		    size_t elem)
{
	if (object ? !cJSON_IsObject(node) : !cJSON_IsArray(node)) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "%s: not an %s", what,
			      object ? "object" : "array");
		return NULL;
	}
	size_t n = (size_t)cJSON_GetArraySize(node);
	if (n > EVENT_MAX_LIST) {
		dask_dec_fail(d, DASK_TOO_MANY, "%s: %zu entries", what, n);
		return NULL;
	}
	return dask_dec_array(d, n, elem);
}

static bool b64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

/* Only the alphabet before the padding (EVP_DecodeBlock would skip
 * whitespace), and the last group as the encoder writes it (unused bits
 * zero): one text per byte string. */
long dask_base64_decode(const char *text, size_t len, unsigned char *out, size_t cap)
{
	if (!len || len % 4 || len / 4 * 3 > cap || len > INT_MAX)
		return -1;
	size_t pad = (text[len - 1] == '=') + (text[len - 2] == '=');
	for (size_t i = 0; i < len - pad; i++)
		if (!b64_char(text[i]))
			return -1;
	int n = EVP_DecodeBlock(out, (const unsigned char *)text, (int)len);
	if (n < 0 || (size_t)n < pad)
		return -1;
	size_t got = (size_t)n - pad;
	unsigned char last[8];
	int m = EVP_EncodeBlock(last, out + (len / 4 - 1) * 3, (int)(3 - pad));
	return m == 4 && memcmp(last, text + len - 4, 4) == 0 ? (long)got : -1;
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
 * follows a comma or opens a container. A malformed body merely counts
 * oddly (cJSON rejects it next). */
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
cJSON *dask_dec_parse(struct dec *d, struct arena *tree, const char *body, size_t len)
{
	if (len > DASK_MAX_JSON_BODY) {
		dask_dec_fail(d, DASK_OVER_BUDGET, "body of %zu bytes is over the limit", len);
		return NULL;
	}
	struct scan sc;
	dec_scan(body, len, &sc);
	size_t budget = dec_budget(sc.workers);
	if (sc.nodes > budget) {
		dask_dec_fail(d, DASK_OVER_BUDGET, "%zu JSON values, budget %zu for %zu workers",
			      sc.nodes, budget, sc.workers);
		return NULL;
	}
	cJSON *root = cjson_lock_parse(tree, body, len, NULL);
	if (!root && tree->refused)
		dask_dec_fail(d, DASK_OVER_BUDGET, "tree over %u MiB", DASK_TREE_MAX >> 20);
	else if (!root)
		dask_dec_fail(d, DASK_BAD_JSON, "not JSON");
	else if (!cJSON_IsObject(root))
		dask_dec_fail(d, DASK_BAD_SHAPE, "not a JSON object");
	return root;
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

enum dask_error dask_dec_document(const char *body, size_t len, double t,
				  struct event *const evs[], size_t n, doc_read_fn read,
				  void *ctx, char *err, size_t errsz)
{
	events_begin(t, evs, n);
	struct dec d = { .mem = &evs[0]->mem, .err = err, .errsz = errsz };
	struct arena tree;
	arena_init(&tree, DASK_TREE_MAX);
	cJSON *root = dask_dec_parse(&d, &tree, body, len);
	if (root && d.error == DASK_OK)
		read(&d, root, evs, ctx);
	arena_free(&tree);
	return events_end(&d, evs, n);
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
	cJSON *root = dask_dec_parse(&d, &tree, body, len);
	const cJSON *paths =
		d.error == DASK_OK ? cJSON_GetObjectItemCaseSensitive(root, "paths") : NULL;
	*identity = sitemap_has(paths, "/json/identity.json");
	*prom = sitemap_has(paths, "/metrics");
	*counts = sitemap_has(paths, "/json/counts.json");
	arena_free(&tree);
}


/* ---- counts.json: served without prometheus_client and while
 * identity.json answers 500; no worker rows ---- */
static void counts_read(struct dec *d, const cJSON *root, struct event *const evs[], void *ctx)
{
	(void)ctx;
	struct ev_sample *s = &evs[0]->u.sample;
	optnum workers = dask_dec_num(d, root, "workers", RANGE_WORKERS);
	s->total_threads = dask_dec_num(d, root, "cores", RANGE_TOTAL_THREADS);
	s->tasks_processing = dask_dec_num(d, root, "processing", RANGE_TASKS);
	if (!workers.valid && d->error == DASK_OK)
		dask_dec_fail(d, DASK_BAD_SHAPE, "workers: missing");
	evs[0]->type = EV_SAMPLE;
	s->source = "counts";
	s->worker_count = workers.valid ? (uint32_t)workers.value : 0; /* RANGE_WORKERS fits */
}

enum dask_error dask_parse_counts(const char *body, size_t len, double t, struct event *sample,
				  char *err, size_t errsz)
{
	struct event *const evs[] = { sample };
	return dask_dec_document(body, len, t, evs, 1, counts_read, NULL, err, errsz);
}
