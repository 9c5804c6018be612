/* The event decoder on hostile bytes: never crash; whatever it accepts must
 * be valid JSON to an independent parser (cJSON), and must encode and decode
 * again to the same text (no half-applied state). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/event_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event ev, again;
	static bool ready;
	if (!ready) {
		event_init(&ev);
		event_init(&again);
		ready = true;
	}
	if (event_decode_json((const char *)data, size, &ev) != DEC_OK) {
		if (ev.type != EV_NONE)
			abort(); /* a rejected event must be empty */
		return 0;
	}
	cJSON *ref = cJSON_ParseWithLength((const char *)data, size);
	if (!ref || !cJSON_IsObject(ref))
		abort(); /* accepted something that is not a JSON object */
	cJSON_Delete(ref);
	struct strbuf a, b;
	strbuf_init(&a);
	strbuf_init(&b);
	if (event_encode_json(&ev, &a) != 0 || event_decode_json(a.data, a.len, &again) != DEC_OK)
		abort();
	if (event_encode_json(&again, &b) != 0 || a.len != b.len || memcmp(a.data, b.data, a.len))
		abort();
	strbuf_free(&a);
	strbuf_free(&b);
	return 0;
}
