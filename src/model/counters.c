/* The sources' latest statistics (counters.h). */
#include "roastop/counters.h"

#include <stdlib.h>
#include <string.h>

#include "roastop/strutil.h"

static struct counters_copy *counters_slot(struct counters *k, const char *source)
{
	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->of[i].source, source) == 0)
			return &k->of[i];
	if (!k->of)
		k->of = calloc(COUNTERS_SOURCES_MAX, sizeof(*k->of));
	if (!k->of || k->n == COUNTERS_SOURCES_MAX)
		return NULL;
	struct counters_copy *c = &k->of[k->n++];
	strutil_copy(c->source, sizeof(c->source), source);
	return c;
}

int counters_apply(struct counters *k, const struct ev_counters *ev)
{
	struct counters_copy *c = ev->source ? counters_slot(k, ev->source) : NULL;
	if (!c) {
		k->refused++;
		return 1;
	}
	bool state = ev->state_key && ev->state;
	strutil_copy(c->state_key, sizeof(c->state_key), state ? ev->state_key : NULL);
	strutil_copy(c->state, sizeof(c->state), state ? ev->state : NULL);
	c->n = ev->n_counters < EVENT_COUNTERS_MAX ? ev->n_counters : EVENT_COUNTERS_MAX;
	for (size_t i = 0; i < c->n; i++) {
		const struct source_counter *from = &ev->counters[i];
		strutil_copy(c->group[i], sizeof(c->group[i]), from->group);
		strutil_copy(c->name[i], sizeof(c->name[i]), from->name);
		c->c[i] = (struct source_counter){ from->group ? c->group[i] : NULL, c->name[i],
						   from->value };
	}
	return 0;
}

void counters_view(const struct counters *k, size_t i, struct ev_counters *out)
{
	const struct counters_copy *c = &k->of[i];
	*out = (struct ev_counters){ .source = c->source,
				     .state_key = c->state_key[0] ? c->state_key : NULL,
				     .state = c->state_key[0] ? c->state : NULL,
				     .n_counters = c->n,
				     .counters = c->c };
}

bool counters_find(const struct counters *k, const char *source, struct ev_counters *out)
{
	for (size_t i = 0; i < k->n; i++) {
		if (strcmp(k->of[i].source, source) == 0) {
			counters_view(k, i, out);
			return true;
		}
	}
	return false;
}

static bool counters_text_same(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

static bool counters_one_same(const struct source_counter *a, const struct source_counter *b)
{
	return counters_text_same(a->group, b->group) && counters_text_same(a->name, b->name) &&
	       a->value == b->value;
}

bool counters_same(const struct ev_counters *a, const struct ev_counters *b)
{
	if (!counters_text_same(a->state_key, b->state_key) ||
	    !counters_text_same(a->state, b->state) || a->n_counters != b->n_counters)
		return false;
	for (size_t i = 0; i < a->n_counters; i++)
		if (!counters_one_same(&a->counters[i], &b->counters[i]))
			return false;
	return true;
}

void counters_free(struct counters *k)
{
	free(k->of);
	memset(k, 0, sizeof(*k));
}
