/* The event decoder on hostile bytes: never crash; a rejected event is left
 * empty; whatever it accepts must be a JSON object to an independent parser
 * (cJSON), and must encode to a line that decodes again to the same event
 * (same type, same text once more: nothing half-applied, nothing lost). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/event_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event ev, again;
	static struct strbuf a, b;
	static bool ready;
	if (!ready) {
		event_init(&ev);
		event_init(&again);
		strbuf_init(&a);
		strbuf_init(&b);
		ready = true;
	}
	if (event_decode_json((const char *)data, size, &ev) != DEC_OK) {
		if (ev.type != EV_NONE || ev.t != 0)
			abort(); /* a rejected event must be empty */
		return 0;
	}
	if (ev.type <= EV_NONE || ev.type >= EV__COUNT)
		abort();
	cJSON *ref = cJSON_ParseWithLength((const char *)data, size);
	if (!ref || !cJSON_IsObject(ref))
		abort(); /* accepted something that is not a JSON object */
	cJSON_Delete(ref);
	strbuf_reset(&a);
	strbuf_reset(&b);
	if (event_encode_json(&ev, &a) != 0 || memchr(a.data, '\n', a.len))
		abort();
	if (event_decode_json(a.data, a.len, &again) != DEC_OK || again.type != ev.type ||
	    again.t != ev.t)
		abort();
	if (event_encode_json(&again, &b) != 0 || a.len != b.len || memcmp(a.data, b.data, a.len))
		abort();
	return 0;
}
