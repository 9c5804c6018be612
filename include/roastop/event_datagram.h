/* The UDP datagram codec (docs/protocol.md): `<kind> (<id> <value>)*`,
 * little-endian. A kind names an event type (or hello, ack); an id a field
 * of its table in event_field.c or of the envelope. Decoding is
 * all-or-nothing; the listener (udp.c) owns framing, tag and sequencing. */
#ifndef ROASTOP_EVENT_DATAGRAM_H
#define ROASTOP_EVENT_DATAGRAM_H

#include "roastop/event.h"
#include "roastop/event_json.h"
#include "roastop/strbuf.h"

enum event_datagram_kind {
	EVENT_DATAGRAM_CHUNK = 0x01,
	EVENT_DATAGRAM_START = 0x02, /* chunk_start */
	EVENT_DATAGRAM_HEARTBEAT = 0x03,
	EVENT_DATAGRAM_RUN_START = 0x04,
	EVENT_DATAGRAM_RUN_END = 0x05,
	EVENT_DATAGRAM_REPORT = 0x06, /* whole, or one part of a split one */
	EVENT_DATAGRAM_HELLO = 0x07, /* no event: envelope and nonce */
	EVENT_DATAGRAM_ACK = 0x08, /* roastop's answer: the nonce only */
};

/* The envelope's ids. */
#define EVENT_DATAGRAM_HOST 16
#define EVENT_DATAGRAM_PID 23
#define EVENT_DATAGRAM_SEQ 24
#define EVENT_DATAGRAM_RUN_ID 64 /* not the envelope's: every run-routed kind's run_id */
#define EVENT_DATAGRAM_SENT 65
#define EVENT_DATAGRAM_INSTANCE 66 /* num, integer in [0, 2^53 - 1] */
#define EVENT_DATAGRAM_START_SEQ 67 /* the chunk's start_seq */
#define EVENT_DATAGRAM_REPORT_ID 68
#define EVENT_DATAGRAM_PART 69
#define EVENT_DATAGRAM_PARTS 70
#define EVENT_DATAGRAM_NONCE 71
#define EVENT_DATAGRAM_NONCE_MIN 16 /* lowercase hex digits */
#define EVENT_DATAGRAM_NONCE_MAX 64

/* What a datagram carries besides the event (docs/protocol.md). */
struct event_envelope {
	enum event_datagram_kind kind;
	char host[256];
	bool has_pid, has_seq;
	double pid, seq;
	double instance; /* the sender's random id (a restart is new); 0: not given */
	char report_id[64]; /* split reports: "" when whole */
	int part, parts;
	char nonce[EVENT_DATAGRAM_NONCE_MAX + 1]; /* hello and ack: "" otherwise */
};

/* A body into *ev (stamped `now`; EV_NONE for a hello or an ack) and *env.
 * DEC_BAD_BINARY for a body that ends inside a value, an unknown kind or
 * id, an id twice, a NaN; the other reasons are the JSON codec's. */
enum decode_error event_datagram_decode(const unsigned char *body, size_t len, double now,
					struct event *ev, struct event_envelope *env);

/* Appends the body of ev (every field but custom_json) and of env's fields
 * ev does not hold (env NULL: none; a hello or an ack: ev NULL). 0, or -1
 * for no such kind or a string over 65,535 bytes. */
int event_datagram_encode(const struct event *ev, const struct event_envelope *env,
			  struct strbuf *out);

/* The row an id names in a kind's body and in file_metadata's (NULL: none),
 * for build/tools/wire_table. */
struct event_field;
const struct event_field *event_datagram_field(enum event_datagram_kind kind, unsigned id);
const struct event_field *event_datagram_meta_field(unsigned id);

void event_envelope_clear(struct event_envelope *env);

#endif
