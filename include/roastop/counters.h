/* The sources' statistics as the model knows them: the latest EV_COUNTERS
 * of each source (event.h), kept with their own copy of every name, so
 * that metrics.json's roastop.<source> blocks are written from events, the
 * same live and in a replay (docs/recording.md, "counters"). */
#ifndef ROASTOP_COUNTERS_H
#define ROASTOP_COUNTERS_H

#include "roastop/event.h"

#define COUNTERS_SOURCES_MAX 8 /* sources kept; more are refused and counted */

struct counters_copy {
	char source[EVENT_COUNTER_NAME_MAX + 1];
	char state_key[EVENT_COUNTER_NAME_MAX + 1]; /* "" when the source has no state */
	char state[EVENT_COUNTER_STATE_MAX + 1];
	char group[EVENT_COUNTERS_MAX][EVENT_COUNTER_NAME_MAX + 1];
	char name[EVENT_COUNTERS_MAX][EVENT_COUNTER_NAME_MAX + 1];
	struct source_counter c[EVENT_COUNTERS_MAX]; /* pointing into group and name */
	size_t n;
};

struct counters {
	struct counters_copy *of; /* COUNTERS_SOURCES_MAX, allocated at the first event */
	size_t n; /* in the order their sources first delivered */
	uint64_t refused; /* events of a source past COUNTERS_SOURCES_MAX, or out of memory */
};

/* Keeps ev as its source's latest: 0, or 1 when refused (counted). */
int counters_apply(struct counters *k, const struct ev_counters *ev);
/* The i-th source's latest (i < k->n), as an event's payload pointing
 * into k: valid until the next counters_apply. */
void counters_view(const struct counters *k, size_t i, struct ev_counters *out);
/* The latest of the source named so, or false when it has delivered none. */
bool counters_find(const struct counters *k, const char *source, struct ev_counters *out);
/* The same state and counters, in the same order (the source aside)? */
bool counters_same(const struct ev_counters *a, const struct ev_counters *b);
void counters_free(struct counters *k);

#endif
