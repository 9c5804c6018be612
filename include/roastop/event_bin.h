/* Protocol version 2 (docs/protocol.md): the binary body of a chunk
 * datagram. The same fields, names and ranges as the JSON codec (both read
 * event_field's tables), in about half the bytes and without number
 * printing or parsing. Decoding is all-or-nothing like event_json's. */
#ifndef ROASTOP_EVENT_BIN_H
#define ROASTOP_EVENT_BIN_H

#include "roastop/event.h"
#include "roastop/event_datagram.h"
#include "roastop/strbuf.h"

#define EVENT_BIN_KIND_CHUNK 0x01
#define EVENT_BIN_KIND_START 0x02 /* chunk_start: the chunk table's ids its table has */
#define EVENT_BIN_KIND_HEARTBEAT 0x03 /* heartbeat: heartbeat_names' ids */
#define EVENT_BIN_RUN_ID 64 /* the chunk's run_id; 65 and 66 are envelope only */
#define EVENT_BIN_SENT 65
#define EVENT_BIN_INSTANCE 66 /* num, integer in [0, 2^53 - 1] */
#define EVENT_BIN_START_SEQ 67 /* the chunk's start_seq */

/* A version-2 body into *ev (a chunk, chunk_start or heartbeat stamped `now`) and
 * *env (host, pid, seq from its own fields, instance from its envelope id). */
enum decode_error event_decode_binary(const unsigned char *body, size_t len, double now,
				      struct event *ev, struct event_envelope *env);

/* Appends the version-2 body of a chunk, chunk_start or heartbeat event: every field
 * it holds except custom_json, which version 2 does not carry. 0, or -1 when
 * ev is neither or holds a value the encoding cannot (a string over 65,535
 * bytes). */
int event_encode_binary(const struct event *ev, struct strbuf *out);

#endif
