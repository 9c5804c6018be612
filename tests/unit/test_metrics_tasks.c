/* metrics.json's roastop.tasks block and summary.txt's "Dask tasks"
 * section: both from one struct task_figures, so they say the same numbers;
 * null and n/a for what was not measured. */
#include "test_util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "roastop/metrics_tasks.h"

static struct tasks T;
static struct task_figures F;

static void add(const char *prefix, double seconds, const char *status)
{
	struct ev_task t = { .key = prefix, .prefix = prefix, .worker = "tcp://w:1",
			     .action = "compute", .status = status, .start = optnum_of(100),
			     .stop = optnum_of(100 + seconds) };
	tasks_apply(&T, &t, 0);
}

/* 12 tasks of "sum" (one erred, one slow: a straggler), 2 of "load"; the
 * route lists 2 failed "sum", and 3 running tasks of which 2 are listed. */
static void build(void)
{
	tasks_init(&T);
	for (int i = 0; i < 11; i++)
		add("sum", 0.5, i ? "OK" : "error");
	add("sum", 9.0, "OK");
	add("load", 0.25, "OK");
	add("load", 0.75, "OK");
	struct kv_num erred[] = { { "sum", 2 } };
	struct task_running run[] = { { "sum-k", "sum", "tcp://w:2", 30 },
				      { "load-k", "load", "tcp://w:3", 0.1 } };
	struct ev_sample s = { .erred = erred, .n_erred = 1, .erred_left_out = optnum_of(0),
			       .erred_since = optnum_of(1), .running = run, .n_running = 2,
			       .running_left_out = optnum_of(1) };
	tasks_apply_sample(&T, &s);
	task_figures_compute(&T, &F);
}

static cJSON *block(const struct source_typed *feed)
{
	struct strbuf sb;
	strbuf_init(&sb);
	struct jsonw w;
	jsonw_init(&w, &sb);
	jsonw_object(&w, NULL);
	metrics_tasks_json(&w, &T, &F, feed);
	jsonw_end(&w, '}');
	cJSON *o = cJSON_Parse(sb.data);
	assert_non_null(o);
	strbuf_free(&sb);
	return o;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static void json_and_text_read_the_figures(void **state)
{
	(void)state;
	build();
	cJSON *o = block(NULL);
	const cJSON *t = cJSON_GetObjectItem(o, "tasks");
	assert_near(num(t, "count"), 14, 0);
	assert_near(num(t, "erred"), 2, 0); /* the route's 2, the stream's 1: the larger */
	assert_near(num(t, "straggler_count"), 1, 0);
	const cJSON *fl = cJSON_GetObjectItem(t, "in_flight");
	assert_near(num(fl, "count"), 3, 0);
	assert_near(num(fl, "stragglers"), 1, 0); /* sum-k, 30 s */
	const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "prefixes"), 0);
	assert_string_equal(cJSON_GetObjectItem(p, "prefix")->valuestring, "sum");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(p, "in_flight"))); /* a lower bound */
	assert_near(num(p, "compute_max_seconds"), F.prefix[0].compute_max.value, 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(p, "transfer_seconds"))); /* none */
	struct strbuf sb;
	strbuf_init(&sb);
	metrics_tasks_text(&T, &F, NULL, &sb);
	assert_non_null(strstr(sb.data, "14 tasks, 2 erred, 3 in flight, 1 stragglers"));
	assert_non_null(strstr(sb.data, "  sum                                      12      2    n/a"));
	assert_non_null(strstr(sb.data, "oldest in flight: sum-k on tcp://w:2, 30.0s (straggler)"));
	assert_non_null(strstr(sb.data, "latest straggler: sum on tcp://w:1, 9.0s"));
	strbuf_free(&sb);
	cJSON_Delete(o);
	tasks_free(&T);
}

/* A stream that never connected measured nothing: null, n/a. */
static void never_connected_is_null(void **state)
{
	(void)state;
	tasks_init(&T);
	task_figures_compute(&T, &F);
	struct source_typed feed = { .role = SOURCE_TASK_STREAM, .connects = 0 };
	cJSON *o = block(&feed);
	const cJSON *t = cJSON_GetObjectItem(o, "tasks");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(t, "count")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(t, "erred")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(t, "in_flight")));
	assert_non_null(cJSON_GetObjectItem(t, "in_flight_reason"));
	struct strbuf sb;
	strbuf_init(&sb);
	metrics_tasks_text(&T, &F, &feed, &sb);
	assert_string_equal(sb.data, "\nDask tasks (/eventstream): n/a (the stream never connected)\n");
	strbuf_free(&sb);
	cJSON_Delete(o);
	tasks_free(&T);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_and_text_read_the_figures),
		cmocka_unit_test(never_connected_is_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
