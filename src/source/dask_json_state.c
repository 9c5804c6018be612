/* roastop's own route, /roastop/v1/state.json (versions 1 to 5) -> a sample,
 * the cluster's fine metrics and the run's span; and the workers' facts a
 * version-3 body may leave out while its token holds (struct dask_facts). */
#include "roastop/dask_json.h"
#include "dask_jsonpriv.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/arena.h"
#include "roastop/range.h"

static void state_worker(struct dec *d, const cJSON *o, struct worker_sample *w)
{
	if (!cJSON_IsObject(o)) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "workers[]: not an object");
		return;
	}
	w->id = dask_dec_str(d, o, "address");
	if (!w->id && d->error == DASK_OK)
		dask_dec_fail(d, DASK_BAD_FIELD, "workers[].address: missing");
	w->name = dask_dec_str(d, o, "name");
	w->host = dask_dec_str(d, o, "host");
	w->status = dask_dec_str(d, o, "status");
	w->nthreads = dask_dec_num(d, o, "nthreads", RANGE_NTHREADS);
	w->memory_bytes = dask_dec_num(d, o, "memory", RANGE_BYTES);
	w->memory_limit = dask_dec_num(d, o, "memory_limit", RANGE_BYTES);
	w->cpu_percent = dask_dec_num(d, o, "cpu", RANGE_CPU_PERCENT);
	w->executing = dask_dec_num(d, o, "executing", RANGE_TASKS);
	w->processing = dask_dec_num(d, o, "processing", RANGE_TASKS);
	w->managed_bytes = dask_dec_num(d, o, "managed_bytes", RANGE_BYTES);
	w->spilled_bytes = dask_dec_num(d, o, "spilled_bytes", RANGE_BYTES);
	w->pid = dask_dec_num(d, o, "pid", RANGE_PID);
}

static void state_workers_v1(struct dec *d, const cJSON *arr, struct ev_sample *s)
{
	s->workers = dask_dec_list(d, arr, false, "workers", sizeof(*s->workers));
	const cJSON *o;
	cJSON_ArrayForEach(o, arr)
	{
		if (d->error != DASK_OK)
			return;
		state_worker(d, o, &s->workers[s->n_workers++]);
	}
}

/* Versions 2 and 3 (docs/scheduler.md, "The route"): "workers" holds
 * [address, name, host, nthreads, memory_limit, pid] rows, "worker_status"
 * the statuses and "worker_state" STATE_NUMS in base64, little-endian.
 * Version 2: float64, worker after worker. Version 3: column after column,
 * int64 but for cpu (negative: null), and managed is WorkerState.nbytes,
 * capped at the process memory as WorkerState.memory does. */
#define STATE_B64 64u
#define STATE_RAW 48u

static uint64_t le_u64(const unsigned char *b)
{
	uint64_t u = 0;
	for (int i = 7; i >= 0; i--)
		u = u << 8 | b[i];
	return u;
}

static double le_double(const unsigned char *b)
{
	uint64_t u = le_u64(b);
	double x;
	memcpy(&x, &u, sizeof(x));
	return x;
}

/* A version-3 count: int64, negative for null (NaN here). */
static double le_count(const unsigned char *b)
{
	uint64_t u = le_u64(b);
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

/* n workers' base64 field of `chars` characters, `bytes` decoded, whole
 * (free it); NULL on error. */
static unsigned char *state_b64(struct dec *d, const cJSON *v, const char *what, size_t n,
				size_t chars, size_t bytes)
{
	if (!cJSON_IsString(v) || strlen(v->valuestring) != chars) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "%s: not %zu workers", what, n);
		return NULL;
	}
	unsigned char *raw = malloc(chars / 4 * 3 + 1);
	if (!raw)
		dask_dec_fail(d, DASK_NO_MEMORY, "out of memory");
	else if (n && dask_base64_decode(v->valuestring, chars, raw, chars / 4 * 3) != (long)bytes) {
		dask_dec_fail(d, DASK_BAD_FIELD, "%s: not base64", what);
		free(raw);
		raw = NULL;
	}
	return raw;
}

/* "worker_state" of n workers. */
static unsigned char *state_raw(struct dec *d, const cJSON *nums, size_t n)
{
	return state_b64(d, nums, "worker_state", n, n * STATE_B64, n * STATE_RAW);
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
		*slot = isfinite(x) ? dask_dec_ranged(d, x, STATE_NUMS[c].what, STATE_NUMS[c].q)
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
		dask_dec_fail(d, DASK_BAD_SHAPE, "workers[]: not a 6-element array");
		return;
	}
	const cJSON *v = a->child;
	w->id = dask_dec_strval(d, v, "workers[][0]");
	if (!w->id && d->error == DASK_OK)
		dask_dec_fail(d, DASK_BAD_FIELD, "workers[][0]: missing address");
	w->name = dask_dec_strval(d, v = v->next, "workers[][1]");
	w->host = dask_dec_strval(d, v = v->next, "workers[][2]");
	w->nthreads = dask_dec_numval(d, v = v->next, "workers[][3]", RANGE_NTHREADS);
	w->memory_limit = dask_dec_numval(d, v = v->next, "workers[][4]", RANGE_BYTES);
	w->pid = dask_dec_numval(d, v->next, "workers[][5]", RANGE_PID);
}

static void state_workers_full(struct dec *d, const cJSON *root, bool columns,
			       struct ev_sample *s)
{
	const cJSON *facts = cJSON_GetObjectItemCaseSensitive(root, "workers");
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "worker_status");
	s->workers = dask_dec_list(d, facts, false, "workers", sizeof(*s->workers));
	if (d->error != DASK_OK)
		return;
	size_t n = (size_t)cJSON_GetArraySize(facts);
	if (!cJSON_IsArray(status) || (size_t)cJSON_GetArraySize(status) != n) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "worker_status: not %zu workers", n);
		return;
	}
	unsigned char *raw = state_raw(d, cJSON_GetObjectItemCaseSensitive(root, "worker_state"), n);
	const cJSON *f = facts->child, *st = status->child;
	for (size_t i = 0; raw && i < n && d->error == DASK_OK; i++, f = f->next, st = st->next) {
		struct worker_sample *w = &s->workers[s->n_workers++];
		state_facts(d, f, w);
		w->status = dask_dec_strval(d, st, "worker_status[]");
		state_numbers(d, raw, n, i, columns, w);
	}
	free(raw);
}

/* A kept string into the event's arena (NULL stays NULL). */
static const char *dec_copy(struct dec *d, const char *s)
{
	char *c = s ? arena_strdup(d->mem, s) : NULL;
	if (s && !c)
		dask_dec_fail(d, DASK_NO_MEMORY, "out of memory");
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
		dask_dec_fail(d, DASK_BAD_SHAPE, "worker_state or worker_status: not as without workers");
		return;
	}
	size_t n = strlen(nums->valuestring) / STATE_B64;
	if (!f || !f->token || strcmp(f->token, token) != 0 ||
	    !str_same(f->scheduler_id, s->scheduler_id) || f->n != n) {
		dask_dec_fail(d, DASK_STALE_FACTS, "workers left out, facts %.64s not kept for %zu workers",
			      token, n);
		return;
	}
	s->workers = dask_dec_array(d, n, sizeof(*s->workers));
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
	struct worker_sample *rows = dask_dec_array(&d, s->n_workers, sizeof(*rows));
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
		dask_dec_fail(d, DASK_BAD_SHAPE, "fine[]: not a 5-element array");
		return;
	}
	const char **parts[4] = { &row->context, &row->prefix, &row->activity, &row->unit };
	for (int i = 0; i < 4; i++) {
		*parts[i] = dask_dec_strval(d, cJSON_GetArrayItem(a, i), "fine[][i]");
		if (!*parts[i] && d->error == DASK_OK)
			dask_dec_fail(d, DASK_BAD_FIELD, "fine[][%d]: missing", i);
	}
	const cJSON *v = cJSON_GetArrayItem(a, 4);
	if (!cJSON_IsNumber(v))
		dask_dec_fail(d, DASK_BAD_FIELD, "fine[][4]: not a number");
	else if (!range_ok(RANGE_FINE, v->valuedouble))
		dask_dec_fail(d, DASK_OUT_OF_RANGE, "fine[][4]: %g is not in [0, %g]",
			      v->valuedouble, RANGE_FINE_MAX);
	else
		row->value = v->valuedouble;
}

static void fine_rows(struct dec *d, const cJSON *arr, struct event *ev, enum fine_scope scope)
{
	struct ev_fine *f = &ev->u.fine;
	f->scope = scope;
	f->rows = dask_dec_list(d, arr, false, "fine", sizeof(*f->rows));
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
	const char *t = dask_dec_str(d, root, "facts_token");
	size_t n = t ? strlen(t) : 0;
	if (d->error == DASK_OK &&
	    (n == 0 || n > DASK_TOKEN_MAX ||
	     strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n))
		dask_dec_fail(d, DASK_BAD_FIELD, "facts_token: not 1 to %u of [A-Za-z0-9._-]",
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

/* "worker_occupancy": n little-endian float64 (NaN: null); absent: all null. */
static void state_occupancy(struct dec *d, const cJSON *root, struct ev_sample *s)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "worker_occupancy");
	size_t n = s->n_workers;
	if (!o || d->error != DASK_OK)
		return;
	unsigned char *raw = state_b64(d, o, "worker_occupancy", n, (8 * n + 2) / 3 * 4, 8 * n);
	for (size_t i = 0; raw && i < n && d->error == DASK_OK; i++) {
		double x = le_double(raw + 8 * i);
		s->workers[i].occupancy = isfinite(x) ? dask_dec_ranged(d, x, "worker_occupancy",
									RANGE_OCCUPANCY)
						      : optnum_none();
	}
	free(raw);
}

/* An array of at most max members, each an array of n: the arena array for
 * them (NULL when empty or on error). */
static void *state_tuples(struct dec *d, const cJSON *arr, size_t max, int n, const char *what,
			  size_t elem)
{
	if (!cJSON_IsArray(arr)) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "%s: not an array", what);
		return NULL;
	}
	if ((size_t)cJSON_GetArraySize(arr) > max) {
		dask_dec_fail(d, DASK_TOO_MANY, "%s: over %zu entries", what, max);
		return NULL;
	}
	const cJSON *a;
	cJSON_ArrayForEach(a, arr)
	{
		if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) {
			dask_dec_fail(d, DASK_BAD_SHAPE, "%s[]: not a %d-element array", what, n);
			return NULL;
		}
	}
	return dask_dec_array(d, (size_t)cJSON_GetArraySize(arr), elem);
}

/* A number that must be there: null or absent is an error too. */
static double state_needed(struct dec *d, const cJSON *v, const char *what, enum range_qty q)
{
	optnum x = dask_dec_numval(d, v, what, q);
	if (!x.valid)
		dask_dec_fail(d, DASK_BAD_FIELD, "%s: missing", what);
	return x.value;
}

/* Version 4: "erred", [prefix, tasks erred since "erred_since"], and
 * "erred_left_out", the prefixes not listed. */
static void state_erred(struct dec *d, const cJSON *root, struct ev_sample *s)
{
	s->erred_left_out = dask_dec_num(d, root, "erred_left_out", RANGE_TASKS);
	s->erred_since = dask_dec_num(d, root, "erred_since", RANGE_EPOCH);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "erred");
	if (!s->erred_left_out.valid && arr && d->error == DASK_OK)
		dask_dec_fail(d, DASK_BAD_FIELD, "erred: without erred_left_out");
	if (s->erred_left_out.valid != s->erred_since.valid && d->error == DASK_OK)
		dask_dec_fail(d, DASK_BAD_FIELD, "erred_left_out and erred_since: one without the other");
	if (!s->erred_left_out.valid)
		return; /* not measured */
	s->erred = state_tuples(d, arr, EVENT_MAX_SECTIONS, 2, "erred", sizeof(*s->erred));
	const cJSON *a;
	cJSON_ArrayForEach(a, arr)
	{
		if (d->error != DASK_OK)
			return;
		struct kv_num *kv = &s->erred[s->n_erred++];
		kv->key = dask_dec_strval(d, a->child, "erred[][0]");
		kv->value = state_needed(d, a->child->next, "erred[][1]", RANGE_TASKS);
	}
}

/* Version 4: "running", [key, prefix, worker, seconds], and "running_left_out". */
static void state_running(struct dec *d, const cJSON *root, struct ev_sample *s)
{
	s->running_left_out = dask_dec_num(d, root, "running_left_out", RANGE_TASKS);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "running");
	if (!s->running_left_out.valid && arr && d->error == DASK_OK)
		dask_dec_fail(d, DASK_BAD_FIELD, "running: without running_left_out");
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
		r->key = dask_dec_strval(d, v, "running[][0]");
		r->prefix = dask_dec_strval(d, v = v->next, "running[][1]");
		r->worker = dask_dec_strval(d, v = v->next, "running[][2]");
		r->seconds = state_needed(d, v->next, "running[][3]", RANGE_TASK_SECONDS);
	}
}

static void state_sample(struct dec *d, const cJSON *root, int version, struct state_ctx *c,
			 struct ev_sample *s)
{
	s->source = "state";
	s->scheduler_id = dask_dec_str(d, root, "scheduler_id");
	s->dask_version = dask_dec_str(d, root, "dask_version");
	s->total_threads = dask_dec_num(d, root, "total_threads", RANGE_TOTAL_THREADS);
	s->tasks_processing = dask_dec_num(d, root, "tasks_processing", RANGE_TASKS);
	s->tasks_done = dask_dec_num(d, root, "tasks_done", RANGE_TASKS);
	s->tasks_total = dask_dec_num(d, root, "tasks_total", RANGE_TASKS);
	s->tasks_done_cumulative = dask_dec_num(d, root, "tasks_done_cumulative", RANGE_TASKS);
	s->tasks_total_cumulative = dask_dec_num(d, root, "tasks_total_cumulative", RANGE_TASKS);
	if (!event_sample_progress_ok(s))
		dask_dec_fail(d, DASK_BAD_FIELD, "tasks_done: without tasks_total, or above it");
	if (version == 1)
		state_workers_v1(d, cJSON_GetObjectItemCaseSensitive(root, "workers"), s);
	else if (version == 2)
		state_workers_full(d, root, false, s);
	else {
		state_workers_v3(d, root, c, s);
		state_occupancy(d, root, s);
	}
	s->worker_count = (uint32_t)s->n_workers;
	if (version < 4)
		return;
	state_erred(d, root, s);
	state_running(d, root, s);
	if (d->error == DASK_OK && !event_sample_tasks_ok(s))
		dask_dec_fail(d, DASK_BAD_FIELD, "erred or running: an entry missing or out of range");
}

static void state_span(struct dec *d, const cJSON *root, struct event *span)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "span");
	if (!o || cJSON_IsNull(o))
		return;
	if (!cJSON_IsObject(o)) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "span: not an object");
		return;
	}
	span->type = EV_FINE;
	fine_rows(d, cJSON_GetObjectItemCaseSensitive(o, "fine"), span, FINE_SPAN);
}


static void state_read(struct dec *d, const cJSON *root, struct event *const evs[], void *ctx)
{
	struct event *sample = evs[0], *fine = evs[1], *span = evs[2];
	/* version 1: the handler an earlier collector left on a scheduler */
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "roastop_route");
	/* version 5: version 4's body, and tasks.json beside it (dask_tasks.c) */
	if (!cJSON_IsNumber(ver) || ver->valuedouble != (int)ver->valuedouble ||
	    ver->valuedouble < 1.0 || ver->valuedouble > 5.0) {
		dask_dec_fail(d, DASK_BAD_SHAPE, "roastop_route: not version 1 to 5");
		return;
	}
	sample->type = EV_SAMPLE;
	state_sample(d, root, ver->valuedouble > 4.0 ? 4 : (int)ver->valuedouble, ctx,
		     &sample->u.sample);
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
	enum dask_error e = dask_dec_document(body, len, t, evs, 3, state_read, &c, err, errsz);
	if (e == DASK_OK && c.keep && facts)
		facts_keep(facts, c.token, &sample->u.sample);
	return e;
}

enum dask_error dask_parse_state(const char *body, size_t len, double t, struct event *sample,
				 struct event *fine, struct event *span, char *err, size_t errsz)
{
	return dask_parse_state_facts(body, len, t, sample, fine, span, NULL, err, errsz);
}
