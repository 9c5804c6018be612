/* metrics.json's roastop extras: the session's, the server's and the
 * sources' blocks and the run's tasks, from data the app gathered. */
#include "roastop/metrics_extra.h"

#include <math.h>
#include <string.h>

#include "roastop/common.h"
#include "roastop/counters.h"
#include "roastop/metrics_tasks.h"

struct counter {
	const char *name;
	uint64_t value;
};

static void add_counters(cJSON *o, const struct counter *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cJSON_AddNumberToObject(o, c[i].name, (double)c[i].value);
}

/* A source's block under its name: its state, figures and counters
 * (source.h). */
static void source_block(cJSON *extra, const char *name, const char *state_key, const char *state,
			 const struct source_figure *fg, size_t n_fg, const struct source_counter *c,
			 size_t n_c)
{
	cJSON *o = cJSON_AddObjectToObject(extra, name);
	if (!o)
		return;
	if (state_key)
		cJSON_AddStringToObject(o, state_key, state);
	for (size_t i = 0; i < n_fg; i++) {
		if (isnan(fg[i].value))
			cJSON_AddNullToObject(o, fg[i].name);
		else
			cJSON_AddNumberToObject(o, fg[i].name, fg[i].value);
	}
	for (size_t i = 0; i < n_c; i++) {
		cJSON *into = o;
		if (c[i].group) {
			into = cJSON_GetObjectItemCaseSensitive(o, c[i].group);
			if (!into)
				into = cJSON_AddObjectToObject(o, c[i].group);
			if (!into || (!c[i].value && strcmp(c[i].name, "total") != 0))
				continue;
		}
		cJSON_AddNumberToObject(into, c[i].name, (double)c[i].value);
	}
}

/* The session's own counters (session.h): runs kept and lost. */
static void session_extra(cJSON *extra, const struct session *s)
{
	cJSON *o = cJSON_AddObjectToObject(extra, "session");
	if (!o)
		return;
	const struct counter c[] = {
		{ "runs", s->runs_total },
		{ "runs_summarised", s->runs_summarised },
		{ "runs_dropped", s->rows_dropped },
		{ "runs_refused", s->runs_refused },
		{ "late_chunks_lost", s->late_lost },
		{ "events_unrouted", s->unrouted },
	};
	add_counters(o, c, ROASTOP_ARRAY_LEN(c));
}

/* The HTTP server's counters, every rejection's (0 included) and their
 * total; its failure to start, when it did not. */
static void serve_extra(cJSON *extra, const struct metrics_extra_input *in)
{
	cJSON *o = cJSON_AddObjectToObject(extra, "serve");
	if (!o)
		return;
	if (!in->serve_listen) {
		cJSON_AddNullToObject(o, "listen");
		cJSON_AddStringToObject(o, "error", in->serve_error ? in->serve_error : "");
		cJSON_AddNumberToObject(o, "open_failures", (double)in->serve_failures);
		return;
	}
	cJSON_AddStringToObject(o, "listen", in->serve_listen);
	const struct source_stats *st = in->serve_counters;
	cJSON *rej = NULL;
	uint64_t total = 0;
	for (size_t i = 0; st && i < st->n_counters; i++) {
		const struct source_counter *c = &st->counters[i];
		if (!c->group) {
			cJSON_AddNumberToObject(o, c->name, (double)c->value);
			continue;
		}
		if (!rej)
			rej = cJSON_AddObjectToObject(o, c->group);
		total += c->value;
		if (rej)
			cJSON_AddNumberToObject(rej, c->name, (double)c->value);
	}
	if (rej)
		cJSON_AddNumberToObject(rej, "total", (double)total);
}

cJSON *metrics_extra_json(const struct metrics_extra_input *in, const struct run *r)
{
	cJSON *extra = cJSON_CreateObject();
	if (extra)
		session_extra(extra, in->ses);
	if (extra && (in->serve_listen || in->serve_failures))
		serve_extra(extra, in);
	/* the live sources' blocks: the model's copies of their counters */
	for (size_t i = 0; extra && i < in->ses->counters.n; i++) {
		struct ev_counters c;
		counters_view(&in->ses->counters, i, &c);
		source_block(extra, c.source, c.state_key, c.state, NULL, 0, c.counters,
			     c.n_counters);
	}
	for (size_t i = 0; extra && i < in->n_recorded; i++) {
		const struct source_stats *st = &in->recorded_stats[i];
		source_block(extra, in->recorded_names[i], st->state_key, st->state, st->figures,
			     st->n_figures, st->counters, st->n_counters);
	}
	if (extra && r && in->tasks)
		metrics_tasks_json(extra, &r->tasks, in->tasks_feed);
	return extra;
}
