/* Prints the version-2 wire table (docs/protocol.md) from the C field
 * tables, where the ids are written once: one line per id,
 * `<table> <id> <name> <encoding>`, table being chunk, start (the ids a
 * chunk_start body may carry), heartbeat or meta (inside file_metadata).
 * The envelope-only ids (sent, instance) are listed under chunk, start and
 * heartbeat.
 * tests/integration/test_wire_table.py compares the emitter's copy and
 * the test decoder's with it. */
#include <stdio.h>

#include "roastop/event_bin.h"
#include "roastop/event_field.h"

static void print_table(const char *label, const struct field_table *t,
			const struct field_table *only)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct event_field *f = &t->f[i];
		if (f->wire && (!only || event_field_find(only, f->name, f->len)))
			printf("%s %u %s %s\n", label, f->wire, f->name, event_field_encoding(f));
	}
	printf("%s %d sent num\n%s %d instance int\n", label, EVENT_BIN_SENT, label,
	       EVENT_BIN_INSTANCE);
}

int main(void)
{
	event_field_init();
	const struct field_table *chunk = event_field_table(EV_CHUNK);
	print_table("chunk", chunk, NULL);
	print_table("start", chunk, event_field_table(EV_CHUNK_START));
	print_table("heartbeat", event_field_table(EV_HEARTBEAT), NULL);
	const struct field_table *meta = event_field_filemeta();
	for (size_t i = 0; i < meta->n; i++)
		printf("meta %u %s %s\n", meta->f[i].wire, meta->f[i].name,
		       event_field_encoding(&meta->f[i]));
	return 0;
}
