/* metrics.json's roastop extras: the session's, the server's and the
 * sources' blocks and the run's tasks, from data the app gathered. Each
 * block is one object on one line, in cJSON's compact text (jsonw.h). */
#include "roastop/metrics_extra.h"

#include <math.h>
#include <string.h>

#include "roastop/common.h"
#include "roastop/counters.h"
#include "roastop/previous.h"
#include "roastop/metrics_tasks.h"

struct counter {
	const char *name;
	uint64_t value;
};

/* Has a counter before c[i] its group? */
static bool group_seen(const struct source_counter *c, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (c[j].group && !strcmp(c[j].group, c[i].group))
			return true;
	return false;
}

/* The group of c[i], where it first appears, with every member: written
 * when non-zero, "total" always (event.h). */
static void group_block(struct jsonw *w, const struct source_counter *c, size_t n, size_t i)
{
	jsonw_object(w, c[i].group);
	for (size_t j = i; j < n; j++)
		if (c[j].group && !strcmp(c[j].group, c[i].group) &&
		    (c[j].value || !strcmp(c[j].name, "total")))
			jsonw_num(w, c[j].name, (double)c[j].value);
	jsonw_end(w, '}');
}

/* A source's block under its name: its state, figures and counters
 * (source.h). */
static void source_block(struct jsonw *w, const char *name, const char *state_key,
			 const char *state, const struct source_figure *fg, size_t n_fg,
			 const struct source_counter *c, size_t n_c)
{
	jsonw_object_as(w, name, JSONW_CJSON);
	if (state_key)
		jsonw_str(w, state_key, state);
	for (size_t i = 0; i < n_fg; i++)
		jsonw_opt(w, fg[i].name, isnan(fg[i].value) ? optnum_none() : optnum_of(fg[i].value));
	for (size_t i = 0; i < n_c; i++) {
		if (!c[i].group)
			jsonw_num(w, c[i].name, (double)c[i].value);
		else if (!group_seen(c, i))
			group_block(w, c, n_c, i);
	}
	jsonw_end(w, '}');
}

/* The session's own counters (session.h): runs kept and lost. */
static void session_extra(struct jsonw *w, const struct session *s)
{
	const struct counter c[] = {
		{ "runs", s->runs_total },
		{ "runs_summarised", s->runs_summarised },
		{ "runs_dropped", s->rows_dropped },
		{ "runs_refused", s->runs_refused },
		{ "late_chunks_lost", s->late_lost },
		{ "events_unrouted", s->unrouted },
	};
	jsonw_object_as(w, "session", JSONW_CJSON);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(c); i++)
		jsonw_num(w, c[i].name, (double)c[i].value);
	jsonw_end(w, '}');
}

/* Every rejection (0 included) in one object, named after the first's
 * group, with their total. */
static void serve_rejections(struct jsonw *w, const struct source_stats *st, size_t first)
{
	uint64_t total = 0;
	jsonw_object(w, st->counters[first].group);
	for (size_t i = first; i < st->n_counters; i++) {
		const struct source_counter *c = &st->counters[i];
		if (!c->group)
			continue;
		total += c->value;
		jsonw_num(w, c->name, (double)c->value);
	}
	jsonw_num(w, "total", (double)total);
	jsonw_end(w, '}');
}

/* The HTTP server's counters and its rejections; its failure to start,
 * when it did not. */
static void serve_extra(struct jsonw *w, const struct metrics_extra_input *in)
{
	jsonw_object_as(w, "serve", JSONW_CJSON);
	if (!in->serve_listen) {
		jsonw_opt(w, "listen", optnum_none());
		jsonw_str(w, "error", in->serve_error ? in->serve_error : "");
		jsonw_num(w, "open_failures", (double)in->serve_failures);
		jsonw_end(w, '}');
		return;
	}
	jsonw_str(w, "listen", in->serve_listen);
	const struct source_stats *st = &in->serve_counters;
	bool grouped = false;
	for (size_t i = 0; i < st->n_counters; i++) {
		const struct source_counter *c = &st->counters[i];
		if (!c->group)
			jsonw_num(w, c->name, (double)c->value);
		else if (!grouped)
			serve_rejections(w, st, i);
		grouped = grouped || c->group;
	}
	jsonw_end(w, '}');
}

void metrics_extra_write(struct jsonw *w, const struct metrics_extra_input *in,
			 const struct run *r, const struct metrics *m)
{
	session_extra(w, in->ses);
	if (in->serve_listen || in->serve_failures)
		serve_extra(w, in);
	/* the live sources' blocks: the model's copies of their counters */
	for (size_t i = 0; i < in->ses->counters.n; i++) {
		struct ev_counters c;
		counters_view(&in->ses->counters, i, &c);
		source_block(w, c.source, c.state_key, c.state, NULL, 0, c.counters, c.n_counters);
	}
	for (size_t i = 0; i < in->n_recorded; i++) {
		const struct source_stats *st = &in->recorded_stats[i];
		source_block(w, in->recorded_names[i], st->state_key, st->state, st->figures,
			     st->n_figures, st->counters, st->n_counters);
	}
	if (r && in->previous)
		previous_json(w, in->previous, r, m);
	if (r && in->tasks)
		metrics_tasks_json(w, &r->tasks, &m->tasks, in->tasks_fed ? &in->tasks_feed : NULL);
}
