/* The registry of the sources, one line each in SOURCES, in the order they
 * are opened, polled and written in metrics.json (docs/architecture.md,
 * "Adding a source"); the statistics' helpers; the capabilities asked. */
#include "roastop/source.h"

#include <stdio.h>
#include <string.h>

#define SOURCES(X) \
	X(listener_source) \
	X(dask_source) \
	X(taskstream_source) \
	X(replay_source)

#define SOURCE_DECLARE(s) extern const struct source_ops s;
#define SOURCE_ENTRY(s) &s,
SOURCES(SOURCE_DECLARE)

const struct source_ops *const source_registry[] = { SOURCES(SOURCE_ENTRY) NULL };

void source_count(struct source_stats *st, const char *group, const char *name, uint64_t value)
{
	if (st->n_counters < SOURCE_COUNTERS_MAX)
		st->counters[st->n_counters++] = (struct source_counter){ group, name, value };
}

void source_figure(struct source_stats *st, const char *name, double value)
{
	if (st->n_figures < SOURCE_FIGURES_MAX)
		st->figures[st->n_figures++] = (struct source_figure){ name, value };
}

void source_counters_event(const char *name, const struct source_stats *st,
			   struct ev_counters *out)
{
	*out = (struct ev_counters){ .source = name,
				     .state_key = st->state_key,
				     .state = st->state_key ? st->state : NULL,
				     .n_counters = st->n_counters,
				     .counters = st->counters };
}

static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

void source_typed_of(const struct ev_counters *c, struct source_typed *out)
{
	*out = (struct source_typed){ .state = c->state_key ? c->state : NULL };
	const struct source_ops *const *ops = source_registry;
	while (*ops && !same_name((*ops)->name, c->source))
		ops++;
	if (!*ops)
		return;
	out->role = (*ops)->role;
	for (const struct source_field *f = (*ops)->fields; f && f->name; f++)
		for (size_t i = 0; i < c->n_counters; i++)
			if (same_name(c->counters[i].group, f->group) &&
			    strcmp(c->counters[i].name, f->name) == 0)
				memcpy((char *)out + f->off, &c->counters[i].value, sizeof(uint64_t));
}

const char *source_role_name(enum source_role role)
{
	for (const struct source_ops *const *ops = source_registry; *ops; ops++)
		if ((*ops)->role == role)
			return (*ops)->name;
	return "";
}

void source_stats_type(const char *name, struct source_stats *st)
{
	struct ev_counters c;
	source_counters_event(name, st, &c);
	source_typed_of(&c, &st->typed);
	st->typed.state = st->state_key ? st->state : NULL;
}

void source_stats_of(const struct ev_counters *c, struct source_stats *out)
{
	*out = (struct source_stats){ .state_key = c->state_key };
	if (c->state_key && c->state)
		snprintf(out->state, sizeof(out->state), "%s", c->state);
	for (size_t i = 0; i < c->n_counters; i++)
		source_count(out, c->counters[i].group, c->counters[i].name, c->counters[i].value);
	source_stats_type(c->source, out);
}

void source_stats_read(const struct source_ops *ops, const void *src, struct source_stats *out)
{
	*out = (struct source_stats){ 0 };
	ops->stats(src, out);
	source_stats_type(ops->name, out);
}

const char *source_hint(const struct source_ops *ops, const void *src)
{
	return ops->senders ? ops->senders->hint(src) : NULL;
}

bool source_address(const struct source_ops *ops, const void *src,
		    struct sockaddr_storage *addr, socklen_t *len)
{
	return ops->senders && ops->senders->address(src, addr, len);
}

bool source_take(const struct source_ops *ops, void *src, const char *buf, size_t len, int port,
		 double now)
{
	return ops->senders && ops->senders->take(src, buf, len, port, now);
}

const char *source_alert(const struct source_ops *ops, const void *src)
{
	return ops->watch ? ops->watch->alert(src) : NULL;
}

bool source_tick(const struct source_ops *ops, void *src)
{
	return ops->watch && ops->watch->tick && ops->watch->tick(src);
}

void source_on_event(const struct source_ops *ops, void *src, const struct event *ev)
{
	if (ops->run_hooks && ops->run_hooks->on_event)
		ops->run_hooks->on_event(src, ev);
}

bool source_busy(const struct source_ops *ops, const void *src)
{
	return ops->run_hooks && ops->run_hooks->busy && ops->run_hooks->busy(src);
}

void source_finish(const struct source_ops *ops, void *src, double now)
{
	if (ops->run_hooks && ops->run_hooks->finish)
		ops->run_hooks->finish(src, now);
}

const struct source_end *source_ended(const struct source_ops *ops, const void *src)
{
	return ops->recorded ? ops->recorded->ended(src) : NULL;
}
