#include "roastop/metrics_tasks.h"

#include <stdio.h>
#include <string.h>

#include "roastop/format.h"

/* Finished tasks the stream missed; 0 without a feed. */
static uint64_t mt_missed(const struct source_typed *feed)
{
	return feed ? feed->missed : 0;
}

bool metrics_tasks_feed_measured(const struct source_typed *feed)
{
	return feed->connects || feed->task_answers || feed->prefix_answers;
}

/* The poller's feed: the route's records, else the scheduler's per-prefix
 * totals off its /metrics (a watch without the route). */
static bool mt_totals_only(const struct source_typed *feed)
{
	return feed->role == SOURCE_TASK_ROUTE && !feed->task_answers && feed->prefix_answers;
}

/* Is the feed /eventstream's (the task stream source), not the route's? */
static bool mt_is_stream(const struct source_typed *feed)
{
	return feed->role == SOURCE_TASK_STREAM;
}

const char *metrics_tasks_feed_state(const struct source_typed *feed)
{
	if (mt_is_stream(feed))
		return feed->state;
	return mt_totals_only(feed) ? "prometheus" : "route";
}

/* A feed that never reached the scheduler measured nothing: null, not 0. */
static optnum mt_measured(const struct tasks *t, const struct source_typed *feed, uint64_t n)
{
	bool measured = t->count || !feed || metrics_tasks_feed_measured(feed);
	return measured ? optnum_of((double)n) : optnum_none();
}

/* Where the tasks came from, for summary.txt. */
static const char *mt_label(const struct source_typed *feed)
{
	if (!feed)
		return "Dask tasks";
	if (mt_is_stream(feed))
		return "Dask tasks (/eventstream)";
	return mt_totals_only(feed) ? "Dask tasks (prometheus)" : "Dask tasks (route)";
}

/* The stream fell behind the scheduler's own count (its plugin replaced or
 * removed by another /eventstream client, taskcheck.h): the counts are
 * what it received, a lower bound, and say so. */
static void mt_lower_bound(struct jsonw *w, const struct source_typed *feed)
{
	uint64_t missed = mt_missed(feed);
	if (!missed)
		return;
	char why[320];
	snprintf(why, sizeof(why),
		 "the task stream fell behind the scheduler %llu times (another /eventstream "
		 "client replaced or removed its plugin): at least %llu finished tasks were not "
		 "received, so count and the per-prefix figures are a lower bound",
		 (unsigned long long)feed->behind, (unsigned long long)missed);
	jsonw_bool(w, "count_lower_bound", true);
	jsonw_num(w, "missed_at_least", (double)missed);
	jsonw_str(w, "count_reason", why);
}

/* A lower bound is not the count. */
static optnum mt_in_flight(const struct task_prefix_figures *f)
{
	return f->in_flight_partial ? optnum_none() : f->in_flight;
}

static void mt_prefix(struct jsonw *w, const struct tasks_prefix *p,
		      const struct task_prefix_figures *f)
{
	jsonw_object(w, NULL);
	jsonw_str(w, "prefix", p->name);
	jsonw_num(w, "count", (double)p->count);
	jsonw_opt(w, "erred", f->erred);
	jsonw_opt(w, "in_flight", mt_in_flight(f));
	jsonw_opt(w, "compute_p50_seconds", f->compute_p50);
	jsonw_opt(w, "compute_p90_seconds", f->compute_p90);
	jsonw_opt(w, "compute_p99_seconds", f->compute_p99);
	jsonw_opt(w, "compute_max_seconds", f->compute_max);
	jsonw_opt(w, "compute_seconds", f->compute_seconds);
	jsonw_opt(w, "transfers", f->transfers);
	jsonw_opt(w, "transfer_seconds", f->transfer_seconds);
	jsonw_opt(w, "disk_reads", f->disk_reads);
	jsonw_opt(w, "disk_read_seconds", f->disk_read_seconds);
	jsonw_opt(w, "stragglers", f->stragglers);
	jsonw_opt(w, "straggler_after_seconds", f->straggler_after);
	jsonw_end(w, '}');
}

static void mt_stragglers(struct jsonw *w, const struct tasks *t)
{
	jsonw_array(w, "stragglers");
	for (size_t i = 0; i < tasks_straggler_count(t); i++) {
		const struct tasks_straggler *s = tasks_straggler_at(t, i);
		jsonw_object(w, NULL);
		jsonw_str(w, "key", s->key);
		jsonw_str(w, "prefix", s->prefix);
		jsonw_str(w, "worker", s->worker);
		jsonw_num(w, "seconds", s->seconds);
		jsonw_num(w, "threshold_seconds", s->threshold);
		jsonw_end(w, '}');
	}
	jsonw_end(w, ']');
}

/* in_flight: the route's tasks executing now, null without it. */
static void mt_running(struct jsonw *w, const struct tasks *t, const struct task_figures *fig)
{
	const struct tasks_route *r = &t->route;
	if (!fig->in_flight.valid) {
		jsonw_opt(w, "in_flight", optnum_none());
		jsonw_str(w, "in_flight_reason",
			  "no answer from the collector's route (not installed, or the "
			  "scheduler lost): /eventstream tells finished tasks only");
		return;
	}
	jsonw_object(w, "in_flight");
	jsonw_opt(w, "count", fig->in_flight);
	jsonw_array(w, "oldest");
	for (size_t i = 0; i < r->n_running; i++) {
		jsonw_object(w, NULL);
		jsonw_str(w, "key", r->running[i].key);
		jsonw_str(w, "prefix", r->running[i].prefix);
		jsonw_str(w, "worker", r->running[i].worker);
		jsonw_num(w, "seconds", r->running[i].seconds);
		jsonw_bool(w, "straggler", fig->running_straggler[i]);
		jsonw_end(w, '}');
	}
	jsonw_end(w, ']');
	jsonw_num(w, "stragglers", (double)fig->running_stragglers);
	jsonw_end(w, '}');
}

/* erred: the route's failed tasks, null without it. */
static void mt_erred(struct jsonw *w, const struct tasks *t, const struct task_figures *fig)
{
	jsonw_opt(w, "erred", fig->erred);
	if (t->route.erred_measured)
		jsonw_num(w, "erred_prefixes_left_out", (double)t->route.erred_left_out);
	else
		jsonw_str(w, "erred_reason",
			  "the collector's route never answered: /eventstream sends "
			  "nothing for a task that raised");
}

/* Tasks counted from the scheduler's totals alone have no durations: no
 * straggler can be told among them. */
static void mt_straggler_count(struct jsonw *w, const struct tasks *t,
			       const struct source_typed *feed)
{
	if (t->from_totals && t->from_totals == t->count) {
		jsonw_opt(w, "straggler_count", optnum_none());
		jsonw_str(w, "straggler_reason",
			  "counted from the scheduler's per-prefix totals on its /metrics, "
			  "which carry no per-task durations: install the collector's route "
			  "(or --task-stream) for quantiles and stragglers");
		return;
	}
	jsonw_opt(w, "straggler_count", mt_measured(t, feed, t->stragglers));
}

/* Where the counts came from (docs/scheduler.md, "Task figures without
 * the route"). */
static void mt_source(struct jsonw *w, const struct tasks *t, const struct source_typed *feed)
{
	if (!feed)
		return;
	jsonw_str(w, "source", mt_totals_only(feed) ? "prometheus"
			       : mt_is_stream(feed) ? "eventstream"
						    : "route");
	if (t->route.totals_measured)
		jsonw_num(w, "prefixes_left_out", (double)t->route.totals_left_out);
}

void metrics_tasks_json(struct jsonw *w, const struct tasks *t, const struct task_figures *fig,
			const struct source_typed *feed)
{
	jsonw_object_as(w, "tasks", JSONW_CJSON);
	mt_source(w, t, feed);
	jsonw_opt(w, "count", mt_measured(t, feed, t->count));
	mt_lower_bound(w, feed);
	mt_erred(w, t, fig);
	jsonw_num(w, "prefix_overflow", (double)t->prefix_overflow);
	jsonw_num(w, "pool_refused", (double)t->pool_refused);
	mt_running(w, t, fig);
	mt_straggler_count(w, t, feed);
	jsonw_array(w, "prefixes");
	for (size_t i = 0; i < t->n && i < fig->n; i++)
		mt_prefix(w, &t->prefixes[i], &fig->prefix[i]);
	jsonw_end(w, ']');
	mt_stragglers(w, t);
	jsonw_end(w, '}');
}

#define MT_TEXT_PREFIXES 10

static void mt_text_prefix(const struct tasks_prefix *p, const struct task_prefix_figures *f,
			   struct strbuf *sb)
{
	char a[FMT_LEN], b[FMT_LEN], e[FMT_LEN], fl[FMT_LEN];
	char s[FMT_LEN];
	strbuf_appendf(sb, "  %-32.32s %10.0f %6s %6s %9s %9s %5s\n", p->name, (double)p->count,
		       format_num(e, f->erred, "%.0f"), format_num(fl, mt_in_flight(f), "%.0f"),
		       format_duration(a, f->compute_p50), format_duration(b, f->compute_p90),
		       format_num(s, f->stragglers, "%.0f"));
}

/* The latest straggler and the oldest task in flight, when there are. */
static void mt_text_latest(const struct tasks *t, const struct task_figures *fig,
			   struct strbuf *sb)
{
	char a[FMT_LEN];
	const struct tasks_straggler *s = tasks_straggler_at(t, 0);
	if (s)
		strbuf_appendf(sb, "  latest straggler: %s on %s, %s\n", s->key, s->worker,
			       format_duration(a, optnum_of(s->seconds)));
	const struct tasks_running *r = &t->route.running[0];
	if (fig->in_flight.valid && t->route.n_running)
		strbuf_appendf(sb, "  oldest in flight: %s on %s, %s%s\n", r->key, r->worker,
			       format_duration(a, optnum_of(r->seconds)),
			       fig->running_straggler[0] ? " (straggler)" : "");
}

void metrics_tasks_text(const struct tasks *t, const struct task_figures *fig,
			const struct source_typed *feed, struct strbuf *sb)
{
	optnum n = mt_measured(t, feed, t->count);
	if (!n.valid) {
		strbuf_appendf(sb, "\n%s: n/a (%s)\n", mt_label(feed),
			       mt_is_stream(feed)
				       ? "the stream never connected"
				       : "no collector route answered; --task-stream reads /eventstream");
		return;
	}
	char e[FMT_LEN], f[FMT_LEN];
	uint64_t missed = mt_missed(feed);
	char s[FMT_LEN];
	bool totals = t->from_totals && t->from_totals == t->count;
	strbuf_appendf(sb, "\n%s: %s%.0f tasks, %s erred, %s in flight, %s stragglers\n",
		       mt_label(feed), missed ? "at least " : "", n.value,
		       format_num(e, fig->erred, "%.0f"), format_num(f, fig->in_flight, "%.0f"),
		       format_num(s, totals ? optnum_none() : optnum_of((double)t->stragglers),
				  "%.0f"));
	if (totals)
		strbuf_appendf(sb, "  the scheduler's per-prefix totals (its /metrics): no "
			       "durations, failures or tasks in flight without the route\n");
	if (missed)
		strbuf_appendf(sb, "  a lower bound: the stream missed at least %llu finished tasks "
			       "(another /eventstream client replaced or removed its plugin)\n",
			       (unsigned long long)missed);
	size_t shown = t->n < fig->n ? t->n : fig->n; /* in the model's order: first seen first */
	if (shown > 0)
		strbuf_appendf(sb, "  %-32s %10s %6s %6s %9s %9s %5s\n", "prefix", "tasks", "erred",
			       "flight", "p50", "p90", "strag");
	for (size_t i = 0; i < shown && i < MT_TEXT_PREFIXES; i++)
		mt_text_prefix(&t->prefixes[i], &fig->prefix[i], sb);
	if (shown > MT_TEXT_PREFIXES)
		strbuf_appendf(sb, "  ... %d more prefixes in metrics.json\n",
			       (int)(shown - MT_TEXT_PREFIXES));
	mt_text_latest(t, fig, sb);
}
