/* The codec half of a UDP datagram (docs/protocol.md): the envelope a body
 * carries besides its event (sender, sequence, split report) and the
 * version-1 body decoder. The listener (udp.c) owns the framing, the tag,
 * the sequencing and the counters; the recorder and the replay never see
 * an envelope, so they include event_json.h alone. */
#ifndef ROASTOP_EVENT_DATAGRAM_H
#define ROASTOP_EVENT_DATAGRAM_H

#include "roastop/event.h"
#include "roastop/event_json.h"

/* What a UDP datagram carries besides the event (docs/protocol.md). */
struct event_envelope {
	char host[256];
	bool has_pid, has_seq;
	double pid, seq;
	/* the sending process's random id, so a restart with the same host and
	 * pid is a new sender; 0 when not given (an older emitter) */
	double instance;
	char report_id[64]; /* split reports: "" when whole */
	int part, parts;
};

/* Empties an envelope: both strings and every field, without clearing the
 * unused tails of the strings (a decoder does this once per datagram). */
static inline void event_envelope_clear(struct event_envelope *env)
{
	env->host[0] = '\0';
	env->report_id[0] = '\0';
	env->has_pid = env->has_seq = false;
	env->pid = env->seq = env->instance = 0;
	env->part = env->parts = 0;
}

/* A datagram body: like event_decode_json, but the receive time is `now`
 * (a "t" in the body is ignored) and the envelope fields are returned. */
enum decode_error event_decode_datagram(const char *text, size_t len, double now,
					struct event *ev, struct event_envelope *env);

#endif
