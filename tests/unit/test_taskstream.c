/* The task stream's message parser (shapes captured from distributed's
 * /eventstream), dask's key_split ported, and the tasks model: counts,
 * erred, transfers, the prefix cap, the straggler rule. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "roastop/metrics_tasks.h"
#include "roastop/task_figures.h"
#include "roastop/tasks.h"
#include "roastop/taskstream.h"

/* The figures every output reads (task_figures.h), from the model. */
static const struct task_figures *figs(const struct tasks *t)
{
	static struct task_figures f;
	task_figures_compute(t, &f);
	return &f;
}

static const char COMPUTE[] =
	"{\"key\": [\"sum-082f3fca5b79e16de971fafa73b5ddf1\", 0, 1], \"name\": \"transition\", "
	"\"color\": \"#FDE724\", \"worker\": \"tcp://127.0.0.1:40877\", \"nbytes\": 8, "
	"\"startstops\": [{\"action\": \"compute\", \"start\": 1795561108.2310672, \"stop\": "
	"1795561108.2317767}], \"status\": \"OK\", \"action\": \"compute\", \"start\": "
	"1795561108.2310672, \"stop\": 1795561108.2317767}";

static void parses_a_compute(void **state)
{
	(void)state;
	struct event ev;
	event_init(&ev);
	assert_int_equal(taskstream_parse(COMPUTE, sizeof(COMPUTE) - 1, &ev), TSP_TASK);
	assert_int_equal(ev.type, EV_TASK);
	assert_string_equal(ev.u.task.prefix, "sum");
	assert_string_equal(ev.u.task.key, "[\"sum-082f3fca5b79e16de971fafa73b5ddf1\",0,1]");
	assert_string_equal(ev.u.task.worker, "tcp://127.0.0.1:40877");
	assert_string_equal(ev.u.task.action, "compute");
	assert_string_equal(ev.u.task.status, "OK");
	assert_near(ev.u.task.stop.value - ev.u.task.start.value, 0.0007095, 1e-6);
	event_free(&ev);
}

static enum taskstream_result parse(const char *s)
{
	struct event ev;
	event_init(&ev);
	enum taskstream_result r = taskstream_parse(s, strlen(s), &ev);
	if (r != TSP_TASK)
		assert_int_equal(ev.type, EV_NONE); /* nothing left half-filled */
	event_free(&ev);
	return r;
}

/* The route's row ([key, worker, status, action, start, stop]) makes the
 * event the stream's message makes: one construction for both sources. */
static void route_row_as_the_stream(void **state)
{
	(void)state;
	struct event a, b;
	event_init(&a);
	event_init(&b);
	assert_int_equal(taskstream_parse(COMPUTE, sizeof(COMPUTE) - 1, &a), TSP_TASK);
	cJSON *row = cJSON_Parse("[[\"sum-082f3fca5b79e16de971fafa73b5ddf1\",0,1],"
				 "\"tcp://127.0.0.1:40877\",\"OK\",\"compute\","
				 "1795561108.2310672,1795561108.2317767]");
	assert_non_null(row);
	const cJSON *k = row->child;
	const struct taskstream_fields f = { .key = k, .worker = k->next,
					     .status = k->next->next,
					     .action = k->next->next->next,
					     .start = k->next->next->next->next,
					     .stop = k->next->next->next->next->next };
	assert_int_equal(taskstream_task(&b, &f), TSP_TASK);
	assert_string_equal(a.u.task.key, b.u.task.key);
	assert_string_equal(a.u.task.prefix, b.u.task.prefix);
	assert_string_equal(a.u.task.worker, b.u.task.worker);
	assert_string_equal(a.u.task.action, b.u.task.action);
	assert_string_equal(a.u.task.status, b.u.task.status);
	assert_true(a.u.task.start.value == b.u.task.start.value);
	assert_true(a.u.task.stop.value == b.u.task.stop.value);
	event_reset(&b); /* stop before start: refused as the stream's would be */
	const struct taskstream_fields back = { .key = k, .action = f.action, .start = f.stop,
						.stop = f.start };
	assert_int_equal(taskstream_task(&b, &back), TSP_ERR_RANGE);
	cJSON_Delete(row);
	event_free(&a);
	event_free(&b);
}

static void rejects_bad_shapes(void **state)
{
	(void)state;
	assert_int_equal(parse("{\"worker\": \"w\", \"name\": \"add_worker\"}"), TSP_OTHER);
	assert_int_equal(parse("not json"), TSP_ERR_JSON);
	assert_int_equal(parse("[1, 2]"), TSP_ERR_JSON);
	assert_int_equal(parse("{\"key\": \"x\"}"), TSP_ERR_SHAPE);
	assert_int_equal(parse("{\"name\": \"transition\", \"key\": 5, \"action\": \"compute\", "
			       "\"start\": 1, \"stop\": 2}"),
			 TSP_ERR_SHAPE);
	assert_int_equal(parse("{\"name\": \"transition\", \"key\": \"x-1\", \"action\": "
			       "\"compute\", \"start\": 1}"),
			 TSP_ERR_SHAPE);
	assert_int_equal(parse("{\"name\": \"transition\", \"key\": \"x-1\", \"action\": "
			       "\"compute\", \"start\": 2, \"stop\": 1}"),
			 TSP_ERR_RANGE);
	assert_int_equal(parse("{\"name\": \"transition\", \"key\": \"x-1\", \"action\": "
			       "\"compute\", \"start\": -5, \"stop\": 1}"),
			 TSP_ERR_RANGE);
}

static void key_split_as_dask(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "x", "x" },
		{ "x-1", "x" },
		{ "x-1-2-3", "x" },
		{ "('x-2', 1)", "x" },
		{ "('x', 1)", "x" },
		{ "hello-world-1", "hello-world" },
		{ "ae05086432ca935f6eba409a8ecd4896", "data" },
		{ "<module.submodule.myclass object at 0xdaf372", "myclass" },
		{ "x-abcdefab", "x" },
		{ "_(x)", "x" },
		{ "sum-aggregate-finalize-hlgfinalizecompute-2477cc2b3f3e41dbac679af8f2f52002",
		  "sum-aggregate-finalize-hlgfinalizecompute" },
		{ "", "Other" },
	};
	char out[TASKSTREAM_PREFIX_LEN];
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		taskstream_key_split(cases[i][0], out, sizeof(out));
		assert_string_equal(out, cases[i][1]);
	}
}

static struct ev_task task(const char *prefix, const char *action, double sec, const char *st)
{
	return (struct ev_task){ .key = prefix, .prefix = prefix, .worker = "tcp://w:1",
				 .action = action, .status = st, .start = optnum_of(100),
				 .stop = optnum_of(100 + sec) };
}

static void model_counts_and_straggler(void **state)
{
	(void)state;
	struct tasks t;
	tasks_init(&t);
	for (int i = 0; i < 20; i++) {
		struct ev_task a = task("inc", "compute", 0.01, "OK");
		assert_true(tasks_apply(&t, &a, 0));
	}
	struct ev_task tr = task("inc", "transfer", 0.5, "OK");
	struct ev_task bad = task("inc", "compute", 0.01, "error");
	struct ev_task slow = task("nap", "compute", 3.0, "OK");
	tasks_apply(&t, &tr, 0);
	tasks_apply(&t, &bad, 0);
	tasks_apply(&t, &slow, 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.prefixes[0].count, 21);
	assert_int_equal(t.prefixes[0].erred, 1);
	assert_int_equal(t.prefixes[0].transfers, 1);
	assert_near(t.prefixes[0].transfer_s, 0.5, 1e-9);
	assert_int_equal(t.count, 22);
	assert_int_equal(tasks_straggler_count(&t), 1); /* judged against all: one prefix of one */
	assert_string_equal(tasks_straggler_at(&t, 0)->prefix, "nap");
	assert_string_equal(tasks_straggler_at(&t, 0)->worker, "tcp://w:1");
	assert_false(tasks_straggler_after(&t, &t.prefixes[1]).valid);
	tasks_free(&t);
}

static void model_caps_prefixes(void **state)
{
	(void)state;
	struct tasks t;
	tasks_init(&t);
	char name[32];
	for (unsigned i = 0; i < TASKS_MAX_PREFIXES + 10; i++) {
		snprintf(name, sizeof(name), "p%u", i);
		struct ev_task a = task(name, "compute", 0.01, "OK");
		tasks_apply(&t, &a, 0);
	}
	assert_int_equal(t.n, TASKS_MAX_PREFIXES);
	assert_int_equal(t.prefix_overflow, 10);
	assert_int_equal(t.count, TASKS_MAX_PREFIXES + 10); /* the totals hold them all */
	tasks_free(&t);
}

static void sample_with(struct ev_sample *s, struct kv_num *erred, size_t n, double left_out)
{
	memset(s, 0, sizeof(*s));
	s->erred = erred;
	s->n_erred = n;
	s->erred_left_out = optnum_of(left_out);
	s->erred_since = optnum_of(1000); /* one install throughout */
}

static void totals_with(struct ev_sample *s, struct kv_num *done, size_t n_done,
			struct kv_num *compute, size_t n_compute)
{
	memset(s, 0, sizeof(*s));
	s->prefix_done = done;
	s->n_prefix_done = n_done;
	s->prefix_compute = compute;
	s->n_prefix_compute = n_compute;
	s->prefixes_left_out = optnum_of(0);
}

/* The scheduler's per-prefix totals (a watch without the route): the first
 * list is a base (its tasks finished before the watch); then each prefix's
 * growth counts as finished tasks and compute seconds, a prefix new to the
 * list from 0, a total that fell (a new scheduler) from 0. Nothing per task
 * is known of them: quantiles and stragglers stay null, never 0. */
static void model_counts_from_the_totals(void **state)
{
	(void)state;
	struct tasks t;
	tasks_init(&t);
	struct ev_sample s;
	struct kv_num d0[] = { { "inc", 40 } }, c0[] = { { "inc", 2.0 } };
	totals_with(&s, d0, 1, c0, 1);
	tasks_apply_sample(&t, &s);
	assert_true(t.route.totals_measured);
	assert_int_equal(t.count, 0);
	assert_int_equal(t.n, 0);
	struct kv_num d1[] = { { "inc", 70 }, { "dbl", 5 } }, c1[] = { { "inc", 3.5 }, { "dbl", 1 } };
	totals_with(&s, d1, 2, c1, 2);
	tasks_apply_sample(&t, &s);
	assert_int_equal(t.count, 35);
	assert_int_equal(t.from_totals, 35);
	assert_string_equal(t.prefixes[0].name, "inc");
	assert_int_equal(t.prefixes[0].count, 30);
	const struct task_prefix_figures *f = &figs(&t)->prefix[0];
	assert_near(f->compute_seconds.value, 1.5, 1e-12);
	assert_false(f->compute_p50.valid || f->compute_max.valid || f->straggler_after.valid);
	assert_false(f->stragglers.valid || f->transfers.valid || f->erred.valid);
	assert_int_equal(t.prefixes[1].count, 5);
	struct kv_num d2[] = { { "inc", 4 } };
	totals_with(&s, d2, 1, NULL, 0); /* a new scheduler: from 0 */
	tasks_apply_sample(&t, &s);
	assert_int_equal(t.prefixes[0].count, 34);
	struct tasks next;
	tasks_init(&next);
	tasks_route_inherit(&next, &t); /* the next run counts from the last list */
	struct kv_num d3[] = { { "inc", 6 } };
	totals_with(&s, d3, 1, NULL, 0);
	tasks_apply_sample(&next, &s);
	assert_int_equal(next.count, 2);
	tasks_free(&next);
	tasks_free(&t);
}

/* The route's failed tasks (counted since its install, the run's start):
 * null until a sample carries them; then each prefix's growth from list to
 * list, from 0 for a prefix the list before did not name (a roastop that
 * first polls mid-run counts the run's failures so far); a count that falls
 * was started again (a next run's install) and counts from 0. A prefix
 * gets a row only once it grew; a list past the kept length counts the
 * rest as left out, never again at every sample. */
static void model_erred_from_the_route(void **state)
{
	(void)state;
	struct tasks t;
	tasks_init(&t);
	struct ev_sample s = { 0 };
	tasks_apply_sample(&t, &s); /* another source's sample: nothing measured */
	assert_false(figs(&t)->erred.valid);
	assert_false(t.route.running_measured);
	sample_with(&s, NULL, 0, 0);
	tasks_apply_sample(&t, &s);
	assert_true(figs(&t)->erred.valid);
	assert_near(figs(&t)->erred.value, 0, 0); /* measured: none failed */
	assert_int_equal(t.n, 0);
	struct kv_num first[] = { { "old", 5 } };
	sample_with(&s, first, 1, 0);
	tasks_apply_sample(&t, &s);
	assert_near(figs(&t)->erred.value, 5, 0);
	struct kv_num later[] = { { "old", 7 }, { "boom", 3 } };
	sample_with(&s, later, 2, 0);
	tasks_apply_sample(&t, &s);
	assert_string_equal(t.prefixes[0].name, "old");
	assert_near(figs(&t)->prefix[0].erred.value, 7, 0);
	assert_string_equal(t.prefixes[1].name, "boom");
	assert_near(figs(&t)->prefix[1].erred.value, 3, 0);
	assert_near(figs(&t)->erred.value, 10, 0);
	struct kv_num again[] = { { "boom", 1 } };
	sample_with(&s, again, 1, 0); /* started again: a next install */
	tasks_apply_sample(&t, &s);
	assert_near(figs(&t)->prefix[1].erred.value, 4, 0);
	assert_near(figs(&t)->prefix[0].erred.value, 7, 0);
	struct kv_num many[TASKS_ERRED_SEEN + 2];
	char names[TASKS_ERRED_SEEN + 2][8];
	for (size_t i = 0; i < TASKS_ERRED_SEEN + 2; i++) {
		snprintf(names[i], sizeof(names[i]), "p%zu", i);
		many[i] = (struct kv_num){ names[i], 1 };
	}
	for (int k = 0; k < 3; k++) { /* the same list three times: no growth after the first */
		sample_with(&s, many, TASKS_ERRED_SEEN + 2, 0);
		tasks_apply_sample(&t, &s);
	}
	assert_near(figs(&t)->erred.value, 11 + TASKS_ERRED_SEEN, 0);
	assert_int_equal(t.route.erred_left_out, 2);
	tasks_free(&t);
}

/* A run's start clears the model but not the route's latest list, so a
 * failure between the start and the run's first poll is the run's (a
 * processor that raises on every chunk fails within the first second), and
 * prefixes that failed before the start get no row; the run's collector
 * installs the route again (a new erred_since), whose counts start from 0. */
static void model_erred_across_a_clear(void **state)
{
	(void)state;
	struct tasks t;
	tasks_init(&t);
	struct ev_sample s;
	struct kv_num before[] = { { "earlier", 4 } };
	sample_with(&s, before, 1, 0);
	tasks_apply_sample(&t, &s);
	tasks_clear(&t);
	assert_false(figs(&t)->erred.valid); /* the run's: none polled yet */
	assert_int_equal(t.n, 0);
	struct kv_num first_poll[] = { { "earlier", 4 }, { "process", 3 } };
	sample_with(&s, first_poll, 2, 0);
	tasks_apply_sample(&t, &s);
	assert_near(figs(&t)->erred.value, 3, 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.prefixes[0].name, "process");
	struct kv_num installed[] = { { "process", 1 } };
	sample_with(&s, installed, 1, 0);
	s.erred_since = optnum_of(2000); /* installed again: counted from there */
	assert_false(tasks_route_own(&t, &s));
	tasks_apply_sample(&t, &s);
	assert_true(tasks_route_own(&t, &s));
	assert_near(figs(&t)->erred.value, 4, 0);
	tasks_free(&t);
}

/* The route's running tasks: count, the listed ones, a running straggler
 * against its prefix's finished tasks; a sample without them: null again. */
static void model_running_from_the_route(void **state)
{
	(void)state;
	struct tasks t;
	tasks_init(&t);
	for (int i = 0; i < 20; i++) {
		struct ev_task k = { .key = "nap", .prefix = "nap", .worker = "w", .action = "compute",
				     .status = "OK", .start = optnum_of(100), .stop = optnum_of(101) };
		tasks_apply(&t, &k, 101);
	}
	struct task_running run[] = { { "k1", "nap", "tcp://a:1", 30 }, { "k2", "nap", "w", 0.5 } };
	struct ev_sample s = { .running = run, .n_running = 2, .running_left_out = optnum_of(3) };
	tasks_apply_sample(&t, &s);
	assert_true(t.route.running_measured);
	assert_int_equal(t.route.running_count, 5);
	assert_int_equal(t.route.n_running, 2);
	assert_string_equal(t.route.running[0].worker, "tcp://a:1");
	assert_true(figs(&t)->running_straggler[0]);
	assert_false(figs(&t)->running_straggler[1]);
	optnum n = figs(&t)->prefix[0].in_flight;
	assert_true(n.valid && n.value == 2 && figs(&t)->prefix[0].in_flight_partial);
	tasks_route_lost(&t); /* the scheduler lost: not the last list seen */
	assert_false(figs(&t)->prefix[0].in_flight.valid);
	tasks_apply_sample(&t, &s);
	assert_true(t.route.running_measured);
	memset(&s, 0, sizeof(s));
	tasks_apply_sample(&t, &s);
	assert_false(t.route.running_measured);
	assert_false(figs(&t)->prefix[0].in_flight.valid);
	tasks_free(&t);
}

/* The feed's counters say the stream fell behind the scheduler's count:
 * the block and the summary give the count as a lower bound, with why;
 * without them, nothing of it. */
static void behind_stream_writes_a_lower_bound(void **state)
{
	(void)state;
	struct tasks t;
	tasks_init(&t);
	for (int i = 0; i < 12; i++) {
		struct ev_task a = task("inc", "compute", 0.01, "OK");
		tasks_apply(&t, &a, 0);
	}
	struct source_typed feed = { .role = SOURCE_TASK_STREAM, .connects = 2 };
	for (int behind = 0; behind < 2; behind++) {
		feed.behind = behind ? 1 : 0;
		feed.missed = behind ? 30 : 0;
		struct strbuf js;
		strbuf_init(&js);
		struct jsonw w;
		jsonw_init(&w, &js);
		jsonw_object(&w, NULL);
		metrics_tasks_json(&w, &t, figs(&t), &feed);
		jsonw_end(&w, '}');
		cJSON *root = cJSON_Parse(js.data);
		strbuf_free(&js);
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "tasks");
		assert_near(cJSON_GetObjectItemCaseSensitive(o, "count")->valuedouble, 12, 0);
		const cJSON *lb = cJSON_GetObjectItemCaseSensitive(o, "count_lower_bound");
		struct strbuf sb;
		strbuf_init(&sb);
		metrics_tasks_text(&t, figs(&t), &feed, &sb);
		if (behind) {
			assert_true(cJSON_IsTrue(lb));
			assert_near(cJSON_GetObjectItemCaseSensitive(o, "missed_at_least")->valuedouble,
				    30, 0);
			assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(o, "count_reason")
						       ->valuestring, "replaced or removed its plugin"));
			assert_non_null(strstr(sb.data, "(/eventstream): at least 12 tasks"));
			assert_non_null(strstr(sb.data, "missed at least 30 finished tasks"));
		} else {
			assert_null(lb);
			assert_null(strstr(sb.data, "at least"));
		}
		strbuf_free(&sb);
		cJSON_Delete(root);
	}
	tasks_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_a_compute),
		cmocka_unit_test(route_row_as_the_stream),
		cmocka_unit_test(rejects_bad_shapes),
		cmocka_unit_test(key_split_as_dask),
		cmocka_unit_test(model_counts_and_straggler),
		cmocka_unit_test(model_caps_prefixes),
		cmocka_unit_test(model_erred_from_the_route),
		cmocka_unit_test(model_counts_from_the_totals),
		cmocka_unit_test(model_erred_across_a_clear),
		cmocka_unit_test(model_running_from_the_route),
		cmocka_unit_test(behind_stream_writes_a_lower_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
