/* Datagram bodies: round trips of every kind, the same checks as the JSON
 * decoder, and every structural rejection. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "event_fixtures.h"
#include "roastop/event_datagram.h"

bool event_datagram_wire_ok(void);

static struct event ev, again;
static struct event_envelope env;

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

/* A body built by hand, byte by byte, as the spec says. */
struct body {
	unsigned char b[8192];
	size_t n;
};

static void b_byte(struct body *b, unsigned v)
{
	b->b[b->n++] = (unsigned char)v;
}

static void b_u16(struct body *b, size_t v)
{
	b_byte(b, v & 0xff);
	b_byte(b, (v >> 8) & 0xff);
}

static void b_double(struct body *b, double x)
{
	uint64_t u;
	memcpy(&u, &x, 8);
	for (int i = 0; i < 8; i++)
		b_byte(b, (unsigned)(u >> (8 * i)) & 0xff);
}

static void b_num(struct body *b, unsigned id, double x)
{
	b_byte(b, id);
	b_double(b, x);
}

static void b_rawstr(struct body *b, const char *s, size_t n)
{
	b_u16(b, n);
	memcpy(b->b + b->n, s, n);
	b->n += n;
}

static void b_str(struct body *b, unsigned id, const char *s)
{
	b_byte(b, id);
	b_rawstr(b, s, strlen(s));
}

/* kind, host "h", pid 7, seq 3, duration 1.5 */
static struct body minimal(void)
{
	struct body b = { .n = 0 };
	b_byte(&b, EVENT_DATAGRAM_CHUNK);
	b_str(&b, 16, "h");
	b_num(&b, 23, 7);
	b_num(&b, 24, 3);
	b_num(&b, 10, 1.5);
	return b;
}

static enum decode_error decode(const struct body *b)
{
	return event_datagram_decode(b->b, b->n, 1767225600.0, &again, &env);
}

static void wire_ids_in_range_and_unique(void **state)
{
	(void)state;
	assert_true(event_datagram_wire_ok());
}

/* encode -> decode gives back every field of the fixture chunk, full and
 * minimal, and the envelope from host, pid and seq. */
static void round_trip_exactly(void **state)
{
	(void)state;
	char why[128];
	for (int full = 0; full <= 1; full++) {
		struct strbuf sb;
		strbuf_init(&sb);
		fx_chunk(&ev, full);
		ev.u.chunk.custom_json = NULL; /* version 2 carries no custom fields */
		assert_int_equal(event_datagram_encode(&ev, NULL, &sb), 0);
		enum decode_error e = event_datagram_decode((const unsigned char *)sb.data, sb.len,
							  ev.t, &again, &env);
		assert_int_equal(e, DEC_OK);
		if (!fx_equal(&ev, &again, why, sizeof(why)))
			fail_msg("full %d: %s", full, why);
		if (full) {
			assert_string_equal(env.host, ev.u.chunk.host);
			assert_true(env.has_pid && env.pid == 4242);
			assert_true(env.has_seq && env.seq == 9007199254740991.0);
		}
		strbuf_free(&sb);
		event_reset(&ev);
	}
}

/* A chunk_start (kind 2) round-trips with every field its table has. */
static void chunk_start_round_trips(void **state)
{
	(void)state;
	char why[128];
	for (int full = 0; full <= 1; full++) {
		struct strbuf sb;
		strbuf_init(&sb);
		fx_event(&ev, EV_CHUNK_START, full);
		assert_int_equal(event_datagram_encode(&ev, NULL, &sb), 0);
		assert_int_equal((unsigned char)sb.data[0], EVENT_DATAGRAM_START);
		assert_int_equal(event_datagram_decode((const unsigned char *)sb.data, sb.len, ev.t,
						     &again, &env),
				 DEC_OK);
		assert_int_equal(again.type, EV_CHUNK_START);
		if (!fx_equal(&ev, &again, why, sizeof(why)))
			fail_msg("full %d: %s", full, why);
		assert_true(env.has_seq && env.seq == 17);
		strbuf_free(&sb);
	}
}

/* A kind-2 body takes only a start's fields: a chunk's duration, or its
 * start_seq (id 67), in one is bad_binary; entry_stop < entry_start is
 * inconsistent, as in a chunk. */
static void chunk_start_refuses_chunk_fields(void **state)
{
	(void)state;
	struct body b = { .n = 0 };
	b_byte(&b, EVENT_DATAGRAM_START);
	b_str(&b, 16, "h");
	b_num(&b, 23, 7);
	b_num(&b, 24, 3);
	assert_int_equal(decode(&b), DEC_OK);
	assert_int_equal(again.type, EV_CHUNK_START);
	struct body d = b;
	b_num(&d, 10, 1.5);
	assert_int_equal(decode(&d), DEC_BAD_BINARY);
	d = b;
	b_num(&d, EVENT_DATAGRAM_START_SEQ, 2);
	assert_int_equal(decode(&d), DEC_BAD_BINARY);
	d = b;
	b_num(&d, 11, 10);
	b_num(&d, 12, 5);
	assert_int_equal(decode(&d), DEC_INCONSISTENT);
	d = b;
	d.b[0] = 9; /* no such kind */
	assert_int_equal(decode(&d), DEC_BAD_BINARY);
	d.b[0] = 0;
	assert_int_equal(decode(&d), DEC_BAD_BINARY);
}

/* A heartbeat (kind 3, docs/protocol.md "heartbeat") round-trips; it takes
 * only its own ids, and host and pid are required. */
static void heartbeat_kind(void **state)
{
	(void)state;
	char why[128];
	for (int full = 0; full <= 1; full++) {
		struct strbuf sb;
		strbuf_init(&sb);
		fx_event(&ev, EV_HEARTBEAT, full);
		assert_int_equal(event_datagram_encode(&ev, NULL, &sb), 0);
		assert_int_equal((unsigned char)sb.data[0], EVENT_DATAGRAM_HEARTBEAT);
		assert_int_equal(event_datagram_decode((const unsigned char *)sb.data, sb.len, ev.t,
						     &again, &env),
				 DEC_OK);
		if (!fx_equal(&ev, &again, why, sizeof(why)))
			fail_msg("full %d: %s", full, why);
		assert_true(env.has_pid && env.pid == 4242 && env.has_seq && env.seq == 18);
		strbuf_free(&sb);
	}
	struct body b = { .n = 0 };
	b_byte(&b, EVENT_DATAGRAM_HEARTBEAT);
	b_str(&b, 16, "h");
	b_num(&b, 24, 3);
	struct body d = b;
	assert_int_equal(decode(&d), DEC_MISSING_FIELD); /* no pid */
	b_num(&b, 23, 7);
	b_num(&b, 31, 104857600);
	assert_int_equal(decode(&b), DEC_OK);
	assert_true(again.u.heartbeat.rss_bytes.value == 104857600);
	d = b;
	b_num(&d, 10, 1.5); /* a chunk's duration */
	assert_int_equal(decode(&d), DEC_BAD_BINARY);
	d = b;
	b_num(&d, 32, 0.5); /* chunks in flight: an integer */
	assert_int_equal(decode(&d), DEC_OUT_OF_RANGE);
	assert_int_equal(again.type, EV_NONE);
}

/* A chunk's start_seq (id 67) is kept; a fraction or a negative is out of range. */
static void chunk_start_seq_field(void **state)
{
	(void)state;
	struct body b = minimal();
	b_num(&b, EVENT_DATAGRAM_START_SEQ, 2);
	assert_int_equal(decode(&b), DEC_OK);
	assert_true(again.u.chunk.start_seq.valid && again.u.chunk.start_seq.value == 2);
	b = minimal();
	b_num(&b, EVENT_DATAGRAM_START_SEQ, 2.5);
	assert_int_equal(decode(&b), DEC_OUT_OF_RANGE);
	b = minimal();
	b_num(&b, EVENT_DATAGRAM_START_SEQ, -1);
	assert_int_equal(decode(&b), DEC_OUT_OF_RANGE);
}

/* run_start, run_end and a report (kinds 4 to 6) round-trip whole, with
 * the sender's envelope; a split report's part with its report_id, part
 * and parts. Each kind's own checks hold: a run_start needs its run_id, a
 * run_end's status is one roastop knows. */
static void run_kinds_round_trip(void **state)
{
	(void)state;
	const enum event_type types[] = { EV_RUN_START, EV_RUN_END, EV_REPORT };
	const int kinds[] = { EVENT_DATAGRAM_RUN_START, EVENT_DATAGRAM_RUN_END,
			      EVENT_DATAGRAM_REPORT };
	struct event_envelope out;
	event_envelope_clear(&out);
	snprintf(out.host, sizeof(out.host), "node1");
	out.has_pid = out.has_seq = true;
	out.pid = 4242;
	out.seq = 5;
	out.instance = 77;
	char why[128];
	for (size_t i = 0; i < 3; i++) {
		struct strbuf sb;
		strbuf_init(&sb);
		fx_event(&ev, types[i], true);
		if (types[i] == EV_REPORT) {
			snprintf(out.report_id, sizeof(out.report_id), "abc");
			out.part = 1;
			out.parts = 3;
		}
		assert_int_equal(event_datagram_encode(&ev, &out, &sb), 0);
		assert_int_equal((unsigned char)sb.data[0], kinds[i]);
		assert_int_equal(event_datagram_decode((const unsigned char *)sb.data, sb.len, ev.t,
						       &again, &env),
				 DEC_OK);
		if (!fx_equal(&ev, &again, why, sizeof(why)))
			fail_msg("kind %d: %s", kinds[i], why);
		assert_string_equal(env.host, "node1");
		assert_true(env.pid == 4242 && env.seq == 5 && env.instance == 77);
		assert_string_equal(env.report_id, types[i] == EV_REPORT ? "abc" : "");
		assert_int_equal(env.part, types[i] == EV_REPORT ? 1 : 0);
		strbuf_free(&sb);
		event_reset(&ev);
	}
	struct body b = { .n = 0 };
	b_byte(&b, EVENT_DATAGRAM_RUN_START);
	b_str(&b, 5, "analysis");
	assert_int_equal(decode(&b), DEC_MISSING_FIELD); /* no run_id */
	b.n = 0;
	b_byte(&b, EVENT_DATAGRAM_RUN_END);
	b_str(&b, EVENT_DATAGRAM_RUN_ID, "r");
	b_str(&b, 4, "exploded");
	assert_int_equal(decode(&b), DEC_OUT_OF_RANGE); /* no such status */
	b.n = 0;
	b_byte(&b, EVENT_DATAGRAM_RUN_END);
	b_str(&b, EVENT_DATAGRAM_REPORT_ID, "x"); /* a report's envelope only */
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
}

/* A hello (kind 7) is an envelope and a nonce, no event and no seq; an ack
 * (kind 8) a nonce alone. The nonce is 16 to 64 lowercase hex digits. */
static void hello_and_ack(void **state)
{
	(void)state;
	struct event_envelope out;
	event_envelope_clear(&out);
	out.kind = EVENT_DATAGRAM_HELLO;
	snprintf(out.host, sizeof(out.host), "h");
	snprintf(out.nonce, sizeof(out.nonce), "0123456789abcdef");
	out.has_pid = true;
	out.pid = 7;
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(event_datagram_encode(NULL, &out, &sb), 0);
	assert_int_equal(event_datagram_decode((const unsigned char *)sb.data, sb.len, 1, &again,
					       &env),
			 DEC_OK);
	assert_int_equal(env.kind, EVENT_DATAGRAM_HELLO);
	assert_int_equal(again.type, EV_NONE);
	assert_string_equal(env.nonce, "0123456789abcdef");
	assert_true(env.has_pid && !env.has_seq);
	strbuf_reset(&sb);
	out.kind = EVENT_DATAGRAM_ACK;
	assert_int_equal(event_datagram_encode(NULL, &out, &sb), 0);
	assert_int_equal(sb.len, 1 + 1 + 2 + 16); /* the host and pid are not an ack's */
	assert_int_equal(event_datagram_decode((const unsigned char *)sb.data, sb.len, 1, &again,
					       &env),
			 DEC_OK);
	assert_int_equal(env.kind, EVENT_DATAGRAM_ACK);
	strbuf_free(&sb);
	const char *bad[] = { "", "0123", "0123456789ABCDEF", "0123456789abcdeg" };
	for (size_t i = 0; i < 4; i++) {
		struct body b = { .n = 0 };
		b_byte(&b, EVENT_DATAGRAM_HELLO);
		b_str(&b, 16, "h");
		b_str(&b, EVENT_DATAGRAM_NONCE, bad[i]);
		assert_int_equal(decode(&b), DEC_MISSING_FIELD);
	}
	struct body b = { .n = 0 };
	b_byte(&b, EVENT_DATAGRAM_HELLO);
	b_str(&b, EVENT_DATAGRAM_NONCE, "0123456789abcdef");
	b_num(&b, EVENT_DATAGRAM_SEQ, 1); /* outside the sequence */
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
}

static void smaller_than_json(void **state)
{
	(void)state;
	struct strbuf bin, json;
	strbuf_init(&bin);
	strbuf_init(&json);
	fx_chunk(&ev, true);
	ev.u.chunk.custom_json = NULL;
	assert_int_equal(event_datagram_encode(&ev, NULL, &bin), 0);
	assert_int_equal(event_encode_json(&ev, &json), 0);
	assert_true(bin.len < json.len);
	strbuf_free(&bin);
	strbuf_free(&json);
}

static void minimal_body_decodes(void **state)
{
	(void)state;
	struct body b = minimal();
	assert_int_equal(decode(&b), DEC_OK);
	assert_int_equal(again.type, EV_CHUNK);
	assert_true(again.t == 1767225600.0);
	assert_true(again.u.chunk.duration.value == 1.5);
	assert_string_equal(env.host, "h");
	assert_true(env.pid == 7 && env.seq == 3);
	assert_null(again.u.chunk.run_id);
	b_num(&b, EVENT_DATAGRAM_SENT, 1767225600.5); /* read, not kept */
	assert_int_equal(decode(&b), DEC_OK);
	assert_null(again.u.chunk.custom_json);
}

/* id 64 is the chunk's run_id, wherever it stands: the decorator ships it
 * in a Static block (with dataset and file) ahead of the chunk's own
 * fields. Its checks are the JSON decoder's (and run_start's): at most
 * EVENT_MAX_STRING bytes of UTF-8; twice is bad_binary. */
static void run_id_kept(void **state)
{
	(void)state;
	struct body b = { .n = 0 };
	b_byte(&b, EVENT_DATAGRAM_CHUNK);
	b_str(&b, 16, "h");
	b_num(&b, 26, 1767225600.0);
	b_num(&b, 25, 1767225601.0);
	b_num(&b, 23, 7);
	b_num(&b, 24, 3);
	b_str(&b, EVENT_DATAGRAM_RUN_ID, "5f0c2b9d"); /* the Static block */
	b_str(&b, 9, "DY");
	b_str(&b, 14, "f.root");
	b_num(&b, 22, 1000); /* the chunk's own */
	assert_int_equal(decode(&b), DEC_OK);
	assert_string_equal(again.u.chunk.run_id, "5f0c2b9d");
	assert_string_equal(again.u.chunk.dataset, "DY");
	struct body twice = b;
	b_str(&twice, EVENT_DATAGRAM_RUN_ID, "5f0c2b9d");
	assert_int_equal(decode(&twice), DEC_BAD_BINARY);
	assert_int_equal(again.type, EV_NONE);
	static char id[EVENT_MAX_STRING + 2];
	for (size_t len = EVENT_MAX_STRING; len <= EVENT_MAX_STRING + 1; len++) {
		b = minimal();
		memset(id, 'r', len);
		b_byte(&b, EVENT_DATAGRAM_RUN_ID);
		b_rawstr(&b, id, len);
		assert_int_equal(decode(&b), len == EVENT_MAX_STRING ? DEC_OK : DEC_STRING_TOO_LONG);
	}
	const struct {
		const char *s;
		size_t n;
	} bad[] = { { "\xff", 1 }, { "a\0b", 3 } };
	for (size_t i = 0; i < 2; i++) {
		b = minimal();
		b_byte(&b, EVENT_DATAGRAM_RUN_ID);
		b_rawstr(&b, bad[i].s, bad[i].n);
		assert_int_equal(decode(&b), DEC_BAD_UTF8);
	}
}

/* The sender's instance id (id 66, envelope only): a whole number up to
 * 2^53 - 1, 0 when absent; another value is out_of_range, twice bad_binary. */
static void instance_in_the_envelope(void **state)
{
	(void)state;
	struct body b = minimal();
	assert_int_equal(decode(&b), DEC_OK);
	assert_true(env.instance == 0);
	b_num(&b, EVENT_DATAGRAM_INSTANCE, 9007199254740991.0);
	assert_int_equal(decode(&b), DEC_OK);
	assert_true(env.instance == 9007199254740991.0);
	assert_null(again.u.chunk.custom_json);
	b_num(&b, EVENT_DATAGRAM_INSTANCE, 1);
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
	assert_true(env.instance == 0); /* cleared with the rest */
	const double bad[] = { -1, 0.5, 9007199254740992.0, 1e300 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = minimal();
		b_num(&b, EVENT_DATAGRAM_INSTANCE, bad[i]);
		assert_int_equal(decode(&b), DEC_OUT_OF_RANGE);
	}
}

/* The JSON decoder's bounds: each value fails as out_of_range. */
static void ranges_as_in_json(void **state)
{
	(void)state;
	const struct {
		unsigned id;
		double x;
	} bad[] = { { 10, -1 }, { 11, 1.5 }, { 22, 2e15 }, { 23, -3 }, { 4, 101 }, { 19, -2e9 } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct body b = { .n = 0 };
		b_byte(&b, EVENT_DATAGRAM_CHUNK);
		b_num(&b, 26, 1767225600.0);
		b_num(&b, 25, 1767225601.0);
		b_num(&b, bad[i].id, bad[i].x);
		if (decode(&b) != DEC_OUT_OF_RANGE)
			fail_msg("id %u value %g: %s", bad[i].id, bad[i].x,
				 decode_error_name(decode(&b)));
		assert_int_equal(again.type, EV_NONE); /* nothing half-applied */
	}
	struct body b = minimal();
	b_num(&b, 12, 1); /* entry_stop below entry_start */
	b_num(&b, 11, 5);
	assert_int_equal(decode(&b), DEC_INCONSISTENT);
}

static void structural_rejections(void **state)
{
	(void)state;
	struct body b = minimal();
	b_num(&b, 10, 2); /* duration twice */
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
	b = minimal();
	b_num(&b, 31, 2); /* no such id */
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
	b = minimal();
	b.b[0] = 2; /* no such kind */
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
	b = minimal();
	b_num(&b, 8, NAN);
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
	b = minimal();
	b_num(&b, 8, INFINITY);
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
	assert_int_equal(event_datagram_decode(b.b, 0, 1, &again, &env), DEC_BAD_BINARY);
	b = minimal();
	b_byte(&b, 1); /* accessed_branches: 60000 strings in a few bytes */
	b_u16(&b, 60000);
	b_u16(&b, 0);
	assert_int_equal(decode(&b), DEC_BAD_BINARY);
	assert_int_equal(again.type, EV_NONE);
}

/* Cut anywhere: a whole shorter message or a clean rejection, never a
 * half-filled event. */
static void every_truncation_is_clean(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	fx_chunk(&ev, true);
	ev.u.chunk.custom_json = NULL;
	assert_int_equal(event_datagram_encode(&ev, NULL, &sb), 0);
	size_t ok = 0, bad = 0;
	for (size_t cut = 0; cut < sb.len; cut++) {
		enum decode_error e =
			event_datagram_decode((const unsigned char *)sb.data, cut, 1, &again, &env);
		if (e == DEC_OK) {
			ok++;
		} else {
			bad++;
			assert_int_equal(again.type, EV_NONE);
			assert_int_equal(env.host[0], 0);
		}
	}
	assert_true(bad > sb.len / 2); /* most cuts land inside a value */
	assert_true(ok >= 1); /* some land on a field boundary after duration */
	strbuf_free(&sb);
}

static void strings_checked(void **state)
{
	(void)state;
	struct body b = minimal();
	b_str(&b, 9, "bad \xc3\x28 utf8");
	assert_int_equal(decode(&b), DEC_BAD_UTF8);
	b = minimal();
	b_byte(&b, 9);
	b_rawstr(&b, "a\0b", 3);
	assert_int_equal(decode(&b), DEC_BAD_UTF8);
	b = minimal();
	static char big[EVENT_MAX_STRING + 2];
	memset(big, 'x', sizeof(big) - 1);
	b_str(&b, 14, big);
	assert_int_equal(decode(&b), DEC_STRING_TOO_LONG);
	b = minimal();
	b_str(&b, 9, "\xf0\x9f\x98\x80 ok");
	assert_int_equal(decode(&b), DEC_OK);
	assert_string_equal(again.u.chunk.dataset, "\xf0\x9f\x98\x80 ok");
}

/* Strings are scanned a word at a time: a NUL in any place of a word or of
 * the tail is refused; \x01 and two-byte UTF-8 (both legal) never look like
 * a NUL; what is accepted is copied byte for byte. */
static void string_scan_every_place(void **state)
{
	(void)state;
	const char *fills[] = { "a", "\x01", "\xc3\xa9" };
	for (size_t len = 1; len <= 40; len++) {
		for (size_t f = 0; f < 3; f++) {
			char s[96] = "";
			while (strlen(s) < len)
				strcat(s, fills[f]);
			struct body b = minimal();
			b_str(&b, 9, s);
			assert_int_equal(decode(&b), DEC_OK);
			assert_string_equal(again.u.chunk.dataset, s);
		}
		for (size_t at = 0; at < len; at++) {
			char s[64];
			memset(s, 'x', len);
			s[at] = '\0';
			struct body b = minimal();
			b_byte(&b, 9);
			b_rawstr(&b, s, len);
			assert_int_equal(decode(&b), DEC_BAD_UTF8);
		}
	}
}

static void sections_and_metadata_checked(void **state)
{
	(void)state;
	struct body b = minimal();
	b_byte(&b, 28); /* timing: 257 sections */
	b_u16(&b, 257);
	for (int i = 0; i < 257; i++) {
		b_rawstr(&b, "s", 1);
		b_double(&b, 1);
	}
	assert_int_equal(decode(&b), DEC_LIST_TOO_LONG);
	b = minimal();
	b_byte(&b, 15); /* file_metadata without filename */
	b_byte(&b, 1);
	b_num(&b, 1, 0.5);
	assert_int_equal(decode(&b), DEC_MISSING_FIELD);
	b = minimal();
	b_byte(&b, 15);
	b_byte(&b, 2);
	b_str(&b, 2, "f.root");
	b_num(&b, 3, 1200);
	assert_int_equal(decode(&b), DEC_OK);
	assert_true(again.u.chunk.has_file_metadata);
	assert_string_equal(again.u.chunk.file_metadata.filename, "f.root");
	assert_true(again.u.chunk.file_metadata.total_branches.value == 1200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wire_ids_in_range_and_unique),
		cmocka_unit_test_setup_teardown(round_trip_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(smaller_than_json, setup, teardown),
		cmocka_unit_test_setup_teardown(chunk_start_round_trips, setup, teardown),
		cmocka_unit_test_setup_teardown(chunk_start_refuses_chunk_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(heartbeat_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(chunk_start_seq_field, setup, teardown),
		cmocka_unit_test_setup_teardown(run_kinds_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(hello_and_ack, setup, teardown),
		cmocka_unit_test_setup_teardown(minimal_body_decodes, setup, teardown),
		cmocka_unit_test_setup_teardown(run_id_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(instance_in_the_envelope, setup, teardown),
		cmocka_unit_test_setup_teardown(ranges_as_in_json, setup, teardown),
		cmocka_unit_test_setup_teardown(structural_rejections, setup, teardown),
		cmocka_unit_test_setup_teardown(every_truncation_is_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(strings_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(string_scan_every_place, setup, teardown),
		cmocka_unit_test_setup_teardown(sections_and_metadata_checked, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
