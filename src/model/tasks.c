#include "roastop/tasks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tasks_init(struct tasks *ts)
{
	memset(ts, 0, sizeof(*ts));
	hist_init(&ts->all);
	ts->t_first = ts->t_last = NAN;
	ts->route.seen_since = NAN;
}

#define TASKS_FIRST_PREFIXES 8u

static size_t tasks_bytes(const struct tasks *ts)
{
	return ts->cap * sizeof(struct tasks_prefix) +
	       (ts->lanes ? TASKS_LANES * sizeof(struct tasks_lane) : 0);
}

void tasks_set_pool(struct tasks *ts, struct strmap_pool *pool)
{
	strmap_pool_release(ts->pool, tasks_bytes(ts));
	ts->pool = pool;
	strmap_pool_charge(pool, tasks_bytes(ts));
}

/* Whether the pool has `more` bytes for the model; a refusal is counted. */
static bool tasks_pool_has(struct tasks *ts, size_t more)
{
	if (strmap_pool_fits(ts->pool, more))
		return true;
	ts->pool_refused++;
	return false;
}

/* The route's latest failed-task list, from one model to another. */
static void tasks_seen_copy(struct tasks_route *to, const struct tasks_route *from)
{
	to->seen_since = from->seen_since;
	to->n_seen = from->n_seen;
	memcpy(to->seen, from->seen, from->n_seen * sizeof(from->seen[0]));
	to->totals_based = from->totals_based;
	to->n_totals = from->n_totals;
	memcpy(to->totals, from->totals, from->n_totals * sizeof(from->totals[0]));
}

void tasks_clear(struct tasks *ts)
{
	struct strmap_pool *pool = ts->pool;
	struct tasks_route kept = ts->route;
	tasks_free(ts);
	tasks_set_pool(ts, pool);
	tasks_seen_copy(&ts->route, &kept);
}

void tasks_route_inherit(struct tasks *ts, const struct tasks *from)
{
	tasks_seen_copy(&ts->route, &from->route);
}

void tasks_free(struct tasks *ts)
{
	tasks_set_pool(ts, NULL);
	free(ts->prefixes);
	free(ts->lanes);
	tasks_init(ts);
}

/* Room for one more prefix: the table doubles as prefixes appear (a run
 * of few prefixes holds little), charged to the pool. */
static bool tasks_prefix_room(struct tasks *ts)
{
	if (ts->n < ts->cap)
		return true;
	if (ts->cap == TASKS_MAX_PREFIXES) {
		ts->prefix_overflow++;
		return false;
	}
	size_t cap = ts->cap ? ts->cap * 2 : TASKS_FIRST_PREFIXES;
	cap = cap < TASKS_MAX_PREFIXES ? cap : TASKS_MAX_PREFIXES;
	size_t more = (cap - ts->cap) * sizeof(*ts->prefixes);
	struct tasks_prefix *p = NULL;
	if (tasks_pool_has(ts, more) && !(p = realloc(ts->prefixes, cap * sizeof(*p))))
		ts->pool_refused++;
	if (!p)
		return false;
	ts->prefixes = p;
	ts->cap = cap;
	strmap_pool_charge(ts->pool, more);
	return true;
}

/* The index of the prefix named name, or ts->n. */
static size_t tasks_prefix_index(const struct tasks *ts, const char *name)
{
	size_t i = 0;
	while (i < ts->n && strncmp(ts->prefixes[i].name, name, TASKS_NAME_LEN - 1))
		i++;
	return i;
}

const struct tasks_prefix *tasks_prefix_find(const struct tasks *ts, const char *name)
{
	size_t i = tasks_prefix_index(ts, name);
	return i < ts->n ? &ts->prefixes[i] : NULL;
}

static struct tasks_prefix *tasks_prefix(struct tasks *ts, const char *name)
{
	size_t i = tasks_prefix_index(ts, name);
	if (i < ts->n)
		return &ts->prefixes[i];
	if (!tasks_prefix_room(ts))
		return NULL;
	struct tasks_prefix *p = &ts->prefixes[ts->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	hist_init(&p->compute);
	return p;
}

optnum tasks_straggler_after(const struct tasks *ts, const struct tasks_prefix *p)
{
	const struct hist *h = p ? &p->compute : &ts->all;
	if (h->count < TASKS_STRAGGLER_MIN)
		return optnum_none();
	optnum p90 = hist_quantile(h, 0.9), p99 = hist_quantile(h, 0.99);
	if (!p90.valid || !p99.valid)
		return optnum_none();
	return optnum_of(fmax(3 * p90.value, p99.value));
}

/* The threshold a task of p is judged against: its prefix's finished
 * tasks, else (a prefix of few, such as one slow delayed call) all tasks. */
optnum tasks_judged_after(const struct tasks *ts, const struct tasks_prefix *p)
{
	optnum after = p ? tasks_straggler_after(ts, p) : optnum_none();
	return after.valid ? after : tasks_straggler_after(ts, NULL);
}

/* Judged before it is added. */
static void tasks_judge(struct tasks *ts, struct tasks_prefix *p, const struct ev_task *t,
			double sec)
{
	optnum after = tasks_judged_after(ts, p);
	if (!after.valid || sec <= after.value)
		return;
	struct tasks_straggler *s = &ts->straggler[ts->stragglers++ % TASKS_STRAGGLERS_KEPT];
	snprintf(s->key, sizeof(s->key), "%s", t->key);
	snprintf(s->prefix, sizeof(s->prefix), "%s", t->prefix);
	snprintf(s->worker, sizeof(s->worker), "%s", t->worker ? t->worker : "?");
	s->seconds = sec;
	s->threshold = after.value;
	s->t = t->stop.value;
	if (p)
		p->stragglers++;
}

/* The lanes, on the first task, charged to the pool. */
static bool tasks_lanes_alloc(struct tasks *ts)
{
	size_t bytes = TASKS_LANES * sizeof(*ts->lanes);
	if (tasks_pool_has(ts, bytes) && !(ts->lanes = calloc(TASKS_LANES, sizeof(*ts->lanes))))
		ts->pool_refused++;
	if (ts->lanes)
		strmap_pool_charge(ts->pool, bytes);
	return ts->lanes != NULL;
}

static void tasks_lane_add(struct tasks *ts, const struct ev_task *t, const struct tasks_prefix *p)
{
	const char *w = t->worker ? t->worker : "?";
	struct tasks_lane *l = NULL;
	for (size_t i = 0; i < ts->n_lanes && !l; i++)
		if (!strncmp(ts->lanes[i].worker, w, TASKS_NAME_LEN - 1))
			l = &ts->lanes[i];
	if (!l && !ts->lanes && !tasks_lanes_alloc(ts))
		return;
	if (!l && ts->n_lanes == TASKS_LANES)
		return; /* not drawn */
	if (!l) {
		l = &ts->lanes[ts->n_lanes++];
		snprintf(l->worker, sizeof(l->worker), "%s", w);
	}
	l->slot[l->n++ % TASKS_LANE_KEPT] = (struct tasks_slot){
		.start = t->start.value, .stop = t->stop.value,
		.prefix = p ? (uint32_t)(p - ts->prefixes) : TASKS_MAX_PREFIXES };
}

const struct tasks_slot *tasks_lane_slot(const struct tasks_lane *l, size_t i)
{
	if (i >= l->n || i >= TASKS_LANE_KEPT)
		return NULL;
	return &l->slot[(l->n - 1 - i) % TASKS_LANE_KEPT];
}

bool tasks_apply(struct tasks *ts, const struct ev_task *t, double now)
{
	(void)now;
	if (!t->action || !event_task_times_ok(t))
		return false;
	struct tasks_prefix *p = tasks_prefix(ts, t->prefix ? t->prefix : "Other");
	double sec = t->stop.value - t->start.value;
	bool transfer = !strcmp(t->action, "transfer");
	if (transfer || !strcmp(t->action, "disk-read")) {
		if (p) {
			*(transfer ? &p->transfer_s : &p->disk_read_s) += sec;
			(*(transfer ? &p->transfers : &p->disk_reads))++;
		}
		return p != NULL;
	}
	if (strcmp(t->action, "compute"))
		return true; /* disk-write and others: not counted */
	bool erred = t->status && strcmp(t->status, "OK");
	tasks_judge(ts, p, t, sec);
	tasks_lane_add(ts, t, p);
	ts->count++;
	ts->erred += erred;
	hist_add(&ts->all, sec);
	ts->t_first = isnan(ts->t_first) ? t->stop.value : fmin(ts->t_first, t->stop.value);
	ts->t_last = isnan(ts->t_last) ? t->stop.value : fmax(ts->t_last, t->stop.value);
	if (!p)
		return false;
	p->count++;
	p->erred += erred;
	hist_add(&p->compute, sec);
	p->compute_s += sec;
	p->compute_measured = true;
	return true;
}

size_t tasks_straggler_count(const struct tasks *ts)
{
	return ts->stragglers < TASKS_STRAGGLERS_KEPT ? ts->stragglers : TASKS_STRAGGLERS_KEPT;
}

/* i = 0 is the latest. */
const struct tasks_straggler *tasks_straggler_at(const struct tasks *ts, size_t i)
{
	if (i >= tasks_straggler_count(ts))
		return NULL;
	return &ts->straggler[(ts->stragglers - 1 - i) % TASKS_STRAGGLERS_KEPT];
}

/* The growth of a prefix's count since the list before, where a prefix it
 * did not name had none. The counts are since the route's install (the
 * run's start, erred_since), so a roastop that first polls mid-run counts
 * the run's failures so far, and a list from another install starts from
 * none; a count that fell (a new scheduler's) counts from 0. */
static double tasks_erred_growth(const struct tasks_route *r, const struct kv_num *kv)
{
	double before = 0;
	for (size_t i = 0; i < r->n_seen; i++)
		if (!strncmp(r->seen[i].prefix, kv->key, TASKS_NAME_LEN - 1))
			before = r->seen[i].n;
	return kv->value >= before ? kv->value - before : kv->value;
}

/* The sample's list becomes the one the next is measured against. */
static void tasks_erred_keep(struct tasks_route *r, const struct ev_sample *s)
{
	r->n_seen = 0;
	for (size_t i = 0; i < s->n_erred && i < TASKS_ERRED_SEEN; i++) {
		struct tasks_erred_seen *e = &r->seen[r->n_seen++];
		snprintf(e->prefix, sizeof(e->prefix), "%s", s->erred[i].key);
		e->n = s->erred[i].value;
	}
	r->seen_since = s->erred_since.value;
}

static void tasks_running_take(struct tasks *ts, const struct ev_sample *s)
{
	struct tasks_route *r = &ts->route;
	r->running_measured = s->running_left_out.valid;
	r->running_count = r->running_measured ? s->n_running + (uint64_t)s->running_left_out.value
					       : 0;
	r->n_running = 0;
	for (size_t i = 0; r->running_measured && i < s->n_running; i++) {
		if (r->n_running == TASKS_RUNNING_KEPT)
			break;
		struct tasks_running *t = &r->running[r->n_running++];
		snprintf(t->key, sizeof(t->key), "%s", s->running[i].key);
		snprintf(t->prefix, sizeof(t->prefix), "%s", s->running[i].prefix);
		snprintf(t->worker, sizeof(t->worker), "%s", s->running[i].worker);
		t->seconds = s->running[i].seconds;
	}
}

/* A prefix's growth in the totals since the list before (done or compute
 * seconds); a prefix the list did not name had none, a value that fell (a
 * new scheduler's) counts from 0. */
static double tasks_total_growth(const struct tasks_route *r, const struct kv_num *kv, bool done)
{
	double before = 0;
	for (size_t i = 0; i < r->n_totals; i++)
		if (!strncmp(r->totals[i].prefix, kv->key, TASKS_NAME_LEN - 1)) {
			double v = done ? r->totals[i].done : r->totals[i].compute;
			before = isnan(v) ? 0 : v;
		}
	return kv->value >= before ? kv->value - before : kv->value;
}

static void tasks_total_grow(struct tasks *ts, const struct kv_num *kv, bool done)
{
	double grew = ts->route.totals_based ? tasks_total_growth(&ts->route, kv, done) : 0;
	struct tasks_prefix *p = grew > 0 ? tasks_prefix(ts, kv->key) : NULL;
	if (done && grew > 0) { /* a prefix past the cap: in the totals only */
		ts->count += (uint64_t)grew;
		ts->from_totals += (uint64_t)grew;
	}
	if (p && done) {
		p->count += (uint64_t)grew;
		p->from_totals += (uint64_t)grew;
	} else if (p) {
		p->compute_s += grew;
		p->compute_measured = true;
	}
}

/* The entry of the kept list for name, added (not in either list: NAN). */
static struct tasks_total_seen *tasks_total_slot(struct tasks_route *r, const char *name)
{
	for (size_t i = 0; i < r->n_totals; i++)
		if (!strncmp(r->totals[i].prefix, name, TASKS_NAME_LEN - 1))
			return &r->totals[i];
	if (r->n_totals == TASKS_MAX_PREFIXES)
		return NULL;
	struct tasks_total_seen *e = &r->totals[r->n_totals++];
	snprintf(e->prefix, sizeof(e->prefix), "%s", name);
	e->done = e->compute = NAN;
	return e;
}

static void tasks_totals_take(struct tasks *ts, const struct ev_sample *s)
{
	struct tasks_route *r = &ts->route;
	if (!s->prefixes_left_out.valid)
		return;
	r->totals_measured = true;
	r->totals_left_out = (uint64_t)s->prefixes_left_out.value;
	for (size_t i = 0; i < s->n_prefix_done; i++)
		tasks_total_grow(ts, &s->prefix_done[i], true);
	for (size_t i = 0; i < s->n_prefix_compute; i++)
		tasks_total_grow(ts, &s->prefix_compute[i], false);
	r->n_totals = 0; /* the sample's list becomes the one the next is measured against */
	for (size_t i = 0; i < s->n_prefix_done + s->n_prefix_compute; i++) {
		bool done = i < s->n_prefix_done;
		const struct kv_num *kv =
			done ? &s->prefix_done[i] : &s->prefix_compute[i - s->n_prefix_done];
		struct tasks_total_seen *e = tasks_total_slot(r, kv->key);
		if (e)
			*(done ? &e->done : &e->compute) = kv->value;
	}
	r->totals_based = true;
}

/* A prefix gets a row only once its count grew here: failures before
 * (another run's) are not this model's. */
void tasks_apply_sample(struct tasks *ts, const struct ev_sample *s)
{
	tasks_running_take(ts, s);
	tasks_totals_take(ts, s);
	if (!s->erred_left_out.valid)
		return;
	/* past the list kept, a prefix's count could not be told from its
	 * growth: counted as left out, as the route's own */
	size_t n = s->n_erred < TASKS_ERRED_SEEN ? s->n_erred : TASKS_ERRED_SEEN;
	ts->route.erred_measured = true;
	ts->route.erred_left_out = (uint64_t)s->erred_left_out.value + (s->n_erred - n);
	if (ts->route.seen_since != s->erred_since.value)
		ts->route.n_seen = 0; /* counted from another install: none before it */
	for (size_t i = 0; i < n; i++) {
		double grew = tasks_erred_growth(&ts->route, &s->erred[i]);
		struct tasks_prefix *p = grew > 0 ? tasks_prefix(ts, s->erred[i].key) : NULL;
		if (p)
			p->erred_route += grew;
	}
	tasks_erred_keep(&ts->route, s);
}

void tasks_route_lost(struct tasks *ts)
{
	ts->route.running_measured = false;
	ts->route.running_count = 0;
	ts->route.n_running = 0;
}

bool tasks_route_own(const struct tasks *ts, const struct ev_sample *s)
{
	return s->erred_since.valid && s->erred_since.value == ts->route.seen_since;
}
