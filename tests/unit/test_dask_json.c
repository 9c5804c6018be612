/* The Dask body decoders on responses captured from a real scheduler
 * (distributed 2026.8.0, two workers) and on hostile variants of them;
 * plus the poller's pure helpers (URL joining, backoff). */
#include "test_util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "roastop/dask.h"
#include "roastop/dask_json.h"
#include "roastop/event_json.h"
#include "roastop/httpc.h"
#include "roastop/range.h"
#include "roastop/strbuf.h"
#include "roastop/timer.h"

#define FIX "tests/fixtures/dask-2026.8.0/"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[1 << 20];
	*len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

struct evs {
	struct event sample, fine, span;
};

static struct evs *evs_new(void)
{
	struct evs *e = calloc(1, sizeof(*e));
	event_init(&e->sample);
	event_init(&e->fine);
	event_init(&e->span);
	return e;
}

static void evs_free(struct evs *e)
{
	event_free(&e->sample);
	event_free(&e->fine);
	event_free(&e->span);
	free(e);
}

static enum dask_error state_of(struct evs *e, const char *text)
{
	char err[160];
	return dask_parse_state(text, strlen(text), 5.0, &e->sample, &e->fine, &e->span, err,
				sizeof(err));
}

static double fine_value(const struct ev_fine *f, const char *prefix, const char *activity)
{
	for (size_t i = 0; i < f->n_rows; i++)
		if (strcmp(f->rows[i].context, "execute") == 0 &&
		    strcmp(f->rows[i].prefix, prefix) == 0 &&
		    strcmp(f->rows[i].activity, activity) == 0)
			return f->rows[i].value;
	return -1;
}

/* A body captured while tasks ran, from the route of each version (a
 * scheduler may still serve an earlier collector's route). */
static void state_busy(const char *file)
{
	size_t len;
	const char *text = slurp(file, &len);
	struct evs *e = evs_new();
	char err[160] = "";
	assert_int_equal(dask_parse_state(text, len, 7.5, &e->sample, &e->fine, &e->span, err,
					  sizeof(err)),
			 DASK_OK);
	const struct ev_sample *s = &e->sample.u.sample;
	assert_int_equal(e->sample.type, EV_SAMPLE);
	assert_near(e->sample.t, 7.5, 0);
	assert_int_equal(s->n_workers, 2);
	assert_int_equal(s->worker_count, 2);
	assert_string_equal(s->dask_version, "2026.8.0");
	assert_non_null(strstr(s->scheduler_id, "Scheduler-"));
	double threads = 0, executing = 0;
	for (size_t i = 0; i < s->n_workers; i++) {
		assert_non_null(strstr(s->workers[i].id, "tcp://127.0.0.1:"));
		assert_true(s->workers[i].memory_bytes.valid && s->workers[i].memory_limit.valid);
		assert_true(s->workers[i].memory_bytes.value < s->workers[i].memory_limit.value);
		threads += s->workers[i].nthreads.value;
		executing += s->workers[i].executing.value;
	}
	assert_near(threads, s->total_threads.value, 0);
	assert_true(executing >= 1); /* captured while tasks ran */
	/* the span's 8 tasks, some done, the running ones not */
	assert_true(s->tasks_done.valid && s->tasks_total.valid);
	assert_near(s->tasks_total.value, 8, 0);
	assert_true(s->tasks_done.value + executing <= s->tasks_total.value);
	assert_true(s->tasks_done.value >= 1);
	assert_int_equal(e->fine.type, EV_FINE);
	assert_int_equal(e->fine.u.fine.scope, FINE_CLUSTER);
	assert_int_equal(e->span.type, EV_FINE);
	assert_int_equal(e->span.u.fine.scope, FINE_SPAN);
	assert_true(fine_value(&e->span.u.fine, "spin", "thread-cpu") > 0);
	evs_free(e);
}

static void state_busy_fixture(void **state)
{
	(void)state;
	state_busy(FIX "state-busy.json");
	state_busy(FIX "state-v2-busy.json");
	state_busy(FIX "state-v3-busy.json");
}

/* Idle, after the run: the span's CPU equals the cluster's (one run only). */
static void state_idle(const char *file)
{
	size_t len;
	const char *text = slurp(file, &len);
	struct evs *e = evs_new();
	char err[160];
	assert_int_equal(dask_parse_state(text, len, 1, &e->sample, &e->fine, &e->span, err,
					  sizeof(err)),
			 DASK_OK);
	double cl = fine_value(&e->fine.u.fine, "spin", "thread-cpu");
	assert_true(cl > 0);
	assert_near(fine_value(&e->span.u.fine, "spin", "thread-cpu"), cl, 1e-12);
	for (size_t i = 0; i < e->sample.u.sample.n_workers; i++)
		assert_near(e->sample.u.sample.workers[i].executing.value, 0, 0);
	assert_near(e->sample.u.sample.tasks_done.value, 8, 0); /* all of the span's tasks */
	assert_near(e->sample.u.sample.tasks_total.value, 8, 0);
	evs_free(e);
}

static void state_idle_fixture(void **state)
{
	(void)state;
	state_idle(FIX "state-idle.json");
	state_idle(FIX "state-v2-idle.json");
	state_idle(FIX "state-v3-idle.json");
}

static void state_without_span(void **state)
{
	(void)state;
	struct evs *e = evs_new();
	assert_int_equal(state_of(e, "{\"roastop_route\":1,\"workers\":[],\"fine\":[],\"span\":null}"),
			 DASK_OK);
	assert_int_equal(e->sample.type, EV_SAMPLE);
	assert_int_equal(e->sample.u.sample.worker_count, 0);
	assert_int_equal(e->fine.type, EV_FINE);
	assert_int_equal(e->span.type, EV_NONE);
	evs_free(e);
}

/* One worker's six numbers: 1, 0, 0, inf (null), 0, 0; with a character
 * outside base64; with memory 1e16 bytes, past the range table. */
#define B64_ONE "AAAAAAAA8D8AAAAAAAAAAAAAAAAAAAAAAAAAAAAA8H8AAAAAAAAAAAAAAAAAAAAA"
#define B64_BAD "AAAAAAAA8D8AAAAAAAAAAAAAAAAAAAAAAAAAAAAA8H8AAAAAAAAAAAAAAAAAAA*A"
#define B64_HUGE "AIDgN3nDQUMAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

/* The same two workers in version 1's objects and version 2's columns
 * (base64 float64, NaN for null): every field decodes to the same value. */
static const char STATE_V1[] =
	"{\"roastop_route\":1,\"tasks_processing\":3,\"workers\":[{\"address\":\"tcp://127.0.0.1:"
	"40001\",\"name\":\"w0\",\"host\":\"127.0.0.1\",\"nthreads\":1,\"memory_limit\":2147483648,"
	"\"pid\":4242,\"status\":\"running\",\"memory\":66203648,\"managed_bytes\":1024,"
	"\"spilled_bytes\":0,\"cpu\":2.5,\"executing\":1,\"processing\":3},{\"address\":\"tcp://"
	"127.0.0.1:40002\",\"name\":\"w1\",\"host\":\"127.0.0.1\",\"nthreads\":2,\"memory_limit\":"
	"null,\"pid\":null,\"status\":\"paused\",\"memory\":123456789012,\"managed_bytes\":"
	"123456789012,\"spilled_bytes\":4096,\"cpu\":null,\"executing\":0,\"processing\":0}],"
	"\"fine\":[],\"span\":null}";
static const char STATE_V2[] =
	"{\"roastop_route\":2,\"tasks_processing\":3,\"fine\":[],\"span\":null,\"worker_state\":"
	"\"AAAAAICRj0EAAAAAAACQQAAAAAAAAAAAAAAAAAAABEAAAAAAAADwPwAAAAAAAAhAAAAUGpm+PEIAABQamb48QgAA"
	"AAAAALBAAAAAAAAA+H8AAAAAAAAAAAAAAAAAAAAA\",\"worker_status\":[\"running\",\"paused\"],"
	"\"workers\":[[\"tcp://127.0.0.1:40001\",\"w0\",\"127.0.0.1\",1,2147483648,4242],"
	"[\"tcp://127.0.0.1:40002\",\"w1\",\"127.0.0.1\",2,null,null]]}";

static void optnum_same(optnum a, optnum b)
{
	assert_int_equal(a.valid, b.valid);
	if (a.valid)
		assert_true(a.value == b.value);
}

/* Every worker field of b as a's. */
static void samples_same(const struct ev_sample *a, const struct ev_sample *b)
{
	assert_int_equal(a->n_workers, b->n_workers);
	assert_int_equal(b->worker_count, b->n_workers);
	optnum_same(a->tasks_processing, b->tasks_processing);
	for (size_t i = 0; i < a->n_workers; i++) {
		const struct worker_sample *x = &a->workers[i], *y = &b->workers[i];
		assert_string_equal(x->id, y->id);
		assert_string_equal(x->name, y->name);
		assert_string_equal(x->host, y->host);
		assert_string_equal(x->status, y->status);
		optnum_same(x->nthreads, y->nthreads);
		optnum_same(x->memory_bytes, y->memory_bytes);
		optnum_same(x->memory_limit, y->memory_limit);
		optnum_same(x->cpu_percent, y->cpu_percent);
		optnum_same(x->executing, y->executing);
		optnum_same(x->processing, y->processing);
		optnum_same(x->managed_bytes, y->managed_bytes);
		optnum_same(x->spilled_bytes, y->spilled_bytes);
		optnum_same(x->pid, y->pid);
	}
}

static void state_v2_reads_as_v1(void **state)
{
	(void)state;
	struct evs *e1 = evs_new(), *e2 = evs_new();
	assert_int_equal(state_of(e1, STATE_V1), DASK_OK);
	assert_int_equal(state_of(e2, STATE_V2), DASK_OK);
	const struct ev_sample *a = &e1->sample.u.sample, *b = &e2->sample.u.sample;
	assert_int_equal(a->n_workers, 2);
	samples_same(a, b);
	assert_true(b->workers[0].cpu_percent.valid && b->workers[0].cpu_percent.value == 2.5);
	assert_false(b->workers[1].cpu_percent.valid); /* NaN: null */
	assert_true(b->workers[1].memory_bytes.value == 123456789012.0);
	/* the rejections below change one thing in this body: alone it is taken */
	assert_int_equal(state_of(e2, "{\"roastop_route\":2,\"workers\":[[\"a\",\"w\",\"h\",1,1,"
				       "1]],\"worker_status\":[null],\"worker_state\":\"" B64_ONE
				       "\",\"fine\":[]}"),
			 DASK_OK);
	assert_true(b->workers[0].memory_bytes.valid && b->workers[0].memory_bytes.value == 1);
	assert_false(b->workers[0].cpu_percent.valid); /* inf: null, as version 1's route sent it */
	assert_null(b->workers[0].status);
	evs_free(e1);
	evs_free(e2);
}

/* Version 3: the same workers column after column (int64 but cpu), with
 * the facts token; the second worker's nbytes (2e11) above its memory, so
 * roastop's cap gives version 1's managed_bytes. The short body leaves the
 * facts and statuses out. */
#define STATE_V3_HEAD                                                                              \
	"{\"roastop_route\":3,\"scheduler_id\":\"Scheduler-1\",\"tasks_processing\":3,"           \
	"\"fine\":[],\"span\":null,\"worker_state\":\"ADDyAwAAAAAUGpm+HAAAAAAEAAAAAAAAANDtkC4AAAAA"     \
	"AAAAAAAAAAAQAAAAAAAAAAAAAAAABEAAAAAAAAD4fwEAAAAAAAAAAAAAAAAAAAADAAAAAAAAAAAAAAAAAAAA\","
static const char STATE_V3[] =
	STATE_V3_HEAD "\"facts_token\":\"a1b2.2\",\"worker_status\":[\"running\",\"paused\"],"
		      "\"workers\":[[\"tcp://127.0.0.1:40001\",\"w0\",\"127.0.0.1\",1,2147483648,4242],"
		      "[\"tcp://127.0.0.1:40002\",\"w1\",\"127.0.0.1\",2,null,null]]}";
static const char STATE_V3_SHORT[] = STATE_V3_HEAD "\"facts_token\":\"a1b2.2\"}";

static enum dask_error state_kept(struct evs *e, struct dask_facts *f, const char *text)
{
	char err[160];
	return dask_parse_state_facts(text, strlen(text), 5.0, &e->sample, &e->fine, &e->span, f,
				      err, sizeof(err));
}

/* A full version-3 body reads as version 1 and keeps its facts; the short
 * body then reads the same, with the facts from the cache. */
static void state_v3_reads_as_v1(void **state)
{
	(void)state;
	struct evs *e1 = evs_new(), *e3 = evs_new();
	struct dask_facts f;
	dask_facts_init(&f);
	assert_int_equal(state_of(e1, STATE_V1), DASK_OK);
	assert_int_equal(state_kept(e3, &f, STATE_V3), DASK_OK);
	samples_same(&e1->sample.u.sample, &e3->sample.u.sample);
	assert_string_equal(f.token, "a1b2.2");
	assert_string_equal(f.scheduler_id, "Scheduler-1");
	assert_int_equal(f.n, 2);
	assert_int_equal(state_kept(e3, &f, STATE_V3_SHORT), DASK_OK);
	samples_same(&e1->sample.u.sample, &e3->sample.u.sample);
	assert_string_equal(f.token, "a1b2.2"); /* a short body keeps what is kept */
	assert_int_equal(state_kept(e3, &f, STATE_V3_SHORT), DASK_OK);
	samples_same(&e1->sample.u.sample, &e3->sample.u.sample);
	/* a negative count is null; nbytes is not capped by a memory not measured */
	assert_int_equal(state_kept(e3, &f, "{\"roastop_route\":3,\"facts_token\":\"t\",\"fine\":[],"
				      "\"workers\":[[\"a\",\"w\",\"h\",1,1,1]],\"worker_status\":[null],"
				      "\"worker_state\":\"//////////8FAAAAAAAAAP//////////AAAAAAAA"
				      "+H8AAAAAAAAAAAAAAAAAAAAA\"}"),
			 DASK_OK);
	const struct worker_sample *w = &e3->sample.u.sample.workers[0];
	assert_false(w->memory_bytes.valid || w->spilled_bytes.valid || w->cpu_percent.valid);
	assert_true(w->managed_bytes.valid && w->managed_bytes.value == 5);
	assert_true(w->executing.valid && w->executing.value == 0);
	assert_string_equal(f.token, "t");
	dask_facts_free(&f);
	evs_free(e1);
	evs_free(e3);
}

/* Version 4: version 3 with the failed tasks per prefix and the tasks
 * executing now. */
#define STATE_V4(tail)                                                                             \
	"{\"roastop_route\":4,\"facts_token\":\"t\",\"fine\":[],\"worker_status\":[\"running\"],"  \
	"\"workers\":[[\"tcp://a:1\",\"w\",\"h\",1,1,1]],"                                        \
	"\"worker_state\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"" tail "}"

static void state_v4_tasks(void **state)
{
	(void)state;
	struct evs *e = evs_new();
	assert_int_equal(state_of(e, STATE_V4(",\"erred\":[[\"boom\",3],[\"x\",1]],"
					      "\"erred_since\":1764000000.25,\"erred_left_out\":2,\"running\":[[\"('nap-1', 0)\","
					      "\"nap\",\"tcp://a:1\",12.5]],\"running_left_out\":4")),
			 DASK_OK);
	const struct ev_sample *s = &e->sample.u.sample;
	assert_int_equal(s->n_erred, 2);
	assert_string_equal(s->erred[0].key, "boom");
	assert_near(s->erred[0].value, 3, 0);
	assert_near(s->erred_left_out.value, 2, 0);
	assert_near(s->erred_since.value, 1764000000.25, 0);
	assert_int_equal(s->n_running, 1);
	assert_string_equal(s->running[0].key, "('nap-1', 0)");
	assert_string_equal(s->running[0].prefix, "nap");
	assert_string_equal(s->running[0].worker, "tcp://a:1");
	assert_near(s->running[0].seconds, 12.5, 0);
	assert_near(s->running_left_out.value, 4, 0);
	/* none failed, none running: measured, empty */
	assert_int_equal(state_of(e, STATE_V4(",\"erred\":[],\"erred_since\":1764000000.25,\"erred_left_out\":0,"
					      "\"running\":[],\"running_left_out\":0")),
			 DASK_OK);
	assert_true(e->sample.u.sample.erred_left_out.valid && !e->sample.u.sample.n_erred);
	assert_true(e->sample.u.sample.running_left_out.valid);
	/* without the members (and in version 3): not measured */
	assert_int_equal(state_of(e, STATE_V4("")), DASK_OK);
	assert_false(e->sample.u.sample.erred_left_out.valid);
	assert_false(e->sample.u.sample.running_left_out.valid);
	evs_free(e);
}

/* WorkerState.occupancy, one float64 a worker (padded base64): read when
 * the route sends it; NaN or no member (an earlier route) is not measured,
 * never 0; a member of another length, not base64 or out of range rejects
 * the body. */
static void state_occupancy(void **state)
{
	(void)state;
	struct evs *e = evs_new();
	assert_int_equal(state_of(e, STATE_V4(",\"worker_occupancy\":\"AAAAAAAA+D8=\"")), DASK_OK);
	optnum occ = e->sample.u.sample.workers[0].occupancy;
	assert_true(occ.valid && occ.value == 1.5);
	assert_int_equal(state_of(e, STATE_V4(",\"worker_occupancy\":\"AAAAAAAA+H8=\"")), DASK_OK);
	assert_false(e->sample.u.sample.workers[0].occupancy.valid);
	assert_int_equal(state_of(e, STATE_V4("")), DASK_OK);
	assert_false(e->sample.u.sample.workers[0].occupancy.valid);
	static const struct {
		const char *body;
		enum dask_error want;
	} cases[] = {
		{ STATE_V4(",\"worker_occupancy\":\"AAAAAAAA+D8AAAAAAAAAAA==\""), DASK_BAD_SHAPE },
		{ STATE_V4(",\"worker_occupancy\":[1.5]"), DASK_BAD_SHAPE },
		{ STATE_V4(",\"worker_occupancy\":\"AAAAAAAA+D8A\""), DASK_BAD_FIELD },
		{ STATE_V4(",\"worker_occupancy\":\"AAAA*AAA+D8=\""), DASK_BAD_FIELD },
		{ STATE_V4(",\"worker_occupancy\":\"AAAAAAAA8L8=\""), DASK_OUT_OF_RANGE },
		{ STATE_V4(",\"worker_occupancy\":\"AAAAopQafUI=\""), DASK_OUT_OF_RANGE },
	};
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		enum dask_error got = state_of(e, cases[i].body);
		if (got != cases[i].want)
			fail_msg("case %zu: %s, want %s", i, dask_error_name(got),
				 dask_error_name(cases[i].want));
	}
	evs_free(e);
}

/* Hostile members: each a counted rejection of the whole body. */
static void state_v4_rejects(void **state)
{
	(void)state;
	static const struct {
		const char *tail;
		enum dask_error want;
	} cases[] = {
		{ ",\"erred\":[[\"a\",1]]", DASK_BAD_FIELD }, /* no left_out */
		{ ",\"erred\":[],\"erred_left_out\":0", DASK_BAD_FIELD }, /* no erred_since */
		{ ",\"erred\":[],\"erred_since\":-1,\"erred_left_out\":0", DASK_OUT_OF_RANGE },
		{ ",\"erred\":[],\"erred_since\":1e12,\"erred_left_out\":0", DASK_OUT_OF_RANGE },
		{ ",\"running\":[]", DASK_BAD_FIELD },
		{ ",\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_SHAPE }, /* no list */
		{ ",\"erred\":{},\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_SHAPE },
		{ ",\"erred\":[[\"a\"]],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_SHAPE },
		{ ",\"erred\":[[\"a\",1,2]],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_SHAPE },
		{ ",\"erred\":[\"a\"],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_SHAPE },
		{ ",\"erred\":[[\"a\",-1]],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_OUT_OF_RANGE },
		{ ",\"erred\":[[\"a\",1e16]],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_OUT_OF_RANGE },
		{ ",\"erred\":[[\"a\",1.5]],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_FIELD },
		{ ",\"erred\":[[\"a\",null]],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_FIELD },
		{ ",\"erred\":[[null,1]],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_FIELD },
		{ ",\"erred\":[[1,1]],\"erred_since\":1.7e9,\"erred_left_out\":0", DASK_BAD_FIELD },
		{ ",\"erred\":[],\"erred_since\":1.7e9,\"erred_left_out\":-1", DASK_OUT_OF_RANGE },
		{ ",\"running\":[],\"running_left_out\":1.5", DASK_BAD_FIELD },
		{ ",\"erred\":[],\"erred_since\":1.7e9,\"erred_left_out\":\"0\"", DASK_BAD_FIELD },
		{ ",\"running\":[[\"k\",\"p\",\"w\"]],\"running_left_out\":0", DASK_BAD_SHAPE },
		{ ",\"running\":[[\"k\",\"p\",\"w\",-1]],\"running_left_out\":0",
		  DASK_OUT_OF_RANGE },
		{ ",\"running\":[[\"k\",\"p\",\"w\",2e9]],\"running_left_out\":0",
		  DASK_OUT_OF_RANGE },
		{ ",\"running\":[[\"k\",\"p\",\"w\",\"1\"]],\"running_left_out\":0",
		  DASK_BAD_FIELD },
		{ ",\"running\":[[\"k\",null,\"w\",1]],\"running_left_out\":0", DASK_BAD_FIELD },
		{ ",\"running\":[[\"k\",\"p\",[],1]],\"running_left_out\":0", DASK_BAD_FIELD },
	};
	struct evs *e = evs_new();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char body[512];
		snprintf(body, sizeof(body), STATE_V4("%s"), cases[i].tail);
		enum dask_error got = state_of(e, body);
		if (got != cases[i].want)
			fail_msg("case %zu (%s): %s, want %s", i, cases[i].tail, dask_error_name(got),
				 dask_error_name(cases[i].want));
		assert_int_equal(e->sample.type, EV_NONE); /* never half an answer */
	}
	/* more than a sample holds: 65 running tasks; 257 prefixes */
	struct strbuf sb, body;
	strbuf_init(&sb);
	strbuf_init(&body);
	for (int list = 0; list < 2; list++) {
		strbuf_reset(&sb);
		strbuf_reset(&body);
		strbuf_puts(&sb, list ? ",\"erred_since\":1.7e9,\"erred_left_out\":0,\"erred\":["
				      : ",\"running_left_out\":0,\"running\":[");
		for (int i = 0; i < (list ? 257 : 65); i++)
			strbuf_appendf(&sb, list ? "%s[\"p%d\",1]" : "%s[\"k%d\",\"p\",\"w\",1]",
				       i ? "," : "", i);
		strbuf_puts(&sb, "]");
		strbuf_appendf(&body, STATE_V4("%s"), sb.data);
		assert_int_equal(state_of(e, body.data), DASK_TOO_MANY);
	}
	strbuf_free(&sb);
	strbuf_free(&body);
	evs_free(e);
}

/* A short body whose facts are not the kept ones is refused whole, never
 * read against other workers' facts; the cache is left for the poller to
 * drop. */
static void state_v3_stale_facts(void **state)
{
	(void)state;
	struct evs *e = evs_new();
	struct dask_facts f;
	dask_facts_init(&f);
	assert_int_equal(state_kept(e, NULL, STATE_V3_SHORT), DASK_STALE_FACTS);
	assert_int_equal(state_kept(e, &f, STATE_V3_SHORT), DASK_STALE_FACTS); /* none kept */
	assert_int_equal(e->sample.type, EV_NONE);
	assert_int_equal(state_kept(e, &f, STATE_V3), DASK_OK);
	static const char *const stale[] = {
		/* another token */
		STATE_V3_HEAD "\"facts_token\":\"a1b2.3\"}",
		/* another scheduler (a restart) */
		"{\"roastop_route\":3,\"scheduler_id\":\"Scheduler-2\",\"fine\":[],\"worker_state\":\""
		B64_ONE B64_ONE "\",\"facts_token\":\"a1b2.2\"}",
		/* as many workers as the facts kept, not one fewer */
		"{\"roastop_route\":3,\"scheduler_id\":\"Scheduler-1\",\"fine\":[],\"worker_state\":\""
		B64_ONE "\",\"facts_token\":\"a1b2.2\"}",
	};
	for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
		assert_int_equal(state_kept(e, &f, stale[i]), DASK_STALE_FACTS);
		assert_int_equal(e->sample.type, EV_NONE);
		assert_int_equal(e->fine.type, EV_NONE);
		assert_string_equal(f.token, "a1b2.2");
	}
	dask_facts_drop(&f);
	assert_null(f.token);
	assert_int_equal(state_kept(e, &f, STATE_V3_SHORT), DASK_STALE_FACTS);
	dask_facts_free(&f);
	evs_free(e);
}

/* Each body is bad in one way; none may leave a half-filled event. */
static void state_rejects(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		enum dask_error want;
	} cases[] = {
		{ "", DASK_BAD_JSON },
		{ "{\"roastop_route\":1,", DASK_BAD_JSON },
		{ "[1,2]", DASK_BAD_SHAPE },
		{ "{\"roastop_route\":6,\"workers\":[],\"fine\":[]}", DASK_BAD_SHAPE },
		/* version 3's token: missing, not URL-safe, too long; the short
		 * body with statuses, or with columns of no whole worker */
		{ "{\"roastop_route\":3,\"workers\":[],\"worker_status\":[],\"worker_state\":\"\","
		  "\"fine\":[]}",
		  DASK_BAD_FIELD },
		{ "{\"roastop_route\":3,\"facts_token\":\"a&b\",\"worker_state\":\"\",\"fine\":[]}",
		  DASK_BAD_FIELD },
		{ "{\"roastop_route\":3,\"facts_token\":\"\",\"worker_state\":\"\",\"fine\":[]}",
		  DASK_BAD_FIELD },
		{ "{\"roastop_route\":3,\"facts_token\":\"0123456789012345678901234567890123456789"
		  "012345678901234567890123456789\",\"worker_state\":\"\",\"fine\":[]}",
		  DASK_BAD_FIELD },
		{ "{\"roastop_route\":3,\"facts_token\":\"t\",\"worker_status\":[],"
		  "\"worker_state\":\"\",\"fine\":[]}",
		  DASK_BAD_SHAPE },
		{ "{\"roastop_route\":3,\"facts_token\":\"t\",\"worker_state\":\"AAAA\",\"fine\":[]}",
		  DASK_BAD_SHAPE },
		{ "{\"roastop_route\":3,\"facts_token\":\"t\",\"worker_state\":\"\",\"fine\":[]}",
		  DASK_STALE_FACTS },
		/* version 2's columns: missing, of other lengths, not base64, out of range */
		{ "{\"roastop_route\":2,\"workers\":[],\"fine\":[]}", DASK_BAD_SHAPE },
		{ "{\"roastop_route\":2,\"workers\":[[\"a\",\"w\",\"h\",1,1,1]],\"worker_status\":[],"
		  "\"worker_state\":\"" B64_ONE "\",\"fine\":[]}",
		  DASK_BAD_SHAPE },
		{ "{\"roastop_route\":2,\"workers\":[[\"a\",\"w\",\"h\",1,1,1]],\"worker_status\":[null],"
		  "\"worker_state\":\"" B64_ONE "AAAA\",\"fine\":[]}",
		  DASK_BAD_SHAPE },
		{ "{\"roastop_route\":2,\"workers\":[[\"a\",\"w\",\"h\",1,1]],\"worker_status\":[null],"
		  "\"worker_state\":\"" B64_ONE "\",\"fine\":[]}",
		  DASK_BAD_SHAPE },
		{ "{\"roastop_route\":2,\"workers\":[[null,\"w\",\"h\",1,1,1]],\"worker_status\":[null],"
		  "\"worker_state\":\"" B64_ONE "\",\"fine\":[]}",
		  DASK_BAD_FIELD },
		{ "{\"roastop_route\":2,\"workers\":[[\"a\",\"w\",\"h\",1,1,1]],\"worker_status\":[7],"
		  "\"worker_state\":\"" B64_ONE "\",\"fine\":[]}",
		  DASK_BAD_FIELD },
		{ "{\"roastop_route\":2,\"workers\":[[\"a\",\"w\",\"h\",1,1,1]],\"worker_status\":[null],"
		  "\"worker_state\":\"" B64_BAD "\",\"fine\":[]}",
		  DASK_BAD_FIELD },
		{ "{\"roastop_route\":2,\"workers\":[[\"a\",\"w\",\"h\",1,1,1]],\"worker_status\":[null],"
		  "\"worker_state\":\"" B64_HUGE "\",\"fine\":[]}",
		  DASK_OUT_OF_RANGE },
		/* a pid is whole: the recording holds it as an integer (a fuzz find) */
		{ "{\"roastop_route\":2,\"workers\":[[\"a\",\"w\",\"h\",1,1,1.5]],\"worker_status\":[null],"
		  "\"worker_state\":\"" B64_ONE "\",\"fine\":[]}",
		  DASK_OUT_OF_RANGE },
		{ "{\"roastop_route\":1,\"workers\":[{\"address\":\"a\",\"pid\":1.5}],\"fine\":[]}",
		  DASK_OUT_OF_RANGE },
		{ "{\"workers\":[],\"fine\":[]}", DASK_BAD_SHAPE },
		{ "{\"roastop_route\":1,\"workers\":{},\"fine\":[]}", DASK_BAD_SHAPE },
		{ "{\"roastop_route\":1,\"workers\":[{\"name\":\"w\"}],\"fine\":[]}", DASK_BAD_FIELD },
		{ "{\"roastop_route\":1,\"workers\":[{\"address\":\"a\",\"memory\":-1}],\"fine\":[]}",
		  DASK_OUT_OF_RANGE },
		{ "{\"roastop_route\":1,\"workers\":[{\"address\":\"a\",\"nthreads\":\"2\"}],\"fine\":[]}",
		  DASK_BAD_FIELD },
		{ "{\"roastop_route\":1,\"workers\":[{\"address\":7}],\"fine\":[]}", DASK_BAD_FIELD },
		{ "{\"roastop_route\":1,\"workers\":[{\"address\":\"\\ud800\"}],\"fine\":[]}",
		  DASK_BAD_JSON }, /* a lone surrogate */
		{ "{\"roastop_route\":1,\"workers\":[{\"address\":\"\xc3\x28\"}],\"fine\":[]}",
		  DASK_BAD_FIELD }, /* raw bytes that are not UTF-8 */
		{ "{\"roastop_route\":1,\"workers\":[],\"fine\":[[\"execute\",\"p\",\"a\",1]]}",
		  DASK_BAD_SHAPE },
		{ "{\"roastop_route\":1,\"workers\":[],\"fine\":[[\"execute\",\"p\",\"a\",\"s\",-2]]}",
		  DASK_OUT_OF_RANGE },
		{ "{\"roastop_route\":1,\"workers\":[],\"fine\":[],\"span\":{\"fine\":3}}",
		  DASK_BAD_SHAPE },
		{ "{\"roastop_route\":1,\"workers\":[{\"address\":\"a\",\"memory\":1e300}],\"fine\":[]}",
		  DASK_OUT_OF_RANGE },
		{ "{\"roastop_route\":1,\"workers\":[],\"fine\":[],\"tasks_done\":9,\"tasks_total\":8}",
		  DASK_BAD_FIELD }, /* more done than there are */
		{ "{\"roastop_route\":1,\"workers\":[],\"fine\":[],\"tasks_done\":3}",
		  DASK_BAD_FIELD }, /* progress without its total */
	};
	struct evs *e = evs_new();
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		enum dask_error got = state_of(e, cases[i].body);
		if (got != cases[i].want)
			fail_msg("case %zu: %s, want %s", i, dask_error_name(got),
				 dask_error_name(cases[i].want));
		assert_int_equal(e->sample.type, EV_NONE);
		assert_int_equal(e->fine.type, EV_NONE);
		assert_int_equal(e->span.type, EV_NONE);
	}
	evs_free(e);
}

static void state_string_limits(void **state)
{
	(void)state;
	size_t n = EVENT_MAX_STRING + 1;
	char *body = malloc(n + 128);
	int k = sprintf(body, "{\"roastop_route\":1,\"fine\":[],\"workers\":[{\"address\":\"");
	memset(body + k, 'a', n);
	strcpy(body + k + n, "\"}]}");
	struct evs *e = evs_new();
	assert_int_equal(state_of(e, body), DASK_BAD_FIELD);
	body[k + n - 1] = '"'; /* exactly the limit: accepted */
	strcpy(body + k + n - 1, "\"}]}");
	assert_int_equal(state_of(e, body), DASK_OK);
	free(body);
	evs_free(e);
}

struct endpoints {
	int n;
	int ports[4];
};

static void on_endpoint(void *ctx, const char *worker, const char *host, int port)
{
	struct endpoints *ep = ctx;
	assert_non_null(strstr(worker, "tcp://"));
	assert_string_equal(host, "127.0.0.1");
	if (ep->n < 4)
		ep->ports[ep->n] = port;
	ep->n++;
}

static void identity_idle_fixture(void **state)
{
	(void)state;
	size_t len;
	const char *text = slurp(FIX "identity-idle.json", &len);
	struct event ev;
	event_init(&ev);
	struct endpoints ep = { 0 };
	char err[160];
	assert_int_equal(dask_parse_identity(text, len, 3, &ev, on_endpoint, &ep, err, sizeof(err)),
			 DASK_OK);
	const struct ev_sample *s = &ev.u.sample;
	assert_string_equal(s->source, "identity");
	assert_int_equal(s->n_workers, 2);
	assert_near(s->total_threads.value, 2, 0);
	assert_int_equal(ep.n, 2);
	assert_true(ep.ports[0] > 0 && ep.ports[1] > 0 && ep.ports[0] != ep.ports[1]);
	for (size_t i = 0; i < 2; i++) {
		const struct worker_sample *w = &s->workers[i];
		assert_true(w->memory_bytes.valid && w->memory_bytes.value > 1e6);
		assert_true(w->cpu_percent.valid);
		assert_near(w->executing.value, 0, 0); /* empty task_counts */
		assert_near(w->spilled_bytes.value, 0, 0);
		assert_string_equal(w->status, "running");
	}
	event_free(&ev);
}

/* The body Dask sends with its 500 is HTML: rejected, not misread. */
static void identity_500_body(void **state)
{
	(void)state;
	size_t len;
	const char *text = slurp(FIX "identity-500.html", &len);
	assert_true(len > 0);
	struct event ev;
	event_init(&ev);
	char err[160];
	assert_int_equal(dask_parse_identity(text, len, 3, &ev, NULL, NULL, err, sizeof(err)),
			 DASK_BAD_JSON);
	assert_int_equal(ev.type, EV_NONE);
	const char *other = "{\"type\":\"Worker\",\"workers\":{}}";
	assert_int_equal(dask_parse_identity(other, strlen(other), 3, &ev, NULL, NULL, err,
					     sizeof(err)),
			 DASK_BAD_SHAPE);
	event_free(&ev);
}

static void scheduler_prom_fixture(void **state)
{
	(void)state;
	size_t len;
	const char *text = slurp(FIX "scheduler-metrics.txt", &len);
	struct event ev;
	event_init(&ev);
	struct prom_stats st;
	assert_int_equal(dask_parse_scheduler_prom(text, len, 4, &ev, &st), DASK_OK);
	assert_int_equal(ev.u.sample.worker_count, 2);
	assert_int_equal(ev.u.sample.n_workers, 0);
	assert_true(ev.u.sample.tasks_processing.valid);
	assert_int_equal(st.first_bad_line, 0);
	const char *none = "# nothing\nprocess_cpu_seconds_total 3\n";
	assert_int_equal(dask_parse_scheduler_prom(none, strlen(none), 4, &ev, &st), DASK_BAD_SHAPE);
	event_free(&ev);
}

/* The scheduler's per-prefix totals: an idle scheduler serves the families
 * without samples (measured, no prefix); the compute family comes first;
 * a prefix past the cap is counted once; a count that is not whole rejects
 * the totals; without the family nothing is measured. */
static void scheduler_prefix_totals(void **state)
{
	(void)state;
	size_t len;
	const char *text = slurp(FIX "scheduler-metrics.txt", &len);
	static struct dask_prefix_totals pt;
	struct prom_stats st = { 0 };
	assert_int_equal(dask_parse_prefix_prom(text, len, &pt, &st), DASK_OK);
	assert_true(pt.measured);
	assert_int_equal(pt.n, 0);
	const char *two =
		"dask_scheduler_tasks_compute_seconds_total{task_prefix_name=\"inc\"} 1.5\n"
		"dask_scheduler_prefix_state_totals_total{task_prefix_name=\"inc\",state=\"memory\"} 30\n"
		"dask_scheduler_prefix_state_totals_total{task_prefix_name=\"inc\",state=\"erred\"} 1\n"
		"dask_scheduler_prefix_state_totals_total{task_prefix_name=\"dbl\",state=\"memory\"} 4\n";
	assert_int_equal(dask_parse_prefix_prom(two, strlen(two), &pt, &st), DASK_OK);
	assert_int_equal(pt.n, 2);
	assert_string_equal(pt.p[0].name, "inc");
	assert_true(pt.p[0].done.value == 30 && pt.p[0].compute.value == 1.5);
	assert_true(pt.p[1].done.value == 4 && !pt.p[1].compute.valid);
	struct event ev;
	event_init(&ev);
	ev.type = EV_SAMPLE;
	assert_true(dask_prefix_attach(&pt, &ev));
	const struct ev_sample *s = &ev.u.sample;
	assert_int_equal(s->n_prefix_done, 2);
	assert_int_equal(s->n_prefix_compute, 1);
	assert_true(s->prefixes_left_out.valid && s->prefixes_left_out.value == 0);
	assert_true(event_sample_tasks_ok(s));
	event_free(&ev);
	const char *frac =
		"dask_scheduler_prefix_state_totals_total{task_prefix_name=\"x\",state=\"memory\"} 1.5\n";
	assert_int_equal(dask_parse_prefix_prom(frac, strlen(frac), &pt, &st), DASK_OUT_OF_RANGE);
	assert_false(pt.measured);
	const char *none = "# nothing\nprocess_cpu_seconds_total 3\n";
	assert_int_equal(dask_parse_prefix_prom(none, strlen(none), &pt, &st), DASK_BAD_SHAPE);
	const char *bytes = /* a name a recording could not hold (a fuzz find) */
		"dask_scheduler_prefix_state_totals_total{task_prefix_name=\"\xc3\x28\",state=\"memory\"} 1\n";
	assert_int_equal(dask_parse_prefix_prom(bytes, strlen(bytes), &pt, &st), DASK_OK);
	assert_true(pt.n == 0 && pt.left_out == 1);
	struct strbuf many;
	strbuf_init(&many);
	for (unsigned i = 0; i < EVENT_MAX_SECTIONS + 3; i++)
		strbuf_appendf(&many, "dask_scheduler_prefix_state_totals_total"
				      "{task_prefix_name=\"p%u\",state=\"memory\"} 1\n", i);
	assert_int_equal(dask_parse_prefix_prom(many.data, many.len, &pt, &st), DASK_OK);
	assert_int_equal(pt.n, EVENT_MAX_SECTIONS);
	assert_near(pt.left_out, 3, 0);
	strbuf_free(&many);
}

/* counts.json of two one-thread workers with 10 sleeps submitted
 * (captured from distributed 2026.8.0): processing 4 is one executing and
 * one queued on each worker. */
static void counts_fixture(void **state)
{
	(void)state;
	size_t len;
	const char *text = slurp(FIX "counts-busy.json", &len);
	struct event ev;
	event_init(&ev);
	char err[160];
	assert_int_equal(dask_parse_counts(text, len, 4, &ev, err, sizeof(err)), DASK_OK);
	assert_int_equal(ev.type, EV_SAMPLE);
	assert_true(ev.t == 4);
	assert_string_equal(ev.u.sample.source, "counts");
	assert_int_equal(ev.u.sample.worker_count, 2);
	assert_int_equal(ev.u.sample.n_workers, 0);
	assert_true(ev.u.sample.total_threads.valid && ev.u.sample.total_threads.value == 2);
	assert_true(ev.u.sample.tasks_processing.valid && ev.u.sample.tasks_processing.value == 4);
	event_free(&ev);
}

/* Rejected whole, with the reason: never a sample half-filled. */
static void counts_rejects(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		enum dask_error want;
	} cases[] = {
		{ "{\"cores\": 2}", DASK_BAD_SHAPE }, /* no worker count */
		{ "[1, 2]", DASK_BAD_SHAPE },
		{ "{\"workers\": \"2\"}", DASK_BAD_FIELD },
		{ "{\"workers\": -1}", DASK_OUT_OF_RANGE },
		{ "{\"workers\": 1e8}", DASK_OUT_OF_RANGE }, /* past RANGE_WORKERS_MAX */
		{ "{\"workers\": 1.5}", DASK_OUT_OF_RANGE }, /* a count is whole, not cut to 1 */
		{ "{\"workers\": 2, \"cores\": 1e10}", DASK_OUT_OF_RANGE },
		{ "{\"workers\": 2, \"processing\": 1e16}", DASK_OUT_OF_RANGE },
		{ "{\"workers\": 2, \"processing\": 1.5e300, \"cores\": 2}", DASK_OUT_OF_RANGE },
		{ "<html>500</html>", DASK_BAD_JSON },
	};
	struct event ev;
	event_init(&ev);
	char err[160];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *b = cases[i].body;
		assert_int_equal(dask_parse_counts(b, strlen(b), 1, &ev, err, sizeof(err)),
				 cases[i].want);
		assert_int_equal(ev.type, EV_NONE);
	}
	const char *ok = "{\"workers\": 0, \"cores\": null}"; /* null: not measured */
	assert_int_equal(dask_parse_counts(ok, strlen(ok), 1, &ev, err, sizeof(err)), DASK_OK);
	assert_false(ev.u.sample.total_threads.valid);
	assert_false(ev.u.sample.tasks_processing.valid);
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_append(&sb, "{\"workers\": 1, \"x\": [", 21);
	for (int i = 0; i < 200000; i++)
		strbuf_append(&sb, "0,", 2);
	strbuf_append(&sb, "0]}", 3);
	assert_int_equal(dask_parse_counts(sb.data, sb.len, 1, &ev, err, sizeof(err)),
			 DASK_OVER_BUDGET);
	strbuf_free(&sb);
	event_free(&ev);
}

static void worker_prom_fixture(void **state)
{
	(void)state;
	size_t len;
	const char *text = slurp(FIX "worker-metrics.txt", &len);
	struct dask_worker_prom w;
	struct prom_stats st;
	assert_int_equal(dask_parse_worker_prom(text, len, &w, &st), DASK_OK);
	/* managed 0 + unmanaged 5.2420608e+07, as the fixture's own lines say */
	assert_near(w.memory_bytes.value, 5.2420608e+07, 0);
	assert_near(w.threads.value, 1, 0);
	assert_true(w.cpu_seconds.valid && w.cpu_seconds.value > 0);
	assert_int_equal(dask_parse_worker_prom("x 1\n", 4, &w, &st), DASK_BAD_SHAPE);
}

/* The probe's body: eight worker states at 1e9 each, 8e9 in all, once cast
 * to uint32 (UBSan; 3,705,032,704 workers). Each value and the sum are
 * checked against the range table before the narrowing. */
static void scheduler_prom_ranges(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		enum dask_error want;
		uint32_t workers;
	} cases[] = {
		{ "dask_scheduler_workers{state=\"a\"} 1e9\ndask_scheduler_workers{state=\"b\"} 1e9\n"
		  "dask_scheduler_workers{state=\"c\"} 1e9\ndask_scheduler_workers{state=\"d\"} 1e9\n"
		  "dask_scheduler_workers{state=\"e\"} 1e9\ndask_scheduler_workers{state=\"f\"} 1e9\n"
		  "dask_scheduler_workers{state=\"g\"} 1e9\ndask_scheduler_workers{state=\"h\"} 1e9\n",
		  DASK_OUT_OF_RANGE, 0 },
		{ "dask_scheduler_workers{state=\"a\"} 6e6\ndask_scheduler_workers{state=\"b\"} 6e6\n",
		  DASK_OUT_OF_RANGE, 0 }, /* each in range, the sum not */
		{ "dask_scheduler_workers{state=\"a\"} 5e6\ndask_scheduler_workers{state=\"b\"} 5e6\n",
		  DASK_OK, 10000000 }, /* the table's maximum, exactly */
		{ "dask_scheduler_workers 4294967296\n", DASK_OUT_OF_RANGE, 0 },
		{ "dask_scheduler_workers -1\n", DASK_OUT_OF_RANGE, 0 },
		{ "dask_scheduler_workers NaN\n", DASK_OUT_OF_RANGE, 0 },
		{ "dask_scheduler_workers +Inf\n", DASK_OUT_OF_RANGE, 0 },
		{ "dask_scheduler_workers 3\ndask_scheduler_tasks{state=\"processing\"} 1e16\n",
		  DASK_OUT_OF_RANGE, 0 },
		{ "dask_scheduler_workers 3\nunread_family 1e300\nprocess_cpu_seconds_total NaN\n",
		  DASK_OK, 3 }, /* families roastop does not read are not its business */
	};
	struct event ev;
	event_init(&ev);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		struct prom_stats st;
		enum dask_error got = dask_parse_scheduler_prom(cases[i].text, strlen(cases[i].text),
								4, &ev, &st);
		if (got != cases[i].want)
			fail_msg("case %zu: %s, want %s", i, dask_error_name(got),
				 dask_error_name(cases[i].want));
		assert_int_equal(ev.type, got == DASK_OK ? EV_SAMPLE : EV_NONE);
		if (got == DASK_OK)
			assert_int_equal(ev.u.sample.worker_count, cases[i].workers);
	}
	event_free(&ev);
}

static void worker_prom_ranges(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		enum dask_error want;
	} cases[] = {
		{ "dask_worker_memory_bytes{type=\"managed\"} 6e14\n"
		  "dask_worker_memory_bytes{type=\"unmanaged\"} 6e14\n",
		  DASK_OUT_OF_RANGE }, /* each in range, the process memory not */
		{ "dask_worker_memory_bytes{type=\"managed\"} 4e14\n"
		  "dask_worker_memory_bytes{type=\"unmanaged\"} 6e14\n",
		  DASK_OK },
		{ "dask_worker_memory_bytes{type=\"spilled\"} 2e15\n", DASK_OUT_OF_RANGE },
		{ "dask_worker_memory_bytes{type=\"managed\"} NaN\n", DASK_OUT_OF_RANGE },
		{ "dask_worker_memory_bytes{type=\"managed\"} 1\ndask_worker_threads 5e6\n",
		  DASK_OUT_OF_RANGE },
		{ "dask_worker_memory_bytes{type=\"managed\"} 1\nprocess_cpu_seconds_total 1e13\n",
		  DASK_OUT_OF_RANGE },
		{ "dask_worker_memory_bytes{type=\"managed\"} 1\nprocess_cpu_seconds_total -1\n",
		  DASK_OUT_OF_RANGE },
		{ "dask_worker_memory_bytes{type=\"other\"} NaN\ndask_worker_threads 2\n", DASK_OK },
	};
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		struct dask_worker_prom w;
		struct prom_stats st;
		enum dask_error got = dask_parse_worker_prom(cases[i].text, strlen(cases[i].text), &w,
							     &st);
		if (got != cases[i].want)
			fail_msg("case %zu: %s, want %s", i, dask_error_name(got),
				 dask_error_name(cases[i].want));
		if (got != DASK_OK)
			assert_false(w.memory_bytes.valid || w.threads.valid || w.cpu_seconds.valid);
	}
}

/* A memory type the worker did not send is not measured, never 0; the
 * process memory (managed + unmanaged) needs both parts. */
static void worker_prom_missing_parts(void **state)
{
	(void)state;
	struct dask_worker_prom w;
	struct prom_stats st;
	const char *managed_only = "dask_worker_memory_bytes{type=\"managed\"} 1000\n";
	assert_int_equal(dask_parse_worker_prom(managed_only, strlen(managed_only), &w, &st), DASK_OK);
	assert_true(w.managed_bytes.valid && w.managed_bytes.value == 1000);
	assert_false(w.memory_bytes.valid);
	const char *other = "dask_worker_memory_bytes{type=\"other\"} 5\ndask_worker_threads 2\n";
	assert_int_equal(dask_parse_worker_prom(other, strlen(other), &w, &st), DASK_OK);
	assert_false(w.managed_bytes.valid || w.memory_bytes.valid);
	assert_true(w.threads.valid && w.threads.value == 2);
}

/* A state.json with one worker whose `key` is x (or, with key NULL, a fine
 * row of value x): what live makes of it. */
static enum dask_error state_with(struct evs *e, const char *key, double x)
{
	char body[512];
	if (key)
		snprintf(body, sizeof(body),
			 "{\"roastop_route\":1,\"workers\":[{\"address\":\"a\",\"%s\":%.17g}],"
			 "\"fine\":[]}",
			 key, x);
	else
		snprintf(body, sizeof(body),
			 "{\"roastop_route\":1,\"workers\":[],\"fine\":[[\"c\",\"p\",\"a\",\"u\","
			 "%.17g]]}",
			 x);
	return state_of(e, body);
}

/* An event through the recording's encoder and decoder: what replay makes
 * of what live recorded. */
static enum decode_error replayed(const struct event *ev)
{
	struct strbuf line;
	strbuf_init(&line);
	assert_int_equal(event_encode_json(ev, &line), 0);
	struct event back;
	event_init(&back);
	enum decode_error e = event_decode_json(line.data, line.len, &back);
	event_free(&back);
	strbuf_free(&line);
	return e;
}

/* The one-table property: at each quantity's maximum live accepts and the
 * recording of it replays; just past it live rejects, and a recording
 * holding such a value would be rejected too. */
static void live_and_replay_agree(void **state)
{
	(void)state;
	static const struct {
		const char *key; /* state.json worker key; NULL: a fine row's value */
		size_t off; /* the worker_sample member */
		enum range_qty q;
	} cases[] = {
		{ "nthreads", offsetof(struct worker_sample, nthreads), RANGE_NTHREADS },
		{ "memory", offsetof(struct worker_sample, memory_bytes), RANGE_BYTES },
		{ "memory_limit", offsetof(struct worker_sample, memory_limit), RANGE_BYTES },
		{ "managed_bytes", offsetof(struct worker_sample, managed_bytes), RANGE_BYTES },
		{ "spilled_bytes", offsetof(struct worker_sample, spilled_bytes), RANGE_BYTES },
		{ "cpu", offsetof(struct worker_sample, cpu_percent), RANGE_CPU_PERCENT },
		{ "executing", offsetof(struct worker_sample, executing), RANGE_TASKS },
		{ "processing", offsetof(struct worker_sample, processing), RANGE_TASKS },
		{ "pid", offsetof(struct worker_sample, pid), RANGE_PID },
		{ NULL, 0, RANGE_FINE },
	};
	struct evs *e = evs_new();
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		double hi = range_of(cases[i].q)->hi, past = nextafter(hi, INFINITY);
		assert_int_equal(state_with(e, cases[i].key, hi), DASK_OK);
		struct event *ev = cases[i].key ? &e->sample : &e->fine;
		if (replayed(ev) != DEC_OK)
			fail_msg("case %zu: live took %g, replay refused it", i, hi);
		if (cases[i].key)
			*(optnum *)((char *)&e->sample.u.sample.workers[0] + cases[i].off) =
				optnum_of(past);
		else
			e->fine.u.fine.rows[0].value = past;
		assert_int_equal(replayed(ev), DEC_OUT_OF_RANGE);
		assert_int_equal(state_with(e, cases[i].key, past), DASK_OUT_OF_RANGE);
	}
	evs_free(e);
}

static void url_join(void **state)
{
	(void)state;
	char buf[128];
	assert_true(httpc_url_join(buf, sizeof(buf), "http://h:8787", NULL, "json/identity.json"));
	assert_string_equal(buf, "http://h:8787/json/identity.json");
	assert_true(httpc_url_join(buf, sizeof(buf), "http://h:8787/", "/proxy/8787/", "/metrics"));
	assert_string_equal(buf, "http://h:8787/proxy/8787/metrics");
	assert_true(httpc_url_join(buf, sizeof(buf), "https://h/a//", "b", "c"));
	assert_string_equal(buf, "https://h/a/b/c");
	assert_false(httpc_url_join(buf, 10, "http://h:8787", NULL, "metrics"));
}

static void backoff(void **state)
{
	(void)state;
	assert_near(timer_backoff(0, DASK_BACKOFF_MAX), 0, 0);
	assert_near(timer_backoff(1, DASK_BACKOFF_MAX), 1, 0);
	assert_near(timer_backoff(2, DASK_BACKOFF_MAX), 2, 0);
	assert_near(timer_backoff(3, DASK_BACKOFF_MAX), 4, 0);
	assert_near(timer_backoff(6, DASK_BACKOFF_MAX), DASK_BACKOFF_MAX, 0);
	assert_near(timer_backoff(1000, DASK_BACKOFF_MAX), DASK_BACKOFF_MAX, 0);
}

/* ---- the parse budget ------------------------------------------------- */

/* The probe's body: few bytes a value, no workers; refused before a tree. */
static void budget_refuses_amplification(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "{\"roastop_route\":1,\"workers\":[],\"fine\":[],\"x\":[0");
	for (int i = 0; i < 500000; i++)
		strbuf_puts(&sb, ",0");
	strbuf_puts(&sb, "]}");
	struct evs *e = evs_new();
	char err[160];
	assert_int_equal(dask_parse_state(sb.data, sb.len, 1.0, &e->sample, &e->fine, &e->span,
					  err, sizeof(err)),
			 DASK_OVER_BUDGET);
	assert_non_null(strstr(err, "for 0 workers"));
	assert_int_equal(e->sample.type, EV_NONE);
	assert_string_equal(dask_error_name(DASK_OVER_BUDGET), "over_budget");
	evs_free(e);
	strbuf_free(&sb);
}

/* n state.json workers of the route's shape, then `pad` extra values. */
static void make_state(struct strbuf *sb, int n, int pad, const char *pad_value)
{
	strbuf_reset(sb);
	strbuf_puts(sb, "{\"roastop_route\": 1, \"workers\": [");
	for (int i = 0; i < n; i++)
		strbuf_appendf(sb, "%s{\"address\": \"tcp://10.1.%d.%d:4000\", \"name\": \"w-%d\", "
				   "\"host\": \"10.1.%d.%d\", \"nthreads\": 4, \"memory_limit\": 8589934592, "
				   "\"memory\": 1000000, \"managed_bytes\": 20, \"spilled_bytes\": 0, "
				   "\"cpu\": 90.5, \"executing\": 4, \"processing\": 7, \"status\": "
				   "\"running\", \"last_seen\": 1.5}",
			       i ? ", " : "", i / 250, i % 250, i, i / 250, i % 250);
	strbuf_puts(sb, "], \"fine\": [], \"x\": [");
	for (int i = 0; i < pad; i++)
		strbuf_appendf(sb, "%s%s", i ? "," : "", pad_value);
	strbuf_puts(sb, "]}");
}

/* Big legitimate bodies fit; the budget grows with the workers declared,
 * and the arena's byte cap stops what the count of values lets through. */
static void budget_scales_with_workers(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	struct evs *e = evs_new();
	char err[160];
	make_state(&sb, 20000, 0, "");
	assert_int_equal(dask_parse_state(sb.data, sb.len, 1.0, &e->sample, &e->fine, &e->span,
					  err, sizeof(err)),
			 DASK_OK);
	assert_int_equal(e->sample.u.sample.n_workers, 20000);
	make_state(&sb, 100, DASK_NODES_BASE + 100 * DASK_NODES_PER_WORKER, "0");
	assert_int_equal(dask_parse_state(sb.data, sb.len, 1.0, &e->sample, &e->fine, &e->span,
					  err, sizeof(err)),
			 DASK_OVER_BUDGET);
	make_state(&sb, 3000, 700000, "\"a\""); /* within the count, over the bytes */
	assert_int_equal(dask_parse_state(sb.data, sb.len, 1.0, &e->sample, &e->fine, &e->span,
					  err, sizeof(err)),
			 DASK_OVER_BUDGET);
	assert_non_null(strstr(err, "tree over"));
	evs_free(e);
	strbuf_free(&sb);
}

/* The pre-scan on bodies cut inside a string, in buffers of their exact
 * size (ASan sees a read past the end): rejected, never read beyond. */
static void budget_scan_stays_in_the_body(void **state)
{
	(void)state;
	static const char *const cut[] = { "{\"abcde\\", "{\"workers\\", "{\"workers",
					   "{\"workers\"", "\\", "\"" };
	struct evs *e = evs_new();
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		size_t n = strlen(cut[i]);
		char *body = malloc(n);
		memcpy(body, cut[i], n);
		assert_int_equal(dask_parse_state(body, n, 1.0, &e->sample, &e->fine, &e->span, NULL,
						  0),
				 DASK_BAD_JSON);
		free(body);
	}
	evs_free(e);
}

static void sitemap_paths(void **state)
{
	(void)state;
	int id, prom, counts;
	const char *s = "{\"paths\": [\"/health\", \"/json/identity.json\", \"/sitemap.json\"]}";
	dask_parse_sitemap(s, strlen(s), &id, &prom, &counts);
	assert_int_equal(id, 1);
	assert_int_equal(prom, 0);
	assert_int_equal(counts, 0);
	const char *c = "{\"paths\": [\"/json/counts.json\", \"/metrics\"]}";
	dask_parse_sitemap(c, strlen(c), &id, &prom, &counts);
	assert_true(id == 0 && prom == 1 && counts == 1);
	dask_parse_sitemap("<html>", 6, &id, &prom, &counts);
	assert_int_equal(id, -1);
	assert_int_equal(prom, -1);
	assert_int_equal(counts, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(state_busy_fixture),
		cmocka_unit_test(state_idle_fixture),
		cmocka_unit_test(state_without_span),
		cmocka_unit_test(state_v2_reads_as_v1),
		cmocka_unit_test(state_v3_reads_as_v1),
		cmocka_unit_test(state_v3_stale_facts),
		cmocka_unit_test(state_rejects),
		cmocka_unit_test(state_string_limits),
		cmocka_unit_test(identity_idle_fixture),
		cmocka_unit_test(identity_500_body),
		cmocka_unit_test(scheduler_prom_fixture),
		cmocka_unit_test(worker_prom_fixture),
		cmocka_unit_test(scheduler_prom_ranges),
		cmocka_unit_test(worker_prom_ranges),
		cmocka_unit_test(worker_prom_missing_parts),
		cmocka_unit_test(live_and_replay_agree),
		cmocka_unit_test(url_join),
		cmocka_unit_test(backoff),
		cmocka_unit_test(budget_refuses_amplification),
		cmocka_unit_test(budget_scales_with_workers),
		cmocka_unit_test(budget_scan_stays_in_the_body),
		cmocka_unit_test(sitemap_paths),
		cmocka_unit_test(state_v4_tasks),
		cmocka_unit_test(state_occupancy),
		cmocka_unit_test(scheduler_prefix_totals),
		cmocka_unit_test(state_v4_rejects),
		cmocka_unit_test(counts_fixture),
		cmocka_unit_test(counts_rejects),
	};
	return cmocka_run_group_tests_name("dask_json", tests, NULL, NULL);
}
