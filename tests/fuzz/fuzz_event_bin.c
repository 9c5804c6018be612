/* The version-2 chunk decoder on hostile bytes: never crash; a rejected
 * body leaves the event and envelope empty; an accepted one is a chunk,
 * chunk_start or heartbeat whose envelope is its own host, pid and seq, and it encodes to a body
 * that decodes again to the same bytes (nothing half-read, nothing lost). */
#include <stdlib.h>
#include <string.h>

#include "roastop/event_bin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	if (event_decode_binary(data, size, 1767225600.0, &ev, &env) != DEC_OK) {
		if (ev.type != EV_NONE || env.host[0] || env.has_pid || env.has_seq ||
		    env.instance != 0)
			abort(); /* a rejected body must leave nothing behind */
		return 0;
	}
	bool beat = ev.type == EV_HEARTBEAT;
	optnum pid = beat ? ev.u.heartbeat.pid : ev.u.chunk.pid;
	optnum seq = beat ? ev.u.heartbeat.seq : ev.u.chunk.seq;
	if ((ev.type != EV_CHUNK && ev.type != EV_CHUNK_START && !beat) ||
	    env.has_pid != pid.valid || env.has_seq != seq.valid || (beat && !pid.valid))
		abort();
	strbuf_reset(&a);
	strbuf_reset(&b);
	if (event_encode_binary(&ev, &a) != 0)
		abort();
	if (event_decode_binary((const unsigned char *)a.data, a.len, 1767225600.0, &again,
				&env2) != DEC_OK)
		abort();
	if (event_encode_binary(&again, &b) != 0 || a.len != b.len || memcmp(a.data, b.data, a.len))
		abort();
	if (strcmp(env.host, env2.host) != 0)
		abort();
	return 0;
}
