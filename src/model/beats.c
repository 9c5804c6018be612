/* Heartbeats to samples (beats.h). */
#include "roastop/beats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/strutil.h"

void beats_init(struct beats *b)
{
	memset(b, 0, sizeof(*b));
	strmap_init(&b->procs, sizeof(struct beat_proc), BEATS_MAX);
	b->t_sample = b->t_scheduler = -INFINITY;
	event_init(&b->sample);
}

void beats_free(struct beats *b)
{
	strmap_free(&b->procs);
	event_free(&b->sample);
}

void beats_set_pool(struct beats *b, struct strmap_pool *pool)
{
	strmap_set_pool(&b->procs, pool, 0);
}

void beats_saw_scheduler(struct beats *b, double t)
{
	if (t > b->t_scheduler)
		b->t_scheduler = t;
}

/* CPU percent of one core over the time since its previous beat. */
static void beats_cpu(struct beat_proc *p, const struct ev_heartbeat *hb, double t)
{
	if (!hb->cpu_time.valid)
		return;
	double dt = t - p->t_cpu, dc = hb->cpu_time.value - p->cpu;
	if (p->t_cpu > 0 && dt > 0 && dc >= 0)
		p->cpu_pct = optnum_of(100.0 * dc / dt);
	p->t_cpu = t;
	p->cpu = hb->cpu_time.value;
}

/* Takes one beat into the table: true when it is a process not seen before. */
static bool beats_take(struct beats *b, const struct ev_heartbeat *hb, double t)
{
	char key[160];
	snprintf(key, sizeof(key), "%.127s:%.0f", hb->host, hb->pid.value);
	bool added = false;
	struct beat_proc *p = strmap_upsert(&b->procs, key, &added);
	if (!p) {
		b->overflow++;
		return false;
	}
	if (added) {
		strutil_copy(p->host, sizeof(p->host), hb->host);
		p->pid = hb->pid;
	}
	if (t < p->t_last)
		return false; /* older than what it already said */
	p->t_last = t;
	double every = hb->interval.valid ? hb->interval.value : 1.0;
	p->depart = fmax(BEATS_DEPART_MIN, BEATS_MISSED * every);
	p->rss = hb->rss_bytes;
	p->in_flight = hb->chunks_in_flight;
	strutil_copy(p->worker, sizeof(p->worker), hb->worker ? hb->worker : "");
	beats_cpu(p, hb, t);
	return added;
}

static bool beats_alive(void *val, void *ctx)
{
	const struct beat_proc *p = val;
	return p->t_last + p->depart >= *(const double *)ctx;
}

static void beats_worker(struct event *ev, struct worker_sample *w, const char *key,
			 const struct beat_proc *p)
{
	w->id = arena_strdup(&ev->mem, key);
	w->name = arena_strdup(&ev->mem, p->worker[0] ? p->worker : key);
	w->host = arena_strdup(&ev->mem, p->host);
	w->status = "running";
	w->nthreads = w->memory_limit = w->processing = w->managed_bytes = w->spilled_bytes =
		w->occupancy = optnum_none();
	w->memory_bytes = p->rss;
	w->cpu_percent = p->cpu_pct;
	w->executing = p->in_flight;
	w->pid = p->pid;
}

/* The table as a sample at t; NULL when out of memory. */
static const struct event *beats_sample(struct beats *b, double t)
{
	struct event *ev = &b->sample;
	event_reset(ev);
	size_t n = b->procs.count;
	struct worker_sample *w = n ? arena_alloc(&ev->mem, n * sizeof(*w)) : NULL;
	if (n && !w)
		return NULL;
	for (size_t i = 0; i < n; i++)
		beats_worker(ev, &w[i], strmap_key_at(&b->procs, i), strmap_val_at(&b->procs, i));
	ev->type = EV_SAMPLE;
	ev->t = t;
	struct ev_sample *s = &ev->u.sample;
	s->source = BEATS_SAMPLE_SOURCE;
	s->worker_count = (uint32_t)n;
	s->n_workers = n;
	s->workers = w;
	s->total_threads = s->tasks_processing = s->tasks_done = s->tasks_total = optnum_none();
	s->tasks_done_cumulative = s->tasks_total_cumulative = optnum_none();
	b->t_sample = t;
	b->samples++;
	return ev;
}

const struct event *beats_apply(struct beats *b, const struct ev_heartbeat *hb, double t)
{
	if (!isfinite(t))
		return NULL;
	bool joined = false;
	if (hb) {
		b->received++;
		joined = beats_take(b, hb, t);
	}
	size_t gone = b->procs.count ? strmap_retain(&b->procs, beats_alive, &t) : 0;
	b->departed += gone;
	if (t - b->t_scheduler < BEATS_SCHEDULER_QUIET)
		return NULL; /* the scheduler's samples describe the workers */
	/* a process joining or leaving is drawn at once; the rest once a second */
	if (!gone && !joined && (!hb || t - b->t_sample < BEATS_SAMPLE_EVERY))
		return NULL;
	return beats_sample(b, t);
}
