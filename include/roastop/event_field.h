/* The field tables both event codecs read (event_json.c, event_datagram.c),
 * so a field has one name and one range whatever its wire form. */
#ifndef ROASTOP_EVENT_FIELD_H
#define ROASTOP_EVENT_FIELD_H

#include <string.h>

#include "roastop/event.h"
#include "roastop/event_json.h"

#define EVENT_T_MIN 1.0 /* receive times: seconds since the epoch, (1970, 5138) */
#define EVENT_T_MAX 1e11
#define EVENT_BIG 1e15 /* counts and bytes */
#define EVENT_BIG_SECONDS 1e9

enum field_kind {
	FK_NUM, /* optnum in [lo, hi] */
	FK_INT, /* optnum, integral, in [lo, hi] */
	FK_STR, /* const char * */
	FK_STRLIST, /* const char ** at off, size_t count at off2 */
	FK_KV, /* struct kv_num * at off, size_t count at off2 */
	FK_FILEMETA, /* struct file_meta, has_file_metadata at off2 */
	FK_WORKERS, /* struct worker_sample * at off, size_t count at off2 */
	FK_U32, /* uint32_t in [lo, hi] */
	FK_ROWS, /* struct fine_row * at off, size_t count at off2 */
	FK_SCOPE, /* enum fine_scope */
	FK_STATE, /* enum source_state */
	FK_LEVEL, /* enum log_kind */
	FK_COUNTERS, /* struct source_counter * at off, size_t count at off2 */
	FK_RUNNING, /* struct task_running * at off, size_t count at off2 */
};

struct event_field {
	const char *name;
	unsigned char len; /* strlen(name): most lookups end on a length mismatch */
	enum field_kind kind;
	size_t off, off2;
	double lo, hi;
	unsigned char wire; /* the datagram id (docs/protocol.md); 0: none */
};

struct field_table {
	const struct event_field *f;
	size_t n;
	uint8_t *slots; /* event_field_find's index: FIELD_SLOTS entries */
};

#define FIELD_SLOTS 128u /* power of two, at least four times the largest table */

/* Builds the name indexes once; call before event_field_find. */
void event_field_init(void);
/* The table of an event type (empty for EV_NONE), of a sample's worker, of
 * a chunk's file_metadata. Each is sorted by name. */
const struct field_table *event_field_table(enum event_type t);
const struct field_table *event_field_workers(void);
const struct field_table *event_field_filemeta(void);

/* A list element written as [strings..., number]: a fine row, a counter
 * ([group or null, name, value]), a running task. */
struct field_tuple {
	size_t size; /* of the element */
	int n_str;
	size_t str[4]; /* the strings' offsets in the element */
	size_t num; /* the number's: a double, a uint64_t in a counter */
};

/* The tuple of FK_ROWS, FK_COUNTERS and FK_RUNNING elements, else NULL. */
const struct field_tuple *event_field_tuple(enum field_kind k);

/* The field's datagram encoding as docs/protocol.md names it; NULL for a
 * kind datagrams lack. */
const char *event_field_encoding(const struct event_field *f);

/* Within the field's bounds, and whole for FK_INT? NaN is not. Within the
 * bounds (all below 2^63) the cast is defined. */
static inline bool event_field_number_ok(const struct event_field *f, double x)
{
	return x >= f->lo && x <= f->hi && (f->kind != FK_INT || x == (double)(int64_t)x);
}

/* Is the field given in the event at base? Both encoders write exactly
 * these: sections and workers only when there are some, enums always. */
bool event_field_present(const struct event_field *f, const void *base);

/* Fields whose presence a check needs (0 and "lost" are values too). */
struct field_seen {
	bool count, rows, state; /* worker_count, a fine event's rows, a status's state */
};

/* The checks across an event's fields once all are read: required fields,
 * contradictions, defaults. Both decoders end with it. */
enum decode_error event_field_check(struct event *ev, const struct field_seen *seen);

/* A small open-addressing index per table, hashed on the length and three
 * bytes of the name: a linear scan cost a fifth of a decode. */
static inline unsigned field_hash(const char *key, size_t klen)
{
	const unsigned char *k = (const unsigned char *)key;
	return (unsigned)(klen * 37u + k[0] * 7u + k[klen / 2] * 3u + k[klen - 1]) &
	       (FIELD_SLOTS - 1);
}

static inline const struct event_field *event_field_find(const struct field_table *t,
							   const char *key, size_t klen)
{
	if (klen == 0 || klen > 64)
		return NULL; /* no field name is empty or longer */
	for (unsigned h = field_hash(key, klen);; h = (h + 1) & (FIELD_SLOTS - 1)) {
		unsigned i = t->slots[h];
		if (!i)
			return NULL;
		const struct event_field *f = &t->f[i - 1];
		if (f->len == klen && memcmp(f->name, key, klen) == 0)
			return f;
	}
}

#endif
