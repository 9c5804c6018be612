/* The datagram path without a socket: framing, tags, sequencing, reports. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "datagram_util.h"
#include "roastop/strbuf.h"
#include "roastop/udp.h"

static struct auth_key KEY;
static int applied;
static uint64_t last_columns;
static char last_run_id[64]; /* the last chunk's or report's; "-" for none */

static void deliver(void *ctx, const struct event *ev)
{
	(void)ctx;
	applied++;
	if (ev->type == EV_REPORT)
		last_columns = ev->u.report.n_columns;
	const char *id = ev->type == EV_CHUNK	 ? ev->u.chunk.run_id
			 : ev->type == EV_REPORT ? ev->u.report.run_id
						 : "(other)";
	snprintf(last_run_id, sizeof(last_run_id), "%s", id ? id : "-");
}

static void datagram(struct udp *u, const struct auth_key *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Encodes, frames and signs a message the way the Python emitter does
 * (datagram_util.h: written as JSON, sent as the binary body). */
static void datagram(struct udp *u, const struct auth_key *k, const char *fmt, ...)
{
	char json[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(json, sizeof(json), fmt, ap);
	va_end(ap);
	struct strbuf sb;
	strbuf_init(&sb);
	assert_true(dg_datagram(k, json, &sb));
	udp_process(u, sb.data, sb.len, 1767225600.0, deliver, NULL);
	strbuf_free(&sb);
}

#define CHUNK "{\"type\":\"chunk\",\"run_id\":\"r\",\"host\":\"h\",\"pid\":1,\"seq\":%d,\"duration\":1}"

static int setup(void **state)
{
	(void)state;
	applied = 0;
	memset(&KEY, 0, sizeof(KEY));
	for (int i = 0; i < AUTH_KEY_LEN; i++)
		KEY.key[i] = (uint8_t)(i * 7 + 1);
	return 0;
}

static void tags_are_checked(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	struct auth_key other = KEY;
	other.key[0] ^= 1;
	datagram(u, &KEY, CHUNK, 0);
	datagram(u, &other, CHUNK, 1);
	datagram(u, NULL, CHUNK, 2);
	udp_process(u, "XXXX - {}", 9, 1, deliver, NULL);
	struct strbuf zeroed;
	strbuf_init(&zeroed);
	assert_true(dg_datagram(&KEY, "{\"type\":\"chunk\",\"host\":\"h\",\"pid\":1,"
				      "\"seq\":3,\"duration\":1}", &zeroed));
	memset(zeroed.data + 5, 0, AUTH_TAG_LEN);
	udp_process(u, zeroed.data, zeroed.len, 1, deliver, NULL);
	strbuf_free(&zeroed);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, 1);
	assert_int_equal(st.rejected[UDP_BAD_TAG], 2);
	assert_int_equal(st.rejected[UDP_NO_TAG], 1);
	assert_int_equal(st.rejected[UDP_BAD_MAGIC], 1);
	assert_int_equal(st.datagrams, 5);
	udp_close(u);
}

static void datagram_via(struct udp *u, enum udp_path path, const char *host, int seq)
{
	char json[256];
	snprintf(json, sizeof(json),
		 "{\"type\":\"chunk\",\"run_id\":\"r\",\"host\":\"%s\",\"pid\":1,"
		 "\"seq\":%d,\"duration\":1}", host, seq);
	struct strbuf sb;
	strbuf_init(&sb);
	assert_true(dg_datagram(&KEY, json, &sb));
	udp_process_path(u, sb.data, sb.len, 1767225600.0, path, deliver, NULL);
	strbuf_free(&sb);
}

/* The Dask path goes through the same sender and sequence: a process that
 * switches is one sender, counted once under its latest path; a datagram
 * seen on both paths is applied once; a gap across the switch is a loss;
 * the tag is checked either way. */
static void paths_share_one_sequence(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	datagram_via(u, UDP_PATH_UDP, "a", 0);
	datagram_via(u, UDP_PATH_DASK, "a", 1);
	datagram_via(u, UDP_PATH_UDP, "a", 1); /* the same datagram again: a duplicate */
	datagram_via(u, UDP_PATH_DASK, "a", 3); /* 2 never came: missing */
	datagram_via(u, UDP_PATH_UDP, "b", 0);
	struct auth_key other = KEY;
	other.key[0] ^= 1;
	struct strbuf sb;
	strbuf_init(&sb);
	assert_true(dg_datagram(&other, "{\"type\":\"chunk\",\"host\":\"c\",\"pid\":1,"
					"\"seq\":0,\"duration\":1}", &sb));
	udp_process_path(u, sb.data, sb.len, 1, UDP_PATH_DASK, deliver, NULL);
	strbuf_free(&sb);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, 4);
	assert_int_equal(st.senders, 2);
	assert_int_equal(st.senders_by_path[UDP_PATH_UDP], 1);
	assert_int_equal(st.senders_by_path[UDP_PATH_DASK], 1);
	assert_int_equal(st.datagrams_by_path[UDP_PATH_UDP], 3);
	assert_int_equal(st.datagrams_by_path[UDP_PATH_DASK], 3);
	assert_int_equal(st.rejected[UDP_DUPLICATE], 1);
	assert_int_equal(st.rejected[UDP_BAD_TAG], 1);
	assert_int_equal(st.missing, 1);
	udp_close(u);
}

static void no_auth_accepts_untagged(void **state)
{
	(void)state;
	struct udp *u = udp_new(NULL);
	datagram(u, NULL, CHUNK, 0);
	datagram(u, &KEY, CHUNK, 1); /* tagged is fine too */
	assert_int_equal(applied, 2);
	udp_close(u);
}

static void duplicates_order_gaps_and_stale(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	const int order[] = { 0, 1, 3, 2, 2, 5, 1, 2000, 3 };
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		datagram(u, &KEY, CHUNK, order[i]);
	datagram(u, &KEY, CHUNK, 900); /* 2000 - 900 > 1024: stale */
	struct udp_stats st;
	udp_get_stats(u, &st);
	/* applied: 0 1 3 2 5 2000 */
	assert_int_equal(applied, 6);
	assert_int_equal(st.rejected[UDP_DUPLICATE], 2);
	assert_int_equal(st.rejected[UDP_STALE], 2); /* seq 3 after 2000, and 900 */
	assert_int_equal(st.out_of_order, 1);
	assert_int_equal(st.missing, 2001 - 6);
	assert_int_equal(st.senders, 1);
	udp_close(u);
}

static void senders_counted_apart(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	datagram(u, &KEY, "{\"type\":\"run_end\",\"run_id\":\"r\",\"host\":\"a\",\"pid\":1,\"seq\":0}");
	datagram(u, &KEY, "{\"type\":\"run_end\",\"run_id\":\"r\",\"host\":\"b\",\"pid\":1,\"seq\":0}");
	datagram(u, &KEY, "{\"type\":\"run_end\",\"run_id\":\"r\",\"host\":\"a\",\"pid\":2,\"seq\":0}");
	datagram(u, &KEY, "{\"type\":\"run_end\",\"run_id\":\"r\",\"seq\":0}");
	datagram(u, &KEY, "{\"type\":\"chunk\",\"host\":\"a\",\"pid\":1,\"seq\":1,\"duration\":-1}");
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, 3);
	assert_int_equal(st.senders, 3);
	assert_int_equal(st.rejected[UDP_NO_SENDER], 1);
	assert_int_equal(st.json.by_reason[DEC_OUT_OF_RANGE], 1);
	udp_close(u);
}

/* The last sender is remembered to skip the map lookup: interleaved
 * senders (past the map's growth), hosts that are prefixes of one another
 * and pid -0 against 0 must still each keep their own window. */
static void last_sender_cache_keeps_senders_apart(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
#define END_H "{\"type\":\"run_end\",\"run_id\":\"r\",\"host\":\"h%d\",\"pid\":1,\"seq\":%d}"
	for (int seq = 0; seq < 3; seq++)
		for (int h = 0; h < 300; h++)
			datagram(u, &KEY, END_H, h, seq);
	for (int h = 0; h < 300; h++)
		datagram(u, &KEY, END_H, h, 1); /* each one a duplicate, one sender after another */
	datagram(u, &KEY, END_H, 7, 1);
	datagram(u, &KEY, END_H, 7, 5); /* gap of two in h7 only */
	datagram(u, &KEY, "{\"type\":\"run_end\",\"run_id\":\"r\",\"host\":\"h1\",\"pid\":-0,"
			  "\"seq\":1}"); /* prints as another key than pid 0: its own sender */
	datagram(u, &KEY, "{\"type\":\"run_end\",\"run_id\":\"r\",\"host\":\"h1\",\"pid\":0,"
			  "\"seq\":1}");
	datagram(u, &KEY, "{\"type\":\"run_end\",\"run_id\":\"r\",\"host\":\"h1\",\"pid\":0,"
			  "\"seq\":1}");
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, 900 + 1 + 2);
	assert_int_equal(st.rejected[UDP_DUPLICATE], 300 + 1 + 1);
	assert_int_equal(st.senders, 302);
	assert_int_equal(st.missing, 2 + 1 + 1); /* h7's gap; seq 0 of h1/-0 and of h1/0 */
	udp_close(u);
}

#define PART "{\"type\":\"report\",\"host\":\"h\",\"pid\":1,\"seq\":%d,\"report_id\":\"%s\"," \
	     "\"part\":%d,\"parts\":%d,\"entries\":%d,\"columns\":[\"a-data\",\"b-data\"]}"

static void split_report_applied_once_whole(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	datagram(u, &KEY, PART, 0, "x", 2, 3, 0);
	datagram(u, &KEY, PART, 1, "x", 0, 3, 500);
	assert_int_equal(applied, 0);
	datagram(u, &KEY, PART, 2, "x", 1, 3, 0);
	assert_int_equal(applied, 1);
	assert_int_equal(last_columns, 6);
	datagram(u, &KEY, PART, 3, "y", 5, 3, 0); /* part beyond parts */
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(st.json.by_reason[DEC_INCONSISTENT], 1);
	assert_int_equal(applied, 1);
	udp_close(u);
}

#define PART_R "{\"type\":\"report\",\"run_id\":\"%s\",\"host\":\"h\",\"pid\":1,\"seq\":%d," \
	       "\"report_id\":\"z\",\"part\":%d,\"parts\":2,\"columns\":[\"a\"]}"

/* A chunk and a report (whole or split) reach the session
 * with their run_id; a split report's is part 0's, as are its numbers. A bad
 * run_id is a counted rejection. */
static void run_id_reaches_the_session(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	datagram(u, &KEY, CHUNK, 0);
	assert_string_equal(last_run_id, "r");
	datagram(u, &KEY, "{\"type\":\"report\",\"host\":\"h\",\"pid\":1,\"seq\":1,\"chunks\":2}");
	assert_string_equal(last_run_id, "-");
	datagram(u, &KEY, PART_R, "run-7", 2, 1);
	datagram(u, &KEY, PART_R, "run-7", 3, 0);
	assert_int_equal(applied, 3);
	assert_string_equal(last_run_id, "run-7");
	datagram(u, &KEY, PART_R, "run-8", 4, 0);
	datagram(u, &KEY, "{\"type\":\"chunk\",\"host\":\"h\",\"pid\":1,\"seq\":5,\"duration\":1}");
	assert_string_equal(last_run_id, "-"); /* the previous report's is not kept */
	datagram(u, &KEY, PART_R, "run-x", 6, 1);
	assert_int_equal(applied, 5);
	assert_string_equal(last_run_id, "run-8");
	datagram(u, &KEY, "{\"type\":\"chunk\",\"run_id\":\"\xff\",\"host\":\"h\",\"pid\":1,"
			  "\"seq\":7,\"duration\":1}");
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, 5);
	assert_int_equal(st.json.by_reason[DEC_BAD_UTF8], 1);
	udp_close(u);

	u = udp_new(NULL);
	struct event e;
	event_init(&e);
	e.type = EV_CHUNK;
	e.u.chunk.duration = optnum_of(1);
	e.u.chunk.pid = optnum_of(1);
	e.u.chunk.seq = optnum_of(0);
	e.u.chunk.host = "h";
	e.u.chunk.run_id = "run-v2";
	struct strbuf dg;
	strbuf_init(&dg);
	strbuf_append(&dg, "RTP2\0", 5);
	assert_int_equal(event_datagram_encode(&e, NULL, &dg), 0);
	udp_process(u, dg.data, dg.len, 1767225600.0, deliver, NULL);
	assert_string_equal(last_run_id, "run-v2");
	strbuf_free(&dg);
	event_free(&e);
	udp_close(u);
}

static void oversize_rejected(void **state)
{
	(void)state;
	struct udp *u = udp_new(NULL);
	static char big[UDP_MAX_DATAGRAM + 10];
	memset(big, ' ', sizeof(big));
	udp_process(u, big, sizeof(big), 1, deliver, NULL);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(st.rejected[UDP_TOO_LARGE], 1);
	udp_close(u);
}

/* A version-2 chunk (host "h", pid 1, seq, duration 1, instance unless it
 * is negative) framed with flags and a raw tag under k (or untagged), as the
 * Python emitter frames it. */
static void datagram_v2i(struct udp *u, const struct auth_key *k, unsigned flags, double seq,
			 const char *host, double instance)
{
	struct event e;
	event_init(&e);
	e.type = EV_CHUNK;
	e.u.chunk.duration = optnum_of(1);
	e.u.chunk.pid = optnum_of(1);
	e.u.chunk.seq = optnum_of(seq);
	e.u.chunk.host = host;
	struct strbuf body, dg;
	strbuf_init(&body);
	strbuf_init(&dg);
	assert_int_equal(event_datagram_encode(&e, NULL, &body), 0);
	if (instance >= 0) {
		char id = EVENT_DATAGRAM_INSTANCE;
		strbuf_append(&body, &id, 1);
		strbuf_append(&body, (const char *)&instance, 8); /* little-endian host */
	}
	strbuf_appendf(&dg, "RTP2%c", (char)flags);
	if (flags == 1) {
		uint8_t tag[AUTH_TAG_LEN];
		auth_tag_raw(k ? k : &KEY, body.data, body.len, tag);
		strbuf_append(&dg, (const char *)tag, sizeof(tag));
	}
	strbuf_append(&dg, body.data, body.len);
	udp_process(u, dg.data, dg.len, 1767225600.0, deliver, NULL);
	strbuf_free(&body);
	strbuf_free(&dg);
	event_free(&e);
}

static void datagram_v2(struct udp *u, const struct auth_key *k, unsigned flags, int seq,
			const char *host)
{
	datagram_v2i(u, k, flags, seq, host, -1);
}

#define CHUNK_I "{\"type\":\"chunk\",\"host\":\"h\",\"pid\":1,\"instance\":%.0f,\"seq\":%d," \
		"\"duration\":1}"

/* A restart with the same host and pid is a new sender through its instance
 * id; without one it is instance 0. */
static void instance_makes_a_restart_a_new_sender(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	for (int seq = 0; seq < 2000; seq++)
		datagram(u, &KEY, CHUNK, seq); /* no instance */
	for (int seq = 0; seq < 100; seq++)
		datagram_v2i(u, &KEY, 1, seq, "h", 5);
	for (int seq = 0; seq < 100; seq++)
		datagram(u, &KEY, CHUNK_I, 9007199254740991.0, seq);
	datagram(u, &KEY, CHUNK_I, 5.0, 7); /* instance 5's seq 7 again */
	datagram_v2i(u, &KEY, 1, 7, "h", 9007199254740991.0);
	datagram_v2i(u, &KEY, 1, 3, "h", 0); /* instance 0 is the one without */
	datagram(u, &KEY, CHUNK_I, 9007199254740992.0, 200); /* not exactly a double's */
	datagram_v2i(u, &KEY, 1, 200, "h", 1.5);
	datagram_v2i(u, &KEY, 1, 200, "h", 9007199254740992.0);
	datagram(u, &KEY, CHUNK_I, -1.0, 200);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, 2200);
	assert_int_equal(st.senders, 3);
	assert_int_equal(st.rejected[UDP_DUPLICATE], 2);
	assert_int_equal(st.rejected[UDP_STALE], 1);
	assert_int_equal(st.json.by_reason[DEC_OUT_OF_RANGE], 4);
	assert_int_equal(st.missing, 0);
	udp_close(u);
}

/* One number far ahead is rejected and the window stays; a second within a
 * window above it confirms a real jump, whose gap is not counted missing
 * (the first of the two was not applied: it is, and it alone). A sender first
 * heard far from 0 is missing nothing before that. */
static void sequence_jump_bounded(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	for (int seq = 0; seq < 10; seq++)
		datagram_v2(u, &KEY, 1, seq, "h");
	datagram_v2i(u, &KEY, 1, 9007199254740991.0, "h", -1);
	datagram_v2i(u, &KEY, 1, 9007199254740991.0, "h", -1); /* itself: no confirmation */
	datagram_v2(u, &KEY, 1, 10, "h");
	datagram_v2(u, &KEY, 1, 11, "h");
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, 12);
	assert_int_equal(st.rejected[UDP_SEQ_JUMP], 2);
	assert_int_equal(st.missing, 0);
	datagram_v2(u, &KEY, 1, 11 + (int)UDP_SEQ_JUMP_MAX, "h"); /* the bound itself: taken */
	udp_get_stats(u, &st);
	assert_int_equal(applied, 13);
	assert_int_equal(st.missing, UDP_SEQ_JUMP_MAX - 1); /* 12..10+2^20 */
	udp_close(u);

	applied = 0;
	u = udp_new(&KEY);
	for (int seq = 0; seq < 10; seq++)
		datagram_v2(u, &KEY, 1, seq, "h");
	datagram_v2(u, &KEY, 1, 5000000, "h");
	datagram_v2(u, &KEY, 1, 5000002, "h"); /* confirms */
	datagram_v2(u, &KEY, 1, 5000003, "h");
	udp_get_stats(u, &st);
	assert_int_equal(applied, 12);
	assert_int_equal(st.rejected[UDP_SEQ_JUMP], 1);
	assert_int_equal(st.missing, 2); /* 5000000 and 5000001 */
	datagram_v2(u, &KEY, 1, 5000000, "h"); /* never applied: now it is, once */
	datagram_v2(u, &KEY, 1, 5000000, "h");
	datagram_v2(u, &KEY, 1, 9, "h"); /* before the jump: stale */
	datagram_v2i(u, &KEY, 1, 3000000, "h", 4); /* a new sender, first heard late */
	datagram_v2i(u, &KEY, 1, 2999990, "h", 4); /* one before it: counts from there */
	udp_get_stats(u, &st);
	assert_int_equal(applied, 15);
	assert_int_equal(st.rejected[UDP_DUPLICATE], 1);
	assert_int_equal(st.rejected[UDP_STALE], 1);
	assert_int_equal(st.missing, 1 + 9);
	udp_close(u);
}

/* Past UDP_MAX_SENDERS a new sender is rejected, each time: its replay is
 * never applied; the senders tracked go on as before. */
static void senders_past_the_cap_rejected(void **state)
{
	(void)state;
	struct udp *u = udp_new(NULL);
	for (int round = 0; round < 2; round++)
		for (int pid = 0; pid <= UDP_MAX_SENDERS; pid++)
			datagram(u, NULL, "{\"type\":\"run_end\",\"host\":\"h\",\"pid\":%d,\"seq\":0}",
				 pid);
	datagram(u, NULL, "{\"type\":\"run_end\",\"host\":\"h\",\"pid\":0,\"seq\":1}");
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, UDP_MAX_SENDERS + 1);
	assert_int_equal(st.senders, UDP_MAX_SENDERS);
	assert_int_equal(st.rejected[UDP_SENDERS_FULL], 2);
	assert_int_equal(st.rejected[UDP_DUPLICATE], UDP_MAX_SENDERS);
	assert_string_equal(udp_reason_name(UDP_SENDERS_FULL), "senders_full");
	assert_string_equal(udp_reason_name(UDP_SEQ_JUMP), "seq_jump");
	udp_close(u);
}

/* Framing: tags, flags, one sender's sequence numbers whatever the kind;
 * a version-1 datagram (an older emitter) is counted under its own reason. */
static void framing(void **state)
{
	(void)state;
	struct udp *u = udp_new(&KEY);
	struct auth_key other = KEY;
	other.key[5] ^= 1;
	datagram_v2(u, &KEY, 1, 0, "h");
	datagram(u, &KEY, CHUNK, 1);
	datagram_v2(u, &KEY, 1, 1, "h"); /* seq 1 again, now as v2 */
	datagram_v2(u, &other, 1, 2, "h");
	datagram_v2(u, NULL, 0, 3, "h");
	datagram_v2(u, &KEY, 2, 4, "h");
	datagram_v2(u, &KEY, 1, 5, NULL);
	udp_process(u, "RTP2\x01short", 10, 1, deliver, NULL);
	udp_process(u, "RTP2", 4, 1, deliver, NULL);
	const char old[] = "RTP1 - {\"type\":\"chunk\",\"host\":\"h\",\"pid\":1,\"seq\":9}";
	udp_process(u, old, sizeof(old) - 1, 1, deliver, NULL);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(applied, 2);
	assert_int_equal(st.rejected[UDP_DUPLICATE], 1);
	assert_int_equal(st.rejected[UDP_BAD_TAG], 1);
	assert_int_equal(st.rejected[UDP_NO_TAG], 1);
	assert_int_equal(st.rejected[UDP_BAD_MAGIC], 3);
	assert_int_equal(st.rejected[UDP_NO_SENDER], 1);
	assert_int_equal(st.rejected[UDP_VERSION], 1);
	assert_string_equal(udp_reason_name(UDP_VERSION), "version");
	assert_int_equal(st.datagrams, 10);
	udp_close(u);
	applied = 0;
	u = udp_new(NULL); /* --no-auth: untagged accepted, a body error counted */
	datagram_v2(u, NULL, 0, 0, "h");
	udp_process(u, "RTP2\x00\x01\x63", 7, 1, deliver, NULL);
	udp_get_stats(u, &st);
	assert_int_equal(applied, 1);
	assert_int_equal(st.json.by_reason[DEC_BAD_BINARY], 1);
	udp_close(u);
}

/* The nap after a small drain fits the buffer the kernel granted: shorter
 * for a small one, never over UDP_NAP; none after a large drain, and none
 * without a socket. */
static void nap_follows_the_granted_buffer(void **state)
{
	(void)state;
	char err[256];
	struct udp *small = udp_open("127.0.0.1", 0, NULL, 4096, err, sizeof(err));
	struct udp *large = udp_open("127.0.0.1", 0, NULL, 64 << 20, err, sizeof(err));
	struct udp *none = udp_new(NULL);
	assert_non_null(small);
	assert_non_null(large);
	assert_true(udp_drain_nap(small, 0) > 0);
	assert_true(udp_drain_nap(small, UDP_NAP_BELOW - 1) < udp_drain_nap(large, 0));
	assert_true(udp_drain_nap(large, UDP_NAP_BELOW - 1) <= UDP_NAP);
	assert_true(udp_drain_nap(large, UDP_NAP_BELOW) == 0);
	assert_true(udp_drain_nap(none, 0) == 0);
	udp_close(small);
	udp_close(large);
	udp_close(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(tags_are_checked, setup),
		cmocka_unit_test_setup(no_auth_accepts_untagged, setup),
		cmocka_unit_test_setup(paths_share_one_sequence, setup),
		cmocka_unit_test_setup(duplicates_order_gaps_and_stale, setup),
		cmocka_unit_test_setup(senders_counted_apart, setup),
		cmocka_unit_test_setup(last_sender_cache_keeps_senders_apart, setup),
		cmocka_unit_test_setup(split_report_applied_once_whole, setup),
		cmocka_unit_test_setup(run_id_reaches_the_session, setup),
		cmocka_unit_test_setup(oversize_rejected, setup),
		cmocka_unit_test_setup(framing, setup),
		cmocka_unit_test_setup(instance_makes_a_restart_a_new_sender, setup),
		cmocka_unit_test_setup(sequence_jump_bounded, setup),
		cmocka_unit_test_setup(senders_past_the_cap_rejected, setup),
		cmocka_unit_test(nap_follows_the_granted_buffer),
	};
	return cmocka_run_group_tests_name("udp", tests, NULL, NULL);
}
