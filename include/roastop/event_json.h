/* The JSON codec for events: recording lines (docs/recording.md). Decoding
 * is strict and all-or-nothing: a rejected event leaves ev->type == EV_NONE
 * and the reason is returned. Unknown fields are ignored, except at the top
 * of a chunk, where they are kept in custom_json. */
#ifndef ROASTOP_EVENT_JSON_H
#define ROASTOP_EVENT_JSON_H

#include "roastop/event.h"
#include "roastop/strbuf.h"

#define EVENT_JSON_MAX (1u << 20) /* bytes in one event text */
#define EVENT_JSON_MAX_DEPTH 16
#define EVENT_CUSTOM_MAX 16384 /* bytes of unknown chunk fields kept */
/* A recording's header line names this format and major version. */
#define EVENT_JSON_FORMAT "roastop-recording"
#define EVENT_JSON_VERSION 1

enum decode_error {
	DEC_OK = 0,
	DEC_TOO_LARGE, /* text over EVENT_JSON_MAX */
	DEC_TOO_DEEP, /* nesting over EVENT_JSON_MAX_DEPTH */
	DEC_NOT_JSON, /* does not parse */
	DEC_NOT_OBJECT, /* parses, but is not an object */
	DEC_NO_TYPE, /* "type" missing or not a string */
	DEC_UNKNOWN_TYPE,
	DEC_NO_TIME, /* "t" missing, not a number or implausible */
	DEC_MISSING_FIELD, /* a field the type requires */
	DEC_BAD_TYPE, /* a field of the wrong JSON type */
	DEC_OUT_OF_RANGE,
	DEC_BAD_UTF8,
	DEC_STRING_TOO_LONG,
	DEC_LIST_TOO_LONG,
	DEC_INCONSISTENT, /* fields that contradict each other */
	DEC_NO_MEMORY,
	DEC_BAD_BINARY, /* a datagram body that is no body */
	DEC__COUNT
};

struct reject_counts {
	uint64_t by_reason[DEC__COUNT];
	uint64_t total;
};

const char *decode_error_name(enum decode_error e);
void reject_count(struct reject_counts *rc, enum decode_error e);

/* Parses one JSON object text into *ev (event_init'ed by the caller). */
enum decode_error event_decode_json(const char *text, size_t len, struct event *ev);

/* Appends one compact JSON object (no newline): "type", "t", then the given
 * fields in table order. 0, or -1 when out of memory or ev has no type. */
int event_encode_json(const struct event *ev, struct strbuf *out);

#endif
