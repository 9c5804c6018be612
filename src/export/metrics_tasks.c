#include "roastop/metrics_tasks.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"

static void mt_num(cJSON *o, const char *name, optnum v)
{
	if (v.valid)
		cJSON_AddNumberToObject(o, name, v.value);
	else
		cJSON_AddNullToObject(o, name);
}

static void mt_prefix(cJSON *arr, const struct tasks *t, const struct tasks_prefix *p)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return;
	}
	cJSON_AddStringToObject(o, "prefix", p->name);
	cJSON_AddNumberToObject(o, "count", (double)p->count);
	mt_num(o, "erred", tasks_erred(t, p));
	bool partial;
	optnum flight = tasks_running_of(t, p, &partial);
	mt_num(o, "in_flight", partial ? optnum_none() : flight); /* a lower bound is not it */
	const double q[] = { 0.5, 0.9, 0.99 };
	const char *qn[] = { "compute_p50_seconds", "compute_p90_seconds", "compute_p99_seconds" };
	for (int i = 0; i < 3; i++)
		mt_num(o, qn[i], hist_quantile(&p->compute, q[i]));
	mt_num(o, "compute_max_seconds", p->count ? optnum_of(p->compute.max) : optnum_none());
	cJSON_AddNumberToObject(o, "transfers", (double)p->transfers);
	mt_num(o, "transfer_seconds", p->transfers ? optnum_of(p->transfer_s) : optnum_none());
	cJSON_AddNumberToObject(o, "disk_reads", (double)p->disk_reads);
	mt_num(o, "disk_read_seconds", p->disk_reads ? optnum_of(p->disk_read_s) : optnum_none());
	cJSON_AddNumberToObject(o, "stragglers", (double)p->stragglers);
	mt_num(o, "straggler_after_seconds", tasks_straggler_after(t, p));
}

static void mt_stragglers(cJSON *o, const struct tasks *t)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "stragglers");
	for (size_t i = 0; arr && i < tasks_straggler_count(t); i++) {
		const struct tasks_straggler *s = tasks_straggler_at(t, i);
		cJSON *e = cJSON_CreateObject();
		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return;
		}
		cJSON_AddStringToObject(e, "key", s->key);
		cJSON_AddStringToObject(e, "prefix", s->prefix);
		cJSON_AddStringToObject(e, "worker", s->worker);
		cJSON_AddNumberToObject(e, "seconds", s->seconds);
		cJSON_AddNumberToObject(e, "threshold_seconds", s->threshold);
	}
}

static void mt_running(cJSON *arr, const struct tasks *t, const struct tasks_running *r)
{
	cJSON *e = cJSON_CreateObject();
	if (!e || !cJSON_AddItemToArray(arr, e)) {
		cJSON_Delete(e);
		return;
	}
	cJSON_AddStringToObject(e, "key", r->key);
	cJSON_AddStringToObject(e, "prefix", r->prefix);
	cJSON_AddStringToObject(e, "worker", r->worker);
	cJSON_AddNumberToObject(e, "seconds", r->seconds);
	cJSON_AddBoolToObject(e, "straggler", tasks_running_straggler(t, r));
}

/* in_flight: the route's tasks executing now, null without it. */
static void mt_in_flight(cJSON *o, const struct tasks *t)
{
	const struct tasks_route *r = &t->route;
	if (!r->running_measured) {
		cJSON_AddNullToObject(o, "in_flight");
		cJSON_AddStringToObject(o, "in_flight_reason",
					"no answer from the collector's route (not installed, or the "
					"scheduler lost): /eventstream tells finished tasks only");
		return;
	}
	cJSON *f = cJSON_AddObjectToObject(o, "in_flight");
	if (!f)
		return;
	cJSON_AddNumberToObject(f, "count", (double)r->running_count);
	cJSON *arr = cJSON_AddArrayToObject(f, "oldest");
	size_t stragglers = 0;
	for (size_t i = 0; i < r->n_running; i++) {
		stragglers += tasks_running_straggler(t, &r->running[i]);
		if (arr)
			mt_running(arr, t, &r->running[i]);
	}
	cJSON_AddNumberToObject(f, "stragglers", (double)stragglers);
}

/* erred: the route's failed tasks, null without it. */
static void mt_erred(cJSON *o, const struct tasks *t)
{
	mt_num(o, "erred", tasks_erred(t, NULL));
	if (t->route.erred_measured)
		cJSON_AddNumberToObject(o, "erred_prefixes_left_out",
					(double)t->route.erred_left_out);
	else
		cJSON_AddStringToObject(o, "erred_reason",
					"the collector's route never answered: /eventstream sends "
					"nothing for a task that raised");
}

/* One of the feed's own counters ("connects": 0 while it never reached the
 * scheduler); 0 when the feed has no such counter. */
static uint64_t mt_feed_count(const struct ev_counters *feed, const char *name)
{
	for (size_t i = 0; feed && i < feed->n_counters; i++)
		if (!feed->counters[i].group && !strcmp(feed->counters[i].name, name))
			return feed->counters[i].value;
	return 0;
}

/* The stream fell behind the scheduler's own count (its plugin replaced or
 * removed by another /eventstream client, taskcheck.h): the counts are
 * what it received, a lower bound, and say so. */
static void mt_lower_bound(cJSON *o, const struct ev_counters *feed)
{
	uint64_t missed = mt_feed_count(feed, "missed");
	if (!missed)
		return;
	char why[320];
	snprintf(why, sizeof(why),
		 "the task stream fell behind the scheduler %llu times (another /eventstream "
		 "client replaced or removed its plugin): at least %llu finished tasks were not "
		 "received, so count and the per-prefix figures are a lower bound",
		 (unsigned long long)mt_feed_count(feed, "behind"), (unsigned long long)missed);
	cJSON_AddBoolToObject(o, "count_lower_bound", true);
	cJSON_AddNumberToObject(o, "missed_at_least", (double)missed);
	cJSON_AddStringToObject(o, "count_reason", why);
}

void metrics_tasks_json(cJSON *parent, const struct tasks *t, const struct ev_counters *feed)
{
	cJSON *o = cJSON_AddObjectToObject(parent, "tasks");
	if (!o)
		return;
	/* a stream never reached measured nothing: null, not 0 */
	bool measured = t->count || !feed || mt_feed_count(feed, "connects");
	mt_num(o, "count", measured ? optnum_of((double)t->count) : optnum_none());
	mt_lower_bound(o, feed);
	mt_erred(o, t);
	cJSON_AddNumberToObject(o, "prefix_overflow", (double)t->prefix_overflow);
	cJSON_AddNumberToObject(o, "pool_refused", (double)t->pool_refused);
	mt_in_flight(o, t);
	mt_num(o, "straggler_count", measured ? optnum_of((double)t->stragglers) : optnum_none());
	cJSON *arr = cJSON_AddArrayToObject(o, "prefixes");
	for (size_t i = 0; arr && i < t->n; i++)
		mt_prefix(arr, t, &t->prefixes[i]);
	mt_stragglers(o, t);
}

static optnum mt_get(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsNumber(v) ? optnum_of(v->valuedouble) : optnum_none();
}

static void mt_text_prefix(const cJSON *p, struct strbuf *sb)
{
	char a[FMT_LEN], b[FMT_LEN], e[FMT_LEN], f[FMT_LEN];
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "prefix");
	strbuf_appendf(sb, "  %-32.32s %10.0f %6s %6s %9s %9s %5.0f\n",
		       cJSON_IsString(name) ? name->valuestring : "?", mt_get(p, "count").value,
		       format_num(e, mt_get(p, "erred"), "%.0f"),
		       format_num(f, mt_get(p, "in_flight"), "%.0f"),
		       format_duration(a, mt_get(p, "compute_p50_seconds")),
		       format_duration(b, mt_get(p, "compute_p90_seconds")),
		       mt_get(p, "stragglers").value);
}

static void mt_text_oldest(const cJSON *r, struct strbuf *sb)
{
	char a[FMT_LEN];
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(r, "key");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "worker");
	if (cJSON_IsString(key) && cJSON_IsString(w))
		strbuf_appendf(sb, "  oldest in flight: %s on %s, %s%s\n", key->valuestring,
			       w->valuestring, format_duration(a, mt_get(r, "seconds")),
			       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "straggler"))
				       ? " (straggler)" : "");
}

void metrics_tasks_text(const cJSON *tasks, struct strbuf *sb)
{
	if (!cJSON_IsObject(tasks))
		return;
	optnum n = mt_get(tasks, "count");
	char a[FMT_LEN];
	if (!n.valid) {
		strbuf_puts(sb, "\nDask tasks (/eventstream): n/a (the stream never connected)\n");
		return;
	}
	const cJSON *fl = cJSON_GetObjectItemCaseSensitive(tasks, "in_flight");
	char e[FMT_LEN], f[FMT_LEN];
	bool partial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tasks, "count_lower_bound"));
	strbuf_appendf(sb, "\nDask tasks (/eventstream): %s%.0f tasks, %s erred, %s in flight, "
		       "%.0f stragglers\n", partial ? "at least " : "", n.value,
		       format_num(e, mt_get(tasks, "erred"), "%.0f"),
		       format_num(f, mt_get(fl, "count"), "%.0f"), mt_get(tasks, "straggler_count").value);
	if (partial)
		strbuf_appendf(sb, "  a lower bound: the stream missed at least %.0f finished tasks "
			       "(another /eventstream client replaced or removed its plugin)\n",
			       mt_get(tasks, "missed_at_least").value);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(tasks, "prefixes");
	if (cJSON_GetArraySize(arr) > 0)
		strbuf_appendf(sb, "  %-32s %10s %6s %6s %9s %9s %5s\n", "prefix", "tasks", "erred",
			       "flight", "p50", "p90", "strag");
	int shown = 0; /* in the model's order: first seen first */
	const cJSON *p;
	cJSON_ArrayForEach(p, arr)
		if (shown++ < 10)
			mt_text_prefix(p, sb);
	if (shown > 10)
		strbuf_appendf(sb, "  ... %d more prefixes in metrics.json\n", shown - 10);
	const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(tasks, "stragglers"), 0);
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(s, "key");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(s, "worker");
	if (cJSON_IsString(key) && cJSON_IsString(w))
		strbuf_appendf(sb, "  latest straggler: %s on %s, %s\n", key->valuestring,
			       w->valuestring, format_duration(a, mt_get(s, "seconds")));
	mt_text_oldest(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(fl, "oldest"), 0), sb);
}
