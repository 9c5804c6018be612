/* The event codec: every field of every type both ways, exact numbers, and
 * each way input can be bad rejected whole under its own reason. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_fixtures.h"
#include "roastop/event_field.h"

static enum decode_error decode(const char *text, struct event *ev)
{
	return event_decode_json(text, strlen(text), ev);
}

static struct event ev, again;

static int setup(void **state)
{
	(void)state;
	event_init(&ev);
	event_init(&again);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	event_free(&ev);
	event_free(&again);
	return 0;
}

/* Every field table: the event types', a worker's, file_metadata's. */
static const struct field_table *table_at(int t)
{
	return t < EV__COUNT ? event_field_table((enum event_type)t)
	       : t == EV__COUNT ? event_field_workers()
				: event_field_filemeta();
}

/* Names unique and sorted (the encoder writes fields in table order),
 * lengths right. */
static void tables_are_sorted(void **state)
{
	(void)state;
	for (int t = 0; t < EV__COUNT + 2; t++) {
		const struct field_table *tb = table_at(t);
		for (size_t i = 0; i < tb->n; i++) {
			const struct event_field *f = &tb->f[i];
			assert_int_equal(f->len, strlen(f->name));
			assert_true(f->len <= 64);
			if (i > 0)
				assert_true(strcmp(tb->f[i - 1].name, f->name) < 0);
		}
	}
}

/* The index finds a name that is field g's name, or none. */
static void found_as(const struct field_table *tb, const char *name, size_t len)
{
	const struct event_field *g = event_field_find(tb, name, len);
	if (g)
		assert_true(g->len == len && memcmp(g->name, name, len) == 0);
}

/* Through the index every field is found by its own name, and near misses
 * (one byte changed, one short, one long) find only a field whose name they
 * really are. */
static void fields_found_by_index(void **state)
{
	(void)state;
	event_field_init();
	for (int t = 0; t < EV__COUNT + 2; t++) {
		const struct field_table *tb = table_at(t);
		for (size_t i = 0; i < tb->n; i++) {
			const struct event_field *f = &tb->f[i];
			char near[80];
			assert_ptr_equal(event_field_find(tb, f->name, f->len), f);
			for (size_t k = 0; k < f->len; k++) {
				memcpy(near, f->name, f->len);
				near[k] = (char)(near[k] ^ 0x01);
				found_as(tb, near, f->len);
			}
			memcpy(near, f->name, f->len);
			near[f->len] = 'x';
			found_as(tb, near, f->len + 1u);
			found_as(tb, near, f->len - 1u);
		}
	}
}

static void error_names(void **state)
{
	(void)state;
	assert_string_equal(decode_error_name(DEC_OK), "ok");
	assert_string_equal(decode_error_name(DEC_TOO_LARGE), "too_large");
	assert_string_equal(decode_error_name(DEC_BAD_UTF8), "bad_utf8");
	assert_string_equal(decode_error_name(DEC_NO_MEMORY), "no_memory");
	assert_string_equal(decode_error_name(DEC__COUNT), "unknown");
	assert_string_equal(decode_error_name((enum decode_error)-1), "unknown");
	for (int a = 0; a < DEC__COUNT; a++) { /* metrics.json keys: present and distinct */
		assert_non_null(decode_error_name(a));
		assert_true(strlen(decode_error_name(a)) > 1);
		for (int b = 0; b < a; b++)
			assert_string_not_equal(decode_error_name(a), decode_error_name(b));
	}
	struct reject_counts rc = { 0 };
	reject_count(&rc, DEC_BAD_UTF8);
	reject_count(&rc, DEC_BAD_UTF8);
	reject_count(&rc, DEC_TOO_DEEP);
	reject_count(&rc, DEC_OK); /* not a rejection */
	reject_count(&rc, DEC__COUNT); /* not a reason */
	assert_int_equal(rc.total, 3);
	assert_int_equal(rc.by_reason[DEC_BAD_UTF8], 2);
	assert_int_equal(rc.by_reason[DEC_TOO_DEEP], 1);
	assert_int_equal(rc.by_reason[DEC_OK], 0);
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

/* roastcoffea's record names land in the fields of the same name. */
static void chunk_every_field(void **state)
{
	(void)state;
	assert_int_equal(decode(full_chunk, &ev), DEC_OK);
	const struct ev_chunk *c = &ev.u.chunk;
	assert_int_equal(ev.type, EV_CHUNK);
	assert_true(ev.t == 1767225600.5);
	assert_true(c->t_start.valid && c->t_start.value == 1767225590);
	assert_true(c->t_end.value == 1767225599.5);
	assert_true(c->duration.value == 9.5);
	assert_true(c->mem_before_mb.value == 100 && c->mem_after_mb.value == 150.5);
	assert_true(c->mem_delta_mb.value == 50.5);
	assert_true(c->bytes_read.value == 12345 && c->num_events.value == 1000);
	assert_true(c->timestamp.value == 1767225599.6);
	assert_true(c->entry_start.valid && c->entry_start.value == 0);
	assert_true(c->entry_stop.value == 1000);
	assert_string_equal(c->dataset, "ttbar");
	assert_string_equal(c->file, "root://x//a.root");
	assert_string_equal(c->uuid, "u-1");
	assert_int_equal(c->n_branches, 2);
	assert_string_equal(c->accessed_branches[0], "Jet_pt");
	assert_string_equal(c->accessed_branches[1], "nJet");
	assert_true(c->num_branches_accessed.value == 2);
	assert_true(c->accessed_bytes.value == 900 && c->accessed_uncompressed_bytes.value == 2700);
	assert_true(c->branches_read_percent.value == 1.5 && c->bytes_read_percent.value == 3.25);
	assert_int_equal(c->n_timing, 1);
	assert_string_equal(c->timing[0].key, "jets");
	assert_true(c->timing[0].value == 0.25);
	assert_int_equal(c->n_memory, 1);
	assert_true(c->memory[0].value == -2.5);
	assert_int_equal(c->n_bytes, 1);
	assert_string_equal(c->bytes[0].key, "load");
	assert_true(c->bytes[0].value == 800);
	assert_true(c->has_file_metadata);
	assert_string_equal(c->file_metadata.filename, "root://x//a.root");
	assert_true(c->file_metadata.compression_ratio.value == 0.3);
	assert_true(c->file_metadata.total_branches.value == 1200);
	assert_true(c->file_metadata.total_tree_bytes.value == 5e9);
	assert_true(c->cpu_time.value == 8.25);
	assert_string_equal(c->worker, "tcp://1.2.3.4:5");
	assert_string_equal(c->host, "node");
	assert_true(c->pid.value == 77 && c->seq.value == 9);
	assert_string_equal(c->error, "OSError");
	/* unknown fields, in order, as one compact object of JSON text as written */
	assert_string_equal(c->custom_json, "{\"my_custom\":{\"a\":[1,2]},\"note\":\"caf\\u00e9\"}");
}

static void chunk_missing_fields_are_invalid(void **state)
{
	(void)state;
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"error\":null,"
				"\"num_events\":null}", &ev), DEC_OK);
	const struct ev_chunk *c = &ev.u.chunk;
	assert_null(c->error); /* null means not given */
	assert_false(c->num_events.valid);
	assert_false(c->mem_before_mb.valid);
	assert_false(c->cpu_time.valid);
	assert_false(c->has_file_metadata);
	assert_null(c->accessed_branches);
	assert_int_equal(c->n_timing, 0);
	assert_null(c->custom_json);
}

/* Without a duration, t_end - t_start is it. */
static void chunk_duration_from_times(void **state)
{
	(void)state;
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"t_start\":100.25,\"t_end\":103}", &ev),
			 DEC_OK);
	assert_true(ev.u.chunk.duration.valid);
	assert_true(ev.u.chunk.duration.value == 2.75);
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"t_start\":9,\"t_end\":8}", &ev),
			 DEC_OUT_OF_RANGE);
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"t_start\":9}", &ev), DEC_MISSING_FIELD);
	/* an explicit duration wins; the times need not agree with it */
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"t_start\":1,\"t_end\":8,\"duration\":2}",
				&ev), DEC_OK);
	assert_true(ev.u.chunk.duration.value == 2);
}

static void sample_worker_count(void **state)
{
	(void)state;
	assert_int_equal(decode("{\"type\":\"sample\",\"t\":5,\"workers\":[{\"id\":\"a\"},{\"id\":\"b\","
				"\"future\":[1]}]}", &ev), DEC_OK);
	assert_int_equal(ev.u.sample.worker_count, 2); /* from the list */
	assert_int_equal(ev.u.sample.n_workers, 2);
	assert_string_equal(ev.u.sample.workers[1].id, "b");
	assert_false(ev.u.sample.workers[1].nthreads.valid);
	assert_false(ev.u.sample.total_threads.valid);
	assert_int_equal(decode("{\"type\":\"sample\",\"t\":5,\"worker_count\":2,"
				"\"workers\":[{\"id\":\"a\"},{\"id\":\"b\"}]}", &ev), DEC_OK);
	assert_int_equal(decode("{\"type\":\"sample\",\"t\":5,\"worker_count\":40}", &ev), DEC_OK);
	assert_int_equal(ev.u.sample.worker_count, 40);
	assert_int_equal(ev.u.sample.n_workers, 0);
	assert_int_equal(decode("{\"type\":\"sample\",\"t\":5,\"source\":\"state\"}", &ev),
			 DEC_MISSING_FIELD);
}

/* Field names of other types' and of nested objects decode too, and an
 * unknown field outside a chunk is ignored rather than kept. */
static void other_types_decode(void **state)
{
	(void)state;
	assert_int_equal(decode("{\"type\":\"fine\",\"t\":4,\"rows\":[[\"execute\",\"P\",\"thread-cpu\","
				"\"seconds\",1.25],[\"a\",\"b\",\"c\",\"d\",0]],\"newer\":true}", &ev),
			 DEC_OK);
	assert_int_equal(ev.u.fine.scope, FINE_CLUSTER); /* the default */
	assert_int_equal(ev.u.fine.n_rows, 2);
	assert_string_equal(ev.u.fine.rows[0].activity, "thread-cpu");
	assert_true(ev.u.fine.rows[0].value == 1.25);
	assert_string_equal(ev.u.fine.rows[1].unit, "d");
	assert_int_equal(decode("{\"type\":\"status\",\"t\":6,\"source\":\"scheduler\","
				"\"state\":\"degraded\"}", &ev), DEC_OK);
	assert_int_equal(ev.u.status.state, SRC_DEGRADED);
	assert_null(ev.u.status.reason);
	/* a recording older than gaps_timelines: only the scheduler gapped */
	assert_true(ev.u.status.gaps_timelines.valid && ev.u.status.gaps_timelines.value == 1);
	assert_int_equal(decode("{\"type\":\"status\",\"t\":6,\"source\":\"udp\","
				"\"state\":\"lost\"}", &ev), DEC_OK);
	assert_true(ev.u.status.gaps_timelines.valid && ev.u.status.gaps_timelines.value == 0);
	assert_int_equal(decode("{\"type\":\"status\",\"t\":6,\"source\":\"tasks\","
				"\"state\":\"lost\",\"gaps_timelines\":1}", &ev), DEC_OK);
	assert_true(ev.u.status.gaps_timelines.value == 1);
	assert_int_equal(decode("{\"type\":\"status\",\"t\":6,\"source\":\"udp\","
				"\"state\":\"lost\",\"gaps_timelines\":2}", &ev), DEC_OUT_OF_RANGE);
	assert_int_equal(decode("{\"type\":\"run_end\",\"t\":2}", &ev), DEC_OK);
	assert_null(ev.u.run_end.run_id);
	assert_null(ev.u.run_end.status); /* an old emitter's: the run completed */
}

/* run_end's status is one of the four ends; anything else is refused whole. */
static void run_end_status_and_error(void **state)
{
	(void)state;
	assert_int_equal(decode("{\"type\":\"run_end\",\"t\":2,\"run_id\":\"r\",\"status\":"
				"\"failed\",\"error_type\":\"ValueError\",\"error_message\":\"boom\"}",
				&ev), DEC_OK);
	assert_string_equal(ev.u.run_end.status, "failed");
	assert_string_equal(ev.u.run_end.error_type, "ValueError");
	assert_string_equal(ev.u.run_end.error_message, "boom");
	const char *ok[] = { "completed", "failed", "incomplete", "stopped" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char line[128];
		snprintf(line, sizeof(line), "{\"type\":\"run_end\",\"t\":2,\"status\":\"%s\"}", ok[i]);
		assert_int_equal(decode(line, &ev), DEC_OK);
		assert_int_equal(run_status_from_name(ev.u.run_end.status), (int)i + RUN_COMPLETED);
	}
	const char *bad[] = { "running", "", "Failed", "done" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[128];
		snprintf(line, sizeof(line), "{\"type\":\"run_end\",\"t\":2,\"status\":\"%s\"}", bad[i]);
		assert_int_equal(decode(line, &ev), DEC_OUT_OF_RANGE);
		assert_int_equal(ev.type, EV_NONE);
	}
	assert_int_equal(decode("{\"type\":\"run_end\",\"t\":2,\"status\":1}", &ev), DEC_BAD_TYPE);
	assert_int_equal(decode("{\"type\":\"report\",\"t\":3,\"columns\":[]}", &ev), DEC_OK);
	assert_int_equal(ev.u.report.n_columns, 0);
	assert_non_null(ev.u.report.columns); /* given, and empty */
	assert_false(ev.u.report.entries.valid);
}

/* encode -> decode gives back the same event, field by field, for every
 * type with every field set and with only the required ones. */
static void round_trip_every_type_exactly(void **state)
{
	(void)state;
	char why[128];
	for (int t = EV_SAMPLE; t < EV__COUNT; t++) {
		for (int full = 0; full <= 1; full++) {
			struct strbuf sb;
			strbuf_init(&sb);
			fx_event(&ev, t, full);
			assert_int_equal(event_encode_json(&ev, &sb), 0);
			assert_null(memchr(sb.data, '\n', sb.len)); /* one line */
			enum decode_error e = event_decode_json(sb.data, sb.len, &again);
			if (e != DEC_OK)
				fail_msg("%s (full %d): %s in %s", event_type_name(t), full,
					 decode_error_name(e), sb.data);
			if (!fx_equal(&ev, &again, why, sizeof(why)))
				fail_msg("%s (full %d): %s in %s", event_type_name(t), full, why, sb.data);
			strbuf_free(&sb);
		}
	}
}

/* The top-level members of a compact object, reversed: splits at the
 * commas outside strings and nested values. */
static void members_reversed(const char *in, struct strbuf *out)
{
	const char *start[64], *end[64];
	size_t n = 0, len = strlen(in);
	int depth = 0;
	bool str = false;
	start[0] = in + 1;
	for (size_t i = 1; i + 1 < len; i++) {
		char c = in[i];
		if (str) {
			i += c == '\\';
			str = c != '"';
			continue;
		}
		str = c == '"';
		depth += (c == '{' || c == '[') - (c == '}' || c == ']');
		if (c == ',' && depth == 0) {
			end[n++] = in + i;
			start[n] = in + i + 1;
		}
	}
	end[n++] = in + len - 1;
	strbuf_puts(out, "{");
	for (size_t k = n; k-- > 0;) {
		strbuf_append(out, start[k], (size_t)(end[k] - start[k]));
		strbuf_puts(out, k ? "," : "}");
	}
}

/* Members in reverse table order (so no field is where the encoder puts
 * it) decode to the same event: lookup does not depend on the order. */
static void reversed_members_decode_alike(void **state)
{
	(void)state;
	char why[128];
	for (int t = EV_SAMPLE; t < EV__COUNT; t++) {
		struct strbuf sb, rev;
		strbuf_init(&sb);
		strbuf_init(&rev);
		fx_event(&ev, t, true);
		assert_int_equal(event_encode_json(&ev, &sb), 0);
		members_reversed(sb.data, &rev);
		assert_int_equal(rev.len, sb.len);
		assert_int_equal(event_decode_json(rev.data, rev.len, &again), DEC_OK);
		if (t == EV_CHUNK) { /* unknown members are kept in their (reversed) order */
			assert_string_equal(again.u.chunk.custom_json,
					    "{\"note\":\"x\",\"extra\":[1,{\"a\":null}]}");
			again.u.chunk.custom_json = ev.u.chunk.custom_json;
		}
		if (!fx_equal(&ev, &again, why, sizeof(why)))
			fail_msg("%s: %s in %s", event_type_name(t), why, rev.data);
		strbuf_free(&sb);
		strbuf_free(&rev);
	}
}

/* Keys of every length (0 to 20 bytes), plain or
 * with an escape, a UTF-8 byte or a raw control byte at each position, and
 * with the closing quote right at the end of the text. */
static void keys_of_every_length(void **state)
{
	(void)state;
	for (size_t len = 0; len <= 20; len++) {
		for (size_t at = 0; at <= len; at++) {
			char key[32], text[160], want[96];
			for (size_t i = 0; i < len; i++)
				key[i] = (char)('k' + i % 3);
			key[len] = '\0';
			/* plain: an unknown member, kept as it is */
			snprintf(text, sizeof(text), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"%s\":2}", key);
			assert_int_equal(decode(text, &ev), DEC_OK);
			snprintf(want, sizeof(want), "{\"%s\":2}", key);
			assert_string_equal(ev.u.chunk.custom_json, want);
			if (at == len)
				continue;
			/* \u0041 escape at position at: decodes to 'A' */
			snprintf(text, sizeof(text), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"%.*s\\u0041%s\":2}",
				 (int)at, key, key + at + 1);
			assert_int_equal(decode(text, &ev), DEC_OK);
			snprintf(want, sizeof(want), "{\"%.*sA%s\":2}", (int)at, key, key + at + 1);
			assert_string_equal(ev.u.chunk.custom_json, want);
			/* a two-byte UTF-8 character */
			snprintf(text, sizeof(text), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"%.*s\xc3\xa9%s\":2}",
				 (int)at, key, key + at + 1);
			assert_int_equal(decode(text, &ev), DEC_OK);
			snprintf(want, sizeof(want), "{\"%.*s\xc3\xa9%s\":2}", (int)at, key, key + at + 1);
			assert_string_equal(ev.u.chunk.custom_json, want);
			/* a lone continuation byte and a raw control byte are refused */
			snprintf(text, sizeof(text), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"%.*s\xa9%s\":2}",
				 (int)at, key, key + at + 1);
			assert_int_equal(decode(text, &ev), DEC_BAD_UTF8);
			snprintf(text, sizeof(text), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"%.*s\x01%s\":2}",
				 (int)at, key, key + at + 1);
			assert_int_equal(decode(text, &ev), DEC_NOT_JSON);
		}
		/* the key's closing quote is the text's last bytes but one: no
		 * read may reach past the end (ASan checks) */
		char *tail = malloc(len + 64);
		assert_non_null(tail);
		int n = snprintf(tail, len + 64, "{\"type\":\"run_end\",\"t\":5,\"%.*s\":1}", (int)len,
				 "abcdefghijklmnopqrst");
		assert_int_equal(event_decode_json(tail, (size_t)n, &ev), DEC_OK);
		assert_int_equal(event_decode_json(tail, (size_t)n - 3, &ev), DEC_NOT_JSON);
		free(tail);
	}
}

/* A minimal event encodes to exactly its required fields. */
static void encode_omits_what_was_not_given(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	fx_event(&ev, EV_CHUNK, false);
	ev.u.chunk.num_events = optnum_none();
	ev.u.chunk.bytes_read = (optnum){ .value = 5, .valid = false };
	assert_int_equal(event_encode_json(&ev, &sb), 0);
	assert_string_equal(sb.data, "{\"type\":\"chunk\",\"t\":1767225600.123456,\"duration\":9.25}");
	strbuf_reset(&sb);
	fx_event(&ev, EV_STATUS, false);
	assert_int_equal(event_encode_json(&ev, &sb), 0);
	assert_string_equal(sb.data, "{\"type\":\"status\",\"t\":1767225700,\"source\":\"scheduler\","
				     "\"state\":\"lost\"}");
	strbuf_reset(&sb);
	fx_event(&ev, EV_FINE, false);
	ev.u.fine.rows = NULL; /* a poll with no rows (UBSan: no arithmetic on it) */
	ev.u.fine.n_rows = 0;
	assert_int_equal(event_encode_json(&ev, &sb), 0);
	assert_string_equal(sb.data, "{\"type\":\"fine\",\"t\":1767225610,\"rows\":[],"
				     "\"scope\":\"cluster\"}");
	strbuf_reset(&sb);
	event_reset(&ev);
	assert_int_equal(event_encode_json(&ev, &sb), -1); /* EV_NONE has no line */
	strbuf_free(&sb);
}

/* encode(decode(x)) is a fixed point: decoding it and encoding again gives
 * the same text. */
static void text_round_trip(void **state)
{
	(void)state;
	const char *lines[] = {
		full_chunk,
		"{\"type\":\"chunk\",\"t\":5,\"duration\":1}",
		"{\"type\":\"sample\",\"t\":10,\"source\":\"state\",\"scheduler_id\":\"S\","
		"\"dask_version\":\"2026.7.0\",\"total_threads\":6,\"tasks_processing\":3,"
		"\"workers\":[{\"id\":\"a\",\"name\":\"w0\",\"host\":\"h\",\"status\":\"running\","
		"\"nthreads\":4,\"memory_bytes\":1e9,\"memory_limit\":4e9,\"cpu_percent\":99.5,"
		"\"executing\":2,\"processing\":5,\"managed_bytes\":10,\"spilled_bytes\":0},"
		"{\"id\":\"b\"}]}",
		"{\"type\":\"sample\",\"t\":10,\"source\":\"state\",\"worker_count\":0,"
		"\"erred\":{\"boom\":3,\"x\":1},\"erred_since\":1.7e9,\"erred_left_out\":2,\"running\":[[\"('nap-1', 0)\","
		"\"nap\",\"tcp://a:1\",12.5]],\"running_left_out\":4}",
		"{\"type\":\"sample\",\"t\":10,\"worker_count\":0,\"erred_since\":1.7e9,\"erred_left_out\":0,"
		"\"running_left_out\":0}",
		"{\"type\":\"run_start\",\"t\":1,\"run_id\":\"r\",\"name\":\"n\",\"processor\":\"P\","
		"\"datasets\":[\"a\",\"b\"],\"expected_events\":100,\"client_host\":\"h\",\"client_pid\":3}",
		"{\"type\":\"report\",\"t\":3,\"bytesread\":10,\"entries\":20,\"processtime\":1.5,"
		"\"chunks\":2,\"columns\":[\"x-data\"]}",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct strbuf a, b;
		strbuf_init(&a);
		strbuf_init(&b);
		assert_int_equal(decode(lines[i], &ev), DEC_OK);
		assert_int_equal(event_encode_json(&ev, &a), 0);
		assert_int_equal(event_decode_json(a.data, a.len, &again), DEC_OK);
		assert_int_equal(event_encode_json(&again, &b), 0);
		assert_string_equal(a.data, b.data);
		strbuf_free(&a);
		strbuf_free(&b);
	}
}

/* Pretty-printed, reordered ("type" last takes the two-pass path) and
 * compact texts of one event decode to the same event. */
static void layout_does_not_matter(void **state)
{
	(void)state;
	char why[128];
	const char *compact = "{\"type\":\"run_start\",\"t\":7,\"run_id\":\"r\",\"datasets\":[\"a\",\"b\"],"
			      "\"expected_events\":12}";
	const char *pretty = " {\n\t\"expected_events\" : 12 ,\r\n \"datasets\": [ \"a\" , \"b\" ],\n"
			     "  \"run_id\":\"r\", \"t\": 7,\n  \"type\": \"run_start\"\n}\n";
	assert_int_equal(decode(compact, &ev), DEC_OK);
	assert_int_equal(decode(pretty, &again), DEC_OK);
	assert_true(fx_equal(&ev, &again, why, sizeof(why)));
	/* custom chunk fields are stored compact whatever the layout */
	assert_int_equal(decode("{ \"t\" : 5, \"duration\" : 1, \"x\" : [ 1 , { \"k\" : \"a b\" } ] ,"
				"\"type\":\"chunk\"}", &ev), DEC_OK);
	assert_string_equal(ev.u.chunk.custom_json, "{\"x\":[1,{\"k\":\"a b\"}]}");
}

struct bad {
	const char *text;
	enum decode_error want;
};

static void check_bad(const struct bad *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* a good event first, so a half-applied bad one would show */
		assert_int_equal(decode(full_chunk, &ev), DEC_OK);
		enum decode_error got = decode(cases[i].text, &ev);
		if (got != cases[i].want)
			fail_msg("case %zu %s: got %s, want %s", i, cases[i].text,
				 decode_error_name(got), decode_error_name(cases[i].want));
		assert_int_equal(ev.type, EV_NONE); /* never half-filled */
		assert_null(ev.u.chunk.dataset);
		assert_false(ev.u.chunk.duration.valid);
		assert_true(ev.t == 0);
	}
}

static void rejections_by_reason(void **state)
{
	(void)state;
	const struct bad cases[] = {
		{ "", DEC_NOT_JSON },
		{ "nope", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1} trailing", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":01}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1.}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1e}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":tru}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"a\nb\"}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\\q\"}", DEC_NOT_JSON },
		{ "[1,2]", DEC_NOT_OBJECT },
		{ "\"chunk\"", DEC_NOT_OBJECT },
		{ "{\"t\":5}", DEC_NO_TYPE },
		{ "{\"type\":7,\"t\":5}", DEC_NO_TYPE },
		{ "{\"type\":\"bogus\",\"t\":5}", DEC_UNKNOWN_TYPE },
		{ "{\"type\":\"recording\",\"format\":\"roastop-recording\",\"version\":1}",
		  DEC_UNKNOWN_TYPE },
		{ "{\"type\":\"chunk\",\"duration\":1}", DEC_NO_TIME },
		{ "{\"type\":\"chunk\",\"t\":-1,\"duration\":1}", DEC_NO_TIME },
		{ "{\"type\":\"chunk\",\"t\":0,\"duration\":1}", DEC_NO_TIME },
		{ "{\"type\":\"chunk\",\"t\":2e11,\"duration\":1}", DEC_NO_TIME },
		{ "{\"type\":\"chunk\",\"t\":\"5\",\"duration\":1}", DEC_NO_TIME },
		{ "{\"type\":\"chunk\",\"t\":5}", DEC_MISSING_FIELD },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":null}", DEC_MISSING_FIELD },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"file_metadata\":{\"total_branches\":3}}",
		  DEC_MISSING_FIELD },
		{ "{\"type\":\"sample\",\"t\":5,\"workers\":[{\"name\":\"a\"}]}", DEC_MISSING_FIELD },
		{ "{\"type\":\"run_start\",\"t\":5}", DEC_MISSING_FIELD },
		{ "{\"type\":\"run_start\",\"t\":5,\"run_id\":null}", DEC_MISSING_FIELD },
		{ "{\"type\":\"fine\",\"t\":5,\"scope\":\"span\"}", DEC_MISSING_FIELD },
		{ "{\"type\":\"status\",\"t\":5,\"source\":\"x\"}", DEC_MISSING_FIELD },
		{ "{\"type\":\"status\",\"t\":5,\"state\":\"lost\"}", DEC_MISSING_FIELD },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":\"1\"}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":true}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":3}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"accessed_branches\":\"a\"}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"accessed_branches\":[1]}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"timing\":[1]}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"timing\":{\"a\":\"1\"}}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"file_metadata\":[]}", DEC_BAD_TYPE },
		{ "{\"type\":\"sample\",\"t\":5,\"workers\":[\"a\"]}", DEC_BAD_TYPE },
		{ "{\"type\":\"fine\",\"t\":5,\"rows\":[[\"a\",\"b\",\"c\",1]]}", DEC_BAD_TYPE },
		{ "{\"type\":\"fine\",\"t\":5,\"rows\":[[\"a\",\"b\",\"c\",\"d\",1,2]]}", DEC_BAD_TYPE },
		{ "{\"type\":\"fine\",\"t\":5,\"rows\":[{\"a\":1}]}", DEC_BAD_TYPE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":-1}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1e10}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1e999}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"num_events\":1.5}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"num_events\":2e15}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"bytes_read\":-1}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"mem_delta_mb\":-2e9}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"bytes_read_percent\":100.01}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"timing\":{\"a\":2e15}}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"error\":\"\"}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"fine\",\"t\":5,\"rows\":[[\"a\",\"b\",\"c\",\"d\",-1]]}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"fine\",\"t\":5,\"rows\":[],\"scope\":\"galaxy\"}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"status\",\"t\":5,\"source\":\"x\",\"state\":\"sad\"}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":-1}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":1.5}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"entry_start\":5,\"entry_stop\":4}",
		  DEC_INCONSISTENT },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":3,\"workers\":[{\"id\":\"a\"}]}",
		  DEC_INCONSISTENT },
		/* the route's failed and running tasks: lists without their left_out,
		 * counts not whole or out of range, rows of the wrong shape */
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"erred\":{\"a\":1}}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"erred_left_out\":0}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"erred_since\":-1,"
		  "\"erred_left_out\":0}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"erred_since\":1.7e9,\"erred_left_out\":0,"
		  "\"erred\":{\"a\":1.5}}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"erred_since\":1.7e9,\"erred_left_out\":0,"
		  "\"erred\":{\"a\":-1}}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"erred_since\":1.7e9,\"erred_left_out\":0.5}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"running\":[[\"k\",\"p\","
		  "\"w\",1]]}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"running_left_out\":0,"
		  "\"running\":[[\"k\",\"p\",\"w\",-1]]}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"running_left_out\":0,"
		  "\"running\":[[\"k\",\"p\",\"w\"]]}",
		  DEC_BAD_TYPE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"running_left_out\":0,"
		  "\"running\":[[\"k\",\"p\",\"w\",1,2]]}",
		  DEC_BAD_TYPE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"running_left_out\":0,"
		  "\"running\":[[\"k\",null,\"w\",1]]}",
		  DEC_BAD_TYPE },
		{ "{\"type\":\"sample\",\"t\":5,\"worker_count\":0,\"running_left_out\":0,"
		  "\"running\":{}}",
		  DEC_BAD_TYPE },
		{ "{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", DEC_TOO_DEEP },
	};
	check_bad(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Chunks and reports carry the collector's run_id (the session routes them
 * by it), whether "type" comes first or last; without it, or null, it is
 * NULL, and never a custom field. */
static void chunk_and_report_keep_run_id(void **state)
{
	(void)state;
	const char *with[] = {
		"{\"type\":\"chunk\",\"t\":5,\"run_id\":\"r-1\",\"duration\":1}",
		"{\"run_id\":\"r-1\",\"t\":5,\"duration\":1,\"type\":\"chunk\"}",
		"{\"type\":\"report\",\"t\":5,\"run_id\":\"r-1\",\"chunks\":3}",
		"{\"chunks\":3,\"t\":5,\"run_id\":\"r-1\",\"type\":\"report\"}",
	};
	for (size_t i = 0; i < sizeof(with) / sizeof(with[0]); i++) {
		assert_int_equal(decode(with[i], &ev), DEC_OK);
		const char *id = ev.type == EV_CHUNK ? ev.u.chunk.run_id : ev.u.report.run_id;
		if (!id || strcmp(id, "r-1") != 0)
			fail_msg("%s: run_id %s", with[i], id ? id : "NULL");
		if (ev.type == EV_CHUNK)
			assert_null(ev.u.chunk.custom_json);
	}
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1}", &ev), DEC_OK);
	assert_null(ev.u.chunk.run_id);
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"run_id\":null}", &ev),
			 DEC_OK);
	assert_null(ev.u.chunk.run_id);
	assert_null(ev.u.chunk.custom_json);
	assert_int_equal(decode("{\"type\":\"report\",\"t\":5,\"chunks\":3}", &ev), DEC_OK);
	assert_null(ev.u.report.run_id);
}

/* A bad run_id rejects a chunk or a report for the same reason as it
 * rejects a run_start: too long, not UTF-8, not a string. */
static void bad_run_id_rejected_as_run_start(void **state)
{
	(void)state;
	static const char *const heads[] = { "{\"type\":\"run_start\",\"t\":5,",
					     "{\"type\":\"chunk\",\"t\":5,\"duration\":1,",
					     "{\"type\":\"report\",\"t\":5," };
	static char text[EVENT_MAX_STRING + 200];
	for (size_t h = 0; h < 3; h++) {
		for (size_t len = EVENT_MAX_STRING; len <= EVENT_MAX_STRING + 1; len++) {
			int n = snprintf(text, sizeof(text), "%s\"run_id\":\"", heads[h]);
			memset(text + n, 'r', len);
			strcpy(text + n + len, "\"}");
			assert_int_equal(decode(text, &ev),
					 len == EVENT_MAX_STRING ? DEC_OK : DEC_STRING_TOO_LONG);
		}
		char utf8[128], nul[128], number[128];
		snprintf(utf8, sizeof(utf8), "%s\"run_id\":\"\xff\"}", heads[h]);
		snprintf(nul, sizeof(nul), "%s\"run_id\":\"a\\u0000\"}", heads[h]);
		snprintf(number, sizeof(number), "%s\"run_id\":7}", heads[h]);
		const struct bad cases[] = {
			{ utf8, DEC_BAD_UTF8 },
			{ nul, DEC_BAD_UTF8 },
			{ number, DEC_BAD_TYPE },
		};
		check_bad(cases, sizeof(cases) / sizeof(cases[0]));
	}
}

/* Strings are well-formed UTF-8, whether raw or from \u escapes. */
static void utf8(void **state)
{
	(void)state;
	const struct bad cases[] = {
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\xff\"}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\xc0\x80\"}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\xe2\x82\"}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\xed\xa0\x80\"}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\xf4\x90\x80\x80\"}",
		  DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\\ud800\"}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"\\udc00\\ud800\"}",
		  DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":\"a\\u0000b\"}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"accessed_branches\":[\"\x80\"]}",
		  DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"timing\":{\"\xfe\":1}}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"\xc3\":1}", DEC_BAD_UTF8 },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"custom\":\"\xc3(\"}", DEC_BAD_UTF8 },
	};
	check_bad(cases, sizeof(cases) / sizeof(cases[0]));
	/* 2-, 3- and 4-byte forms, raw and escaped (a surrogate pair), survive */
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"dataset\":"
				"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\\u00e9\\u20ac\\ud83d\\ude00\"}",
				&ev), DEC_OK);
	assert_string_equal(ev.u.chunk.dataset, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|"
						"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* escapes decode; a key written with an escape is the same key */
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"dur\\u0061tion\":1,"
				"\"file\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"}", &ev), DEC_OK);
	assert_true(ev.u.chunk.duration.value == 1);
	assert_string_equal(ev.u.chunk.file, "a\"b\\c/d\b\f\n\r\t");
}

/* Exactly at each limit is accepted; one past it is rejected by name. */
static void limits(void **state)
{
	(void)state;
	static char big[EVENT_MAX_STRING + 200];
	for (size_t len = EVENT_MAX_STRING; len <= EVENT_MAX_STRING + 1; len++) {
		int n = snprintf(big, sizeof(big), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"file\":\"");
		memset(big + n, 'x', len);
		strcpy(big + n + len, "\"}");
		assert_int_equal(decode(big, &ev),
				 len == EVENT_MAX_STRING ? DEC_OK : DEC_STRING_TOO_LONG);
		if (len == EVENT_MAX_STRING)
			assert_int_equal(strlen(ev.u.chunk.file), EVENT_MAX_STRING);
	}

	/* a whole text of exactly EVENT_JSON_MAX bytes is fine, one more is not */
	char *huge = malloc(EVENT_JSON_MAX + 1);
	const char *body = "{\"type\":\"chunk\",\"t\":5,\"duration\":1}";
	memset(huge, ' ', EVENT_JSON_MAX + 1);
	memcpy(huge, body, strlen(body));
	assert_int_equal(event_decode_json(huge, EVENT_JSON_MAX, &ev), DEC_OK);
	assert_int_equal(event_decode_json(huge, EVENT_JSON_MAX + 1, &ev), DEC_TOO_LARGE);
	free(huge);

	struct strbuf sb;
	strbuf_init(&sb);
	for (unsigned sections = EVENT_MAX_SECTIONS; sections <= EVENT_MAX_SECTIONS + 1; sections++) {
		strbuf_reset(&sb);
		strbuf_puts(&sb, "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"timing\":{");
		for (unsigned i = 0; i < sections; i++)
			strbuf_appendf(&sb, "%s\"s%u\":1", i ? "," : "", i);
		strbuf_puts(&sb, "}}");
		assert_int_equal(decode(sb.data, &ev),
				 sections == EVENT_MAX_SECTIONS ? DEC_OK : DEC_LIST_TOO_LONG);
	}
	for (unsigned items = EVENT_MAX_LIST; items <= EVENT_MAX_LIST + 1; items++) {
		strbuf_reset(&sb);
		strbuf_puts(&sb, "{\"type\":\"report\",\"t\":5,\"columns\":[");
		for (unsigned i = 0; i < items; i++)
			strbuf_puts(&sb, i ? ",\"c\"" : "\"c\"");
		strbuf_puts(&sb, "]}");
		assert_int_equal(decode(sb.data, &ev),
				 items == EVENT_MAX_LIST ? DEC_OK : DEC_LIST_TOO_LONG);
	}
	assert_int_equal(again.type, EV_NONE);
	strbuf_free(&sb);

	/* nesting: 16 levels in all are fine, 17 are not */
	char deep[128];
	for (int levels = EVENT_JSON_MAX_DEPTH; levels <= EVENT_JSON_MAX_DEPTH + 1; levels++) {
		int n = snprintf(deep, sizeof(deep), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":");
		for (int i = 1; i < levels; i++)
			deep[n++] = '[';
		for (int i = 1; i < levels; i++)
			deep[n++] = ']';
		strcpy(deep + n, "}");
		assert_int_equal(decode(deep, &ev),
				 levels == EVENT_JSON_MAX_DEPTH ? DEC_OK : DEC_TOO_DEEP);
	}
	/* percentages have a little slack for float noise */
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"bytes_read_percent\":"
				"100.0005}", &ev), DEC_OK);
}

/* Unknown chunk fields are kept up to EVENT_CUSTOM_MAX bytes; beyond that
 * they are dropped and the chunk is still accepted. */
static void custom_fields_bounded(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "{\"type\":\"chunk\",\"t\":5,\"duration\":1");
	for (int i = 0; i < 10; i++) { /* 10 x ~4 KiB > 16 KiB */
		strbuf_appendf(&sb, ",\"k%d\":\"", i);
		for (int k = 0; k < 4000; k++)
			strbuf_puts(&sb, "v");
		strbuf_puts(&sb, "\"");
	}
	strbuf_puts(&sb, "}");
	assert_int_equal(decode(sb.data, &ev), DEC_OK);
	const char *custom = ev.u.chunk.custom_json;
	assert_non_null(custom);
	assert_true(strlen(custom) <= EVENT_CUSTOM_MAX);
	assert_non_null(strstr(custom, "\"k0\":"));
	assert_non_null(strstr(custom, "\"k2\":"));
	assert_null(strstr(custom, "\"k9\":"));
	/* what was kept encodes back as top-level fields */
	strbuf_reset(&sb);
	assert_int_equal(event_encode_json(&ev, &sb), 0);
	assert_int_equal(event_decode_json(sb.data, sb.len, &again), DEC_OK);
	assert_string_equal(again.u.chunk.custom_json, custom);
	strbuf_free(&sb);
}

/* Every number the decoder reads is the double strtod reads from the same
 * text: integers, decimals, exponents, 15 to 20 digits, subnormal scale. */
static void numbers_exact(void **state)
{
	(void)state;
	srand(12345);
	char text[160], num[64];
	for (int i = 0; i < 20000; i++) {
		int kind = i % 5;
		unsigned long long m = ((unsigned long long)rand() << 31 | (unsigned)rand()) %
				       (kind == 3 ? 1000000000000000000ull : 10000000000000000ull);
		int frac = rand() % 19;
		switch (kind) {
		case 0: snprintf(num, sizeof(num), "%llu", m % 1000000000000000ull); break;
		case 1: snprintf(num, sizeof(num), "%llu.%0*d", m % 100000, frac % 9 + 1,
				 rand() % 100000000); break;
		case 2: snprintf(num, sizeof(num), "%llue-%d", m, frac + 3); break;
		case 3: snprintf(num, sizeof(num), "0.%0*llu", frac + 1, m); break;
		default: snprintf(num, sizeof(num), "-%llu.%llue%+d", m % 1000, m, rand() % 9 - 12);
		}
		snprintf(text, sizeof(text), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,"
					     "\"timing\":{\"x\":%s}}", num);
		enum decode_error e = decode(text, &ev);
		double want = strtod(num, NULL);
		if (e != DEC_OK || ev.u.chunk.timing[0].value != want)
			fail_msg("%s: %s %.17g, want %.17g", num, decode_error_name(e),
				 e ? 0 : ev.u.chunk.timing[0].value, want);
	}
	/* a mantissa of 2^53 + 1 is not exact in a double; strtod rounds it */
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"timing\":"
				"{\"x\":9007199254740993e-5}}", &ev), DEC_OK);
	assert_true(ev.u.chunk.timing[0].value == strtod("9007199254740993e-5", NULL));
	assert_true(ev.u.chunk.timing[0].value == 90071992547.40992);
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"timing\":"
				"{\"x\":-0.0,\"y\":1E2,\"z\":25E-1}}", &ev), DEC_OK);
	assert_true(ev.u.chunk.timing[0].value == 0);
	assert_true(ev.u.chunk.timing[1].value == 100);
	assert_true(ev.u.chunk.timing[2].value == 2.5);
}

/* Edge cases of the number grammar and of exact conversion, bit for bit
 * against strtod (the sign of zero included), and the malformed ones
 * rejected as not JSON. */
static void numbers_edge_cases_bitwise(void **state)
{
	(void)state;
	static const char *const good[] = {
		"0", "-0", "-0.0", "-0e0", "0e-5", "0.000", "1", "-1", "9007199254740992",
		"9007199254740993", "-9007199254740991", "123456789012345678", "1234567890123456789",
		"12345678901234567890123", "0.1", "0.2", "0.30000000000000004", "1.0000000000000002",
		"3.141592653589793", "2.718281828459045", "1767225600.123456", "1767225600.5",
		"0.1e1", "1E2", "1e+2", "1e-2", "25E-1", "1e22", "1e23", "1e-22", "1e-23",
		"123456789012345.67", "4.9e-324", "5e-324", "2.4703282292062327e-324",
		"2.2250738585072011e-308", "2.2250738585072014e-308", "1e-400", "-1e-400",
		"1e0000000000000000000000000002", "100000000000000000000000e-10",
		"0.000000000000000000000000000001", "999999999999999.9", "1e15", "-1e15",
		"17976931348623157e-16", "12.5e-1", "0.0000001", "8.98846567431158e-300",
	};
	char text[200];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,"
					     "\"timing\":{\"x\":%s}}", good[i]);
		double want = strtod(good[i], NULL);
		enum decode_error e = decode(text, &ev);
		if (fabs(want) > 1e15) {
			assert_int_equal(e, DEC_OUT_OF_RANGE);
			continue;
		}
		if (e != DEC_OK || memcmp(&ev.u.chunk.timing[0].value, &want, sizeof(want)) != 0)
			fail_msg("%s: %s %.17g, want %.17g", good[i], decode_error_name(e),
				 e ? 0 : ev.u.chunk.timing[0].value, want);
	}
	static const char *const bad[] = { "01", "-01", "00", "1.", "-", "+1", ".5", "1e",
					    "1e+", "1.e5", "0x10", "1.5.2", "--1", "1e5e",
					    "Infinity", "NaN", "1 2", "\"1\"" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"type\":\"chunk\",\"t\":5,\"duration\":%s}",
			 bad[i]);
		enum decode_error e = decode(text, &ev);
		if (e != DEC_NOT_JSON && e != DEC_BAD_TYPE)
			fail_msg("%s: %s", bad[i], decode_error_name(e));
	}
	/* too large for a double: out of range, as is past a field's bounds */
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1e400}", &ev),
			 DEC_OUT_OF_RANGE);
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":-0.5}", &ev),
			 DEC_OUT_OF_RANGE);
	/* integral fields: 1e3 and 1000.0 are integers, 1000.5 is not */
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"num_events\":1e3,"
				"\"entry_start\":1000.0}", &ev), DEC_OK);
	assert_true(ev.u.chunk.num_events.value == 1000 && ev.u.chunk.entry_start.value == 1000);
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,"
				"\"num_events\":1000.5}", &ev), DEC_OUT_OF_RANGE);
}

/* What cJSON alone would take and a line may not hold: json_check refuses
 * it before the tree is built. */
static void strict_where_cjson_is_lax(void **state)
{
	(void)state;
	static const struct bad cases[] = {
		{ "\xef\xbb\xbf{\"type\":\"chunk\",\"t\":5,\"duration\":1}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\x01\"duration\":1}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1}\x00", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1}{}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":\"a\tb\"}", DEC_NOT_JSON },
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":\"\\ud800\"}", DEC_BAD_UTF8 },
		/* a number cJSON cannot read whole, even in an unknown field */
		{ "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":"
		  "1000000000000000000000000000000000000000000000000000000000000000}", DEC_OUT_OF_RANGE },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].text) + (i == 2); /* the third ends in a NUL */
		enum decode_error e = event_decode_json(cases[i].text, len, &ev);
		if (e != cases[i].want)
			fail_msg("case %zu: %s, want %s", i, decode_error_name(e),
				 decode_error_name(cases[i].want));
		assert_int_equal(ev.type, EV_NONE);
	}
	/* far deeper than cJSON's own limit (1,000): still too deep, not unparsable */
	static char deep[4100];
	int n = snprintf(deep, sizeof(deep), "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":");
	for (int i = 0; i < 2000; i++)
		deep[n++] = '[';
	for (int i = 0; i < 2000; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	assert_int_equal(event_decode_json(deep, (size_t)n, &ev), DEC_TOO_DEEP);
	/* 63 characters are read */
	assert_int_equal(decode("{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":"
				"100000000000000000000000000000000000000000000000000000000000000}", &ev),
			 DEC_OK);
}

/* Random doubles in each field's range encode and decode to the same bits. */
static void numbers_round_trip(void **state)
{
	(void)state;
	srand(777);
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < 20000; i++) {
		uint64_t bits = (uint64_t)rand() << 40 ^ (uint64_t)rand() << 20 ^ (uint64_t)rand();
		double x;
		memcpy(&x, &bits, sizeof(x));
		if (!isfinite(x) || fabs(x) > 1e15 || x == 0)
			x = (double)rand() / RAND_MAX * (i % 2 ? 1e6 : 1e-6);
		x = (i % 3 == 0) ? round(x * 1e3) / 1e3 : x; /* short decimals too */
		fx_event(&ev, EV_CHUNK, false);
		struct kv_num kv = { "x", x };
		ev.u.chunk.timing = &kv;
		ev.u.chunk.n_timing = 1;
		ev.t = 1 + fabs(fmod(x, 1e10));
		strbuf_reset(&sb);
		assert_int_equal(event_encode_json(&ev, &sb), 0);
		assert_int_equal(event_decode_json(sb.data, sb.len, &again), DEC_OK);
		if (again.u.chunk.timing[0].value != x || again.t != ev.t)
			fail_msg("%.17g / %.17g came back from %s", x, ev.t, sb.data);
	}
	strbuf_free(&sb);
}

/* docs/protocol.md "heartbeat": host and pid are its fields; without
 * either, or out of range, it is rejected whole. */
static void heartbeat_decodes(void **state)
{
	(void)state;
	const char *text = "{\"type\":\"heartbeat\",\"t\":5,\"cpu_time\":12.5,"
			   "\"chunks_in_flight\":2,\"interval\":1,\"rss_bytes\":104857600,"
			   "\"worker\":\"w-0\",\"host\":\"node1\",\"pid\":4242,\"seq\":3}";
	assert_int_equal(decode(text, &ev), DEC_OK);
	const struct ev_heartbeat *h = &ev.u.heartbeat;
	assert_int_equal(ev.type, EV_HEARTBEAT);
	assert_string_equal(h->host, "node1");
	assert_string_equal(h->worker, "w-0");
	assert_true(h->pid.valid && h->pid.value == 4242);
	assert_true(h->cpu_time.value == 12.5 && h->chunks_in_flight.value == 2);
	assert_true(h->rss_bytes.value == 104857600 && h->interval.value == 1);
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(event_encode_json(&ev, &sb), 0);
	assert_int_equal(decode(sb.data, &again), DEC_OK);
	assert_int_equal(again.type, EV_HEARTBEAT);
	assert_true(again.u.heartbeat.rss_bytes.value == 104857600);
	assert_string_equal(again.u.heartbeat.worker, "w-0");
	strbuf_free(&sb);
	const struct {
		const char *text;
		enum decode_error e;
	} bad[] = {
		{ "{\"type\":\"heartbeat\",\"t\":5,\"pid\":1}", DEC_MISSING_FIELD },
		{ "{\"type\":\"heartbeat\",\"t\":5,\"host\":\"h\"}", DEC_MISSING_FIELD },
		{ "{\"type\":\"heartbeat\",\"t\":5,\"host\":\"h\",\"pid\":1.5}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"heartbeat\",\"t\":5,\"host\":\"h\",\"pid\":1,\"rss_bytes\":-1}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"heartbeat\",\"t\":5,\"host\":\"h\",\"pid\":1,\"interval\":0}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"heartbeat\",\"t\":5,\"host\":\"h\",\"pid\":1,\"worker\":3}",
		  DEC_BAD_TYPE },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(decode(bad[i].text, &ev), bad[i].e);
		assert_int_equal(ev.type, EV_NONE);
	}
}

/* Log lines and counters: old recordings lack them; a line of either is
 * bounded and checked (no datagram kind carries one: event_datagram.c). */
static void log_and_counters_decode(void **state)
{
	(void)state;
	assert_int_equal(decode("{\"type\":\"log\",\"t\":5,\"text\":\"hi\"}", &ev), DEC_OK);
	assert_int_equal(ev.u.log.level, LOG_INFO); /* the default */
	assert_int_equal(decode("{\"type\":\"log\",\"t\":5,\"level\":\"error\",\"text\":\"x\"}",
			 &ev), DEC_OK);
	assert_int_equal(ev.u.log.level, LOG_ERROR);
	assert_int_equal(decode("{\"type\":\"counters\",\"t\":5,\"source\":\"udp\",\"counters\":"
				"[[null,\"datagrams\",3],[\"rejected\",\"bad_tag\",1],"
				"[null,\"bad_tag\",1]]}", &ev), DEC_OK);
	assert_int_equal(ev.u.counters.n_counters, 3); /* one name in two groups */
	assert_null(ev.u.counters.counters[0].group);
	assert_string_equal(ev.u.counters.counters[1].group, "rejected");
	assert_true(ev.u.counters.counters[0].value == 3);
	/* a name twice in one group would be a JSON key twice */
	assert_int_equal(decode("{\"type\":\"counters\",\"t\":5,\"source\":\"udp\",\"counters\":"
				"[[\"rejected\",\"bad_tag\",1],[\"rejected\",\"bad_tag\",1]]}", &ev),
			 DEC_INCONSISTENT);
	assert_int_equal(decode("{\"type\":\"counters\",\"t\":5,\"source\":\"udp\",\"counters\":"
				"[[null,\"a\",1],[null,\"a\",2]]}", &ev), DEC_INCONSISTENT);
	assert_int_equal(decode("{\"type\":\"counters\",\"t\":5,\"source\":\"udp\",\"counters\":"
				"[[null,\"a\",1],[null,\"b\",2]]}", &ev), DEC_OK);
	char long_text[EVENT_LOG_TEXT_MAX + 64], many[64 * (EVENT_COUNTERS_MAX + 1) + 128];
	snprintf(long_text, sizeof(long_text), "{\"type\":\"log\",\"t\":5,\"text\":\"%0*d\"}",
		 (int)EVENT_LOG_TEXT_MAX + 1, 0);
	int n = snprintf(many, sizeof(many), "{\"type\":\"counters\",\"t\":5,\"source\":\"s\","
			 "\"counters\":[");
	for (unsigned i = 0; i <= EVENT_COUNTERS_MAX; i++)
		n += snprintf(many + n, sizeof(many) - (size_t)n, "%s[null,\"c%u\",1]", i ? "," : "", i);
	snprintf(many + n, sizeof(many) - (size_t)n, "]}");
	const struct bad cases[] = {
		{ "{\"type\":\"log\",\"t\":5}", DEC_MISSING_FIELD },
		{ "{\"type\":\"log\",\"t\":5,\"text\":\"x\",\"level\":\"loud\"}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"log\",\"t\":5,\"text\":7}", DEC_BAD_TYPE },
		{ long_text, DEC_STRING_TOO_LONG },
		{ "{\"type\":\"counters\",\"t\":5}", DEC_MISSING_FIELD },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"\"}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"s\",\"state\":\"x\"}",
		  DEC_INCONSISTENT },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"s\",\"counters\":[[null,\"a\"]]}",
		  DEC_BAD_TYPE },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"s\",\"counters\":[[null,\"a\",1,2]]}",
		  DEC_BAD_TYPE },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"s\",\"counters\":[[null,\"a\",-1]]}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"s\",\"counters\":[[null,\"a\",0.5]]}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"s\",\"counters\":"
		  "[[null,\"a\",9007199254740992]]}", DEC_OUT_OF_RANGE },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"s\",\"counters\":[[null,\"\",1]]}",
		  DEC_OUT_OF_RANGE },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":\"s\",\"counters\":[[null,null,1]]}",
		  DEC_BAD_TYPE },
		{ "{\"type\":\"counters\",\"t\":5,\"source\":"
		  "\"0123456789012345678901234567890123456789012345678901234567890123\"}",
		  DEC_STRING_TOO_LONG },
		{ many, DEC_LIST_TOO_LONG },
	};
	check_bad(cases, sizeof(cases) / sizeof(cases[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables_are_sorted),
		cmocka_unit_test(fields_found_by_index),
		cmocka_unit_test(error_names),
		cmocka_unit_test_setup_teardown(chunk_every_field, setup, teardown),
		cmocka_unit_test_setup_teardown(chunk_missing_fields_are_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(chunk_duration_from_times, setup, teardown),
		cmocka_unit_test_setup_teardown(sample_worker_count, setup, teardown),
		cmocka_unit_test_setup_teardown(other_types_decode, setup, teardown),
		cmocka_unit_test_setup_teardown(run_end_status_and_error, setup, teardown),
		cmocka_unit_test_setup_teardown(round_trip_every_type_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(reversed_members_decode_alike, setup, teardown),
		cmocka_unit_test_setup_teardown(keys_of_every_length, setup, teardown),
		cmocka_unit_test_setup_teardown(encode_omits_what_was_not_given, setup, teardown),
		cmocka_unit_test_setup_teardown(text_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(layout_does_not_matter, setup, teardown),
		cmocka_unit_test_setup_teardown(rejections_by_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(chunk_and_report_keep_run_id, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_run_id_rejected_as_run_start, setup, teardown),
		cmocka_unit_test_setup_teardown(utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(limits, setup, teardown),
		cmocka_unit_test_setup_teardown(custom_fields_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(numbers_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(numbers_edge_cases_bitwise, setup, teardown),
		cmocka_unit_test_setup_teardown(strict_where_cjson_is_lax, setup, teardown),
		cmocka_unit_test_setup_teardown(numbers_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(heartbeat_decodes, setup, teardown),
		cmocka_unit_test_setup_teardown(log_and_counters_decode, setup, teardown),
	};
	return cmocka_run_group_tests_name("event_json", tests, NULL, NULL);
}
