/* Prints the datagram table (docs/protocol.md) from the codec, where the
 * ids are written once: one line per id, `<table> <id> <name> <encoding>`,
 * table being a kind (chunk, start, heartbeat, run_start, run_end, report,
 * hello, ack: its event's fields and its envelope's) or meta (inside
 * file_metadata). tests/integration/test_wire_table.py compares the
 * emitter's copy and the test decoder's with it. */
#include <stdio.h>

#include "roastop/event_datagram.h"
#include "roastop/event_field.h"

int main(void)
{
	static const char *const kinds[] = {
		[EVENT_DATAGRAM_CHUNK] = "chunk",	  [EVENT_DATAGRAM_START] = "start",
		[EVENT_DATAGRAM_HEARTBEAT] = "heartbeat", [EVENT_DATAGRAM_RUN_START] = "run_start",
		[EVENT_DATAGRAM_RUN_END] = "run_end",	  [EVENT_DATAGRAM_REPORT] = "report",
		[EVENT_DATAGRAM_HELLO] = "hello",	  [EVENT_DATAGRAM_ACK] = "ack",
	};
	for (int k = EVENT_DATAGRAM_CHUNK; k <= EVENT_DATAGRAM_ACK; k++)
		for (unsigned id = 1; id < 256; id++) {
			const struct event_field *f = event_datagram_field(k, id);
			if (f)
				printf("%s %u %s %s\n", kinds[k], id, f->name, event_field_encoding(f));
		}
	for (unsigned id = 1; id < 256; id++) {
		const struct event_field *f = event_datagram_meta_field(id);
		if (f)
			printf("meta %u %s %s\n", id, f->name, event_field_encoding(f));
	}
	return 0;
}
