/* The datagram codec on hostile bytes: never crash; a rejected body leaves
 * the event and envelope empty; an accepted one is an event of the kind's
 * type (none for a hello or an ack) whose envelope holds the sender its
 * own fields name, and it encodes, envelope and all, to a body that
 * decodes again to the same bytes (nothing half-read, nothing lost). */
#include <stdlib.h>
#include <string.h>

#include "roastop/event_datagram.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool envelope_empty(const struct event_envelope *env)
{
	return !env->kind && !env->host[0] && !env->has_pid && !env->has_seq &&
	       env->instance == 0 && !env->report_id[0] && !env->nonce[0] && !env->part &&
	       !env->parts;
}

/* A chunk's, a start's or a heartbeat's own pid and seq are its envelope's. */
static bool sender_agrees(const struct event *ev, const struct event_envelope *env)
{
	bool beat = ev->type == EV_HEARTBEAT;
	if (!beat && ev->type != EV_CHUNK && ev->type != EV_CHUNK_START)
		return true;
	optnum pid = beat ? ev->u.heartbeat.pid : ev->u.chunk.pid;
	optnum seq = beat ? ev->u.heartbeat.seq : ev->u.chunk.seq;
	return env->has_pid == pid.valid && env->has_seq == seq.valid && (!beat || pid.valid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event ev, again;
	static struct event_envelope env, env2;
	static struct strbuf a, b;
	static bool ready;
	if (!ready) {
		event_init(&ev);
		event_init(&again);
		strbuf_init(&a);
		strbuf_init(&b);
		ready = true;
	}
	if (event_datagram_decode(data, size, 1767225600.0, &ev, &env) != DEC_OK) {
		if (ev.type != EV_NONE || !envelope_empty(&env))
			abort(); /* a rejected body must leave nothing behind */
		return 0;
	}
	bool plain = env.kind == EVENT_DATAGRAM_HELLO || env.kind == EVENT_DATAGRAM_ACK;
	if (plain != (ev.type == EV_NONE) || !sender_agrees(&ev, &env))
		abort();
	strbuf_reset(&a);
	strbuf_reset(&b);
	if (event_datagram_encode(plain ? NULL : &ev, &env, &a) != 0)
		abort();
	if (event_datagram_decode((const unsigned char *)a.data, a.len, 1767225600.0, &again,
				  &env2) != DEC_OK)
		abort();
	if (event_datagram_encode(plain ? NULL : &again, &env2, &b) != 0 || a.len != b.len ||
	    memcmp(a.data, b.data, a.len))
		abort();
	if (strcmp(env.host, env2.host) != 0 || strcmp(env.nonce, env2.nonce) != 0)
		abort();
	return 0;
}
