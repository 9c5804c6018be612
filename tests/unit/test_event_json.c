#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "roastop/event_json.h"

bool event_json_tables_sorted(void);

static enum decode_error decode(const char *text, struct event *ev)
{
	return event_decode_json(text, strlen(text), ev);
}

static int setup(void **state)
{
	static struct event ev;
	event_init(&ev);
	*state = &ev;
	return 0;
}

static int teardown(void **state)
{
	event_free(*state);
	return 0;
}

static void tables_are_sorted(void **state)
{
	(void)state;
	assert_true(event_json_tables_sorted());
}

static const char *full_chunk =
	"{\"type\":\"chunk\",\"t\":1767225600.5,\"t_start\":1767225590,\"t_end\":1767225599.5,"
	"\"duration\":9.5,\"mem_before_mb\":100,\"mem_after_mb\":150.5,\"mem_delta_mb\":50.5,"
	"\"bytes_read\":12345,\"timestamp\":1767225599.6,\"num_events\":1000,"
	"\"dataset\":\"ttbar\",\"file\":\"root://x//a.root\",\"uuid\":\"u-1\","
	"\"entry_start\":0,\"entry_stop\":1000,\"accessed_branches\":[\"Jet_pt\",\"nJet\"],"
	"\"num_branches_accessed\":2,\"accessed_bytes\":900,\"accessed_uncompressed_bytes\":2700,"
	"\"branches_read_percent\":1.5,\"bytes_read_percent\":3.25,"
	"\"timing\":{\"jets\":0.25},\"memory\":{\"hists\":-2.5},\"bytes\":{\"load\":800},"
	"\"file_metadata\":{\"filename\":\"root://x//a.root\",\"compression_ratio\":0.3,"
	"\"total_branches\":1200,\"total_tree_bytes\":5e9},"
	"\"cpu_time\":8.25,\"worker\":\"tcp://1.2.3.4:5\",\"host\":\"node\",\"pid\":77,\"seq\":9,"
	"\"error\":\"OSError\",\"my_custom\":{\"a\":[1,2]},\"note\":\"caf\\u00e9\"}";

static void chunk_every_field(void **state)
{
	struct event *ev = *state;
	assert_int_equal(decode(full_chunk, ev), DEC_OK);
	const struct ev_chunk *c = &ev->u.chunk;
	assert_int_equal(ev->type, EV_CHUNK);
	assert_near(ev->t, 1767225600.5, 0);
	assert_near(c->duration.value, 9.5, 0);
	assert_near(c->mem_delta_mb.value, 50.5, 0);
	assert_string_equal(c->dataset, "ttbar");
	assert_int_equal(c->n_branches, 2);
	assert_string_equal(c->accessed_branches[1], "nJet");
	assert_int_equal(c->n_memory, 1);
	assert_near(c->memory[0].value, -2.5, 0);
	assert_true(c->has_file_metadata);
	assert_near(c->file_metadata.total_tree_bytes.value, 5e9, 0);
	assert_string_equal(c->error, "OSError");
	assert_non_null(c->custom_json);
	assert_non_null(strstr(c->custom_json, "\"my_custom\":{\"a\":[1,2]}"));
	assert_false(c->cpu_time.valid == false);
}

/* encode(decode(x)) decodes to the same event, and encodes to the same text. */
static void round_trip_every_type(void **state)
{
	struct event *ev = *state;
	const char *lines[] = {
		full_chunk,
		"{\"type\":\"chunk\",\"t\":5,\"duration\":1}",
		"{\"type\":\"sample\",\"t\":10,\"source\":\"state\",\"scheduler_id\":\"S\","
		"\"dask_version\":\"2026.7.0\",\"total_threads\":6,\"tasks_processing\":3,"
		"\"workers\":[{\"id\":\"a\",\"name\":\"w0\",\"host\":\"h\",\"status\":\"running\","
		"\"nthreads\":4,\"memory_bytes\":1e9,\"memory_limit\":4e9,\"cpu_percent\":99.5,"
		"\"executing\":2,\"processing\":5,\"managed_bytes\":10,\"spilled_bytes\":0},"
		"{\"id\":\"b\"}]}",
		"{\"type\":\"sample\",\"t\":11,\"worker_count\":12}",
		"{\"type\":\"run_start\",\"t\":1,\"run_id\":\"r\",\"name\":\"n\",\"processor\":\"P\","
		"\"datasets\":[\"a\",\"b\"],\"expected_events\":100,\"client_host\":\"h\",\"client_pid\":3}",
		"{\"type\":\"run_end\",\"t\":2,\"run_id\":\"r\"}",
		"{\"type\":\"report\",\"t\":3,\"bytesread\":10,\"entries\":20,\"processtime\":1.5,"
		"\"chunks\":2,\"columns\":[\"x-data\"]}",
		"{\"type\":\"fine\",\"t\":4,\"scope\":\"span\",\"rows\":[[\"execute\",\"P\","
		"\"thread-cpu\",\"seconds\",1.25]]}",
		"{\"type\":\"status\",\"t\":6,\"source\":\"scheduler\",\"state\":\"lost\","
		"\"reason\":\"refused\"}",
	};
	struct event again;
	event_init(&again);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct strbuf a, b;
		strbuf_init(&a);
		strbuf_init(&b);
		assert_int_equal(decode(lines[i], ev), DEC_OK);
		assert_int_equal(event_encode_json(ev, &a), 0);
		assert_int_equal(event_decode_json(a.data, a.len, &again), DEC_OK);
		assert_int_equal(again.type, ev->type);
		assert_int_equal(event_encode_json(&again, &b), 0);
		assert_string_equal(a.data, b.data);
		strbuf_free(&a);
		strbuf_free(&b);
	}
	event_free(&again);
}

struct bad {
	const char *text;
	enum decode_error want;
};

static void rejections_by_reason(void **state)
{
	struct event *ev = *state;
	const struct bad cases[] = {
		{ "nope", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1} trailing", DEC_NOT_JSON },
		{ "[1,2]", DEC_NOT_OBJECT },
		{ "{\"t\":5}", DEC_NO_TYPE },
		{ "{\"type\":\"bogus\",\"t\":5}", DEC_UNKNOWN_TYPE },
		{ "{\"type\":\"chunk\"}", DEC_NO_TIME },
		{ "{\"type\":\"chunk\",\"t\":-1,\"duration\":1}", DEC_NO_TIME },
		{ "{\"type\":\"chunk\",\"t\":5}", DEC_MISSING_FIELD },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":\"1\"}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":-1}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"num_events\":1.5}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"t_start\":9,\"t_end\":8}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\xff\"}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\xed\xa0\x80\"}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"entry_start\":5,\"entry_stop\":4}",
		  DEC_INCONSISTENT },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":3,\"workers\":[{\"id\":\"a\"}]}",
		  DEC_INCONSISTENT },
		{ "{\"type\":\"sample\",\"t\":5,\"workers\":[{\"name\":\"a\"}]}", DEC_MISSING_FIELD },
		{ "{\"type\":\"fine\",\"t\":5,\"rows\":[[\"a\",\"b\",\"c\",1]]}", DEC_BAD_TYPE },
		{ "{\"type\":\"status\",\"t\":5,\"source\":\"x\",\"state\":\"sad\"}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"run_start\",\"t\":5}", DEC_MISSING_FIELD },
		{ "{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", DEC_TOO_DEEP },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum decode_error got = decode(cases[i].text, ev);
		if (got != cases[i].want)
			fail_msg("case %zu: got %s, want %s", i, decode_error_name(got),
				 decode_error_name(cases[i].want));
		assert_int_equal(ev->type, EV_NONE); /* never half-filled */
	}
	struct reject_counts rc = { 0 };
	reject_count(&rc, DEC_BAD_UTF8);
	reject_count(&rc, DEC_BAD_UTF8);
	reject_count(&rc, DEC_OK);
	assert_int_equal(rc.total, 2);
	assert_int_equal(rc.by_reason[DEC_BAD_UTF8], 2);
}

static void limits(void **state)
{
	struct event *ev = *state;
	static char big[EVENT_MAX_STRING + 200];
	int n = snprintf(big, sizeof(big), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"file\":\"");
	memset(big + n, 'x', EVENT_MAX_STRING + 1);
	strcpy(big + n + EVENT_MAX_STRING + 1, "\"}");
	assert_int_equal(decode(big, ev), DEC_STRING_TOO_LONG);
	assert_int_equal(event_decode_json(big, EVENT_JSON_MAX + 1, ev), DEC_TOO_LARGE);
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"timing\":{");
	for (unsigned i = 0; i <= EVENT_MAX_SECTIONS; i++)
		strbuf_appendf(&sb, "%s\"s%u\":1", i ? "," : "", i);
	strbuf_puts(&sb, "}}");
	assert_int_equal(decode(sb.data, ev), DEC_LIST_TOO_LONG);
	strbuf_free(&sb);
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"error\":null}", ev), DEC_OK);
	assert_null(ev->u.chunk.error); /* null means not given */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables_are_sorted),
		cmocka_unit_test_setup_teardown(chunk_every_field, setup, teardown),
		cmocka_unit_test_setup_teardown(round_trip_every_type, setup, teardown),
		cmocka_unit_test_setup_teardown(rejections_by_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(limits, setup, teardown),
	};
	return cmocka_run_group_tests_name("event_json", tests, NULL, NULL);
}
