/* The run model, scheduler samples (run.c has the entry point): the
 * worker table and its histories, the cluster's timelines, progress from
 * the scheduler's task counts, and the queries over the workers seen. */
#include "roastop/run.h"
#include "runpriv.h"
#include "roastop/strutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Trapezoid over this worker's own samples: roastcoffea's per-worker
 * time-weighted memory average. mem_t_last < 0 marks a broken chain. */
static void worker_mem_add(struct worker_agg *w, double t, double v)
{
	if (w->mem_samples == 0)
		w->mem_first = v;
	else if (w->mem_t_last >= 0 && t > w->mem_t_last) {
		w->mem_integral += 0.5 * (w->mem_v_last + v) * (t - w->mem_t_last);
		w->mem_covered += t - w->mem_t_last;
	}
	w->mem_samples++;
	w->mem_t_last = t;
	w->mem_v_last = v;
	if (v > w->mem_peak)
		w->mem_peak = v;
}

static uint16_t worker_hist_max16(uint16_t a, uint16_t b)
{
	return a == WORKER_NA ? b : (b == WORKER_NA ? a : (a > b ? a : b));
}

/* fmaxf takes the other value over a NaN (not measured) */
static void worker_hist_merge(struct worker_point *into, const struct worker_point *p)
{
	into->mem = fmaxf(into->mem, p->mem);
	into->cpu = worker_hist_max16(into->cpu, p->cpu);
	into->exec = worker_hist_max16(into->exec, p->exec);
	into->proc = worker_hist_max16(into->proc, p->proc);
	into->occ = fmaxf(into->occ, p->occ);
}

/* Full: neighbours merge in pairs, halving the points in use. */
static void worker_hist_halve(struct worker_hist *h)
{
	for (uint32_t i = 0; i < h->len / 2; i++) {
		struct worker_point p = h->pts[2 * i];
		worker_hist_merge(&p, &h->pts[2 * i + 1]);
		h->pts[i] = p;
	}
	h->len /= 2;
	h->per_point *= 2;
	h->in_last = h->per_point; /* the newest is full: the next sample opens one */
}

static float worker_hist_real(optnum v)
{
	return v.valid && isfinite(v.value) ? (float)v.value : NAN;
}

static uint16_t worker_hist_opt16(optnum v)
{
	bool ok = v.valid && isfinite(v.value) && v.value >= 0;
	return ok ? (uint16_t)fmin(v.value, WORKER_NA - 1) : WORKER_NA;
}

void run_worker_hist_add(struct worker_hist *h, double t, const struct worker_sample *s)
{
	struct worker_point p = { .mem = worker_hist_real(s->memory_bytes),
				  .cpu = worker_hist_opt16(s->cpu_percent),
				  .exec = worker_hist_opt16(s->executing),
				  .proc = worker_hist_opt16(s->processing),
				  .occ = worker_hist_real(s->occupancy) };
	if (h->len == 0) {
		h->t0 = t;
		h->per_point = 1;
	}
	p.t = (float)(t - h->t0);
	if (h->len && h->in_last < h->per_point) {
		worker_hist_merge(&h->pts[h->len - 1], &p);
		h->in_last++;
		return;
	}
	if (h->len == RUN_WORKER_HISTORY)
		worker_hist_halve(h);
	h->pts[h->len++] = p;
	h->in_last = 1;
}

static void worker_copy(struct worker_agg *w, const struct worker_sample *s)
{
	if (s->name)
		strutil_copy(w->name, sizeof(w->name), s->name);
	if (s->host)
		strutil_copy(w->host, sizeof(w->host), s->host);
	if (s->status)
		strutil_copy(w->status, sizeof(w->status), s->status);
	w->nthreads = s->nthreads;
	w->memory_bytes = s->memory_bytes;
	w->memory_limit = s->memory_limit;
	w->cpu_percent = s->cpu_percent;
	w->executing = s->executing;
	w->processing = s->processing;
	w->managed_bytes = s->managed_bytes;
	w->spilled_bytes = s->spilled_bytes;
	w->pid = s->pid;
}

/* Cluster-wide sums of one sample, for the timelines. */
struct sample_sums {
	double threads, mem, limit, worst_pct, cpu, executing;
	size_t n_threads, n_mem, n_limit, n_pct, n_cpu, n_exec;
};

static void sum_in(double *sum, size_t *n, optnum x)
{
	if (x.valid) {
		*sum += x.value;
		(*n)++;
	}
}

static void sums_add(struct sample_sums *a, const struct worker_sample *s)
{
	sum_in(&a->threads, &a->n_threads, s->nthreads);
	sum_in(&a->mem, &a->n_mem, s->memory_bytes);
	if (s->memory_limit.value > 0)
		sum_in(&a->limit, &a->n_limit, s->memory_limit);
	optnum pct = run_memory_percent(s->memory_bytes, s->memory_limit);
	if (pct.valid) {
		a->worst_pct = a->n_pct ? fmax(a->worst_pct, pct.value) : pct.value;
		a->n_pct++;
	}
	sum_in(&a->cpu, &a->n_cpu, s->cpu_percent);
	/* the scheduler's copy of a worker's running keys (its last heartbeat)
	 * can hold a task that seceded or was cancelled beside the one that took
	 * its thread: a worker runs at most nthreads at once */
	if (s->executing.valid) {
		a->executing += s->nthreads.valid ? fmin(s->executing.value, s->nthreads.value)
						  : s->executing.value;
		a->n_exec++;
	}
}

/* The worker's entry, made (and its joining told) on its first sample. */
static struct worker_agg *worker_get(struct run *r, double t, const struct worker_sample *s,
				     bool *added)
{
	char buf[RUN_KEY_MAX + 1];
	struct worker_agg *w =
		strmap_upsert(&r->workers, run_key(r, t, s->id, RUN_KEY_MAX, buf), added);
	if (!w) {
		run_overflow(r, t, &r->overflow_workers, "workers", RUN_MAX_WORKERS);
		return NULL;
	}
	if (*added) {
		w->t_first_seen = t;
		w->mem_t_last = -1;
		strutil_copy(w->name, sizeof(w->name), s->id);
		run_log(r, t, LOG_INFO, "worker joined: %s", s->name ? s->name : s->id);
	}
	return w;
}

/* The order-free totals of worker samples: peaks and means. */
static void worker_stats_add(struct run *r, const struct worker_sample *s)
{
	if (s->memory_bytes.valid)
		stats_add(&r->worker_mem_bytes, s->memory_bytes.value);
	optnum pct = run_memory_percent(s->memory_bytes, s->memory_limit);
	if (pct.valid)
		stats_add(&r->worker_mem_pct, pct.value);
	if (s->cpu_percent.valid)
		stats_add(&r->worker_cpu_pct, s->cpu_percent.value);
}

static void worker_sample_apply(struct run *r, double t, const struct worker_sample *s)
{
	bool added = false;
	struct worker_agg *w = worker_get(r, t, s, &added);
	if (!w)
		return;
	if (!added && !w->was_present && !w->present)
		run_log(r, t, LOG_INFO, "worker back: %s", s->name ? s->name : s->id);
	worker_copy(w, s);
	w->present = true;
	w->t_last_seen = t;
	run_worker_hist_add(&w->hist, t, s);
	if (r->ended) /* after the run: drawn, not counted (as roastcoffea's window) */
		return;
	if (s->memory_bytes.valid)
		worker_mem_add(w, t, s->memory_bytes.value);
	worker_stats_add(r, s);
}

/* A late sample's worker (run_apply): a new one enters the table with these
 * values; a known one keeps those of its latest sample and its series. */
static void worker_sample_late(struct run *r, double t, const struct worker_sample *s,
			       bool counted)
{
	bool added = false;
	struct worker_agg *w = worker_get(r, t, s, &added);
	if (!w)
		return;
	if (added) {
		worker_copy(w, s);
		w->t_last_seen = t;
	}
	w->t_first_seen = fmin(w->t_first_seen, t);
	if (counted)
		worker_stats_add(r, s);
}

/* The per-worker metrics' share of one worker: its last nthreads and its
 * time-weighted memory average (or its one sample). */
static void departed_add(struct departed_agg *d, const struct worker_agg *w)
{
	if (w->nthreads.valid) {
		d->nthreads_sum += w->nthreads.value;
		d->n_nthreads++;
	}
	if (w->mem_samples) {
		d->mem_avg_sum += w->mem_covered > 0 ? w->mem_integral / w->mem_covered : w->mem_v_last;
		d->n_mem++;
	}
}

static bool worker_keep(void *val, void *ctx)
{
	struct worker_agg *w = val;
	if (w->present)
		return true;
	departed_add(ctx, w);
	return false;
}

/* Room for a sample's workers: those absent from the latest sample leave
 * the live table, their history folded into r->departed. A departed worker
 * that comes back later starts a new entry (and counts as a second worker
 * in the per-worker means). */
static void workers_evict(struct run *r, double t, size_t incoming)
{
	if (r->workers.count + incoming <= RUN_MAX_WORKERS)
		return;
	size_t gone = strmap_retain(&r->workers, worker_keep, &r->departed);
	if (!gone)
		return;
	r->workers_evicted += gone;
	run_log(r, t, LOG_INFO, "%zu departed workers left the live table (%zu kept): their "
		"totals stay", gone, r->workers.count);
}

optnum run_memory_percent(optnum bytes, optnum limit)
{
	bool ok = bytes.valid && limit.valid && limit.value > 0;
	return ok ? optnum_of(100.0 * bytes.value / limit.value) : optnum_none();
}

/* The departed workers' shares with every live worker's added. */
static struct departed_agg workers_ever(const struct run *r)
{
	struct departed_agg a = r->departed;
	for (size_t i = 0; i < r->workers.count; i++)
		departed_add(&a, strmap_val_at(&r->workers, i));
	return a;
}

optnum run_cores_per_worker(const struct run *r)
{
	struct departed_agg a = workers_ever(r);
	return a.n_nthreads ? optnum_of(a.nthreads_sum / (double)a.n_nthreads) : optnum_none();
}

optnum run_avg_memory_per_worker(const struct run *r)
{
	struct departed_agg a = workers_ever(r);
	return a.n_mem ? optnum_of(a.mem_avg_sum / (double)a.n_mem) : optnum_none();
}

static void workers_mark_absent(struct run *r)
{
	for (size_t i = 0; i < r->workers.count; i++) {
		struct worker_agg *w = strmap_val_at(&r->workers, i);
		w->was_present = w->present;
		w->present = false;
	}
}

struct run_at {
	struct run *r;
	double t;
};

static void chunk_lost_told(void *ctx, const struct inflight_chunk *c)
{
	const struct run_at *at = ctx;
	char range[64] = "";
	if (c->entry_start.valid && c->entry_stop.valid)
		snprintf(range, sizeof(range), " %.0f-%.0f", c->entry_start.value, c->entry_stop.value);
	run_log(at->r, at->t, LOG_ERROR, "chunk lost with worker %s: %s%s, running %.1f s",
		c->worker, c->file[0] ? c->file : "(no file)", range, at->t - c->t_seen);
}

/* A worker that left takes its chunks in flight with it: they are lost. */
static void workers_log_departures(struct run *r, double t)
{
	struct run_at at = { r, t };
	for (size_t i = 0; i < r->workers.count; i++) {
		const struct worker_agg *w = strmap_val_at(&r->workers, i);
		if (!w->was_present || w->present)
			continue;
		run_log(r, t, LOG_WARN, "worker left: %s", w->name);
		inflight_lose_worker(&r->inflight, t, w->name, strmap_key_at(&r->workers, i), w->pid,
				     chunk_lost_told, &at);
	}
}

/* A new scheduler counts from 0: what the old one counted is carried, and
 * the new counters are not mistaken for a baseline (the decreasing-value
 * check alone misses a counter that is already past its old value). */
static void fine_carry(struct strmap *m)
{
	for (size_t i = 0; i < m->count; i++) {
		struct fine_agg *f = strmap_val_at(m, i);
		f->carried += f->last - f->base;
		f->base = f->last = 0.0;
	}
}

/* The counters' base: their value when the run began (or, first seen
 * after that, at the first sample); a new scheduler counts from 0. */
static void progress_base(struct run *r, const struct ev_sample *s)
{
	double done = s->tasks_done_cumulative.value, total = s->tasks_total_cumulative.value;
	if (r->tasks_base_set && done >= r->tasks_base_done && total >= r->tasks_base_total)
		return;
	bool restarted = r->tasks_base_set;
	r->tasks_base_done = restarted ? 0 : done;
	r->tasks_base_total = restarted ? 0 : total;
	r->tasks_base_set = true;
}

/* Task progress: the span's once a run has started (the collector names
 * the span as it starts the run; without a run-start the route may still
 * serve an earlier run's span), else the cumulative counters' growth. */
static void sample_progress(struct run *r, const struct ev_sample *s)
{
	bool counters = s->tasks_done_cumulative.valid;
	if (counters) {
		r->tasks_cum_done = s->tasks_done_cumulative;
		r->tasks_cum_total = s->tasks_total_cumulative;
		progress_base(r, s);
	}
	if (r->started && s->tasks_done.valid) {
		r->tasks_done = s->tasks_done;
		r->tasks_total = s->tasks_total;
	} else if (counters) {
		r->tasks_done = optnum_of(s->tasks_done_cumulative.value - r->tasks_base_done);
		r->tasks_total = optnum_of(s->tasks_total_cumulative.value - r->tasks_base_total);
	}
}

/* A run begins: its progress counts from the counters' latest value. */
void run_progress_restart(struct run *r)
{
	r->tasks_done = r->tasks_total = optnum_none();
	timeline_gap(&r->tl_tasks_done);
	r->tasks_base_set = r->tasks_cum_done.valid;
	r->tasks_base_done = r->tasks_cum_done.valid ? r->tasks_cum_done.value : 0;
	r->tasks_base_total = r->tasks_cum_total.valid ? r->tasks_cum_total.value : 0;
}

static void scheduler_identity(struct run *r, double t, const struct ev_sample *s)
{
	if (s->dask_version)
		strutil_copy(r->dask_version, sizeof(r->dask_version), s->dask_version);
	if (!s->scheduler_id)
		return;
	if (r->scheduler_id[0] && strcmp(r->scheduler_id, s->scheduler_id) != 0) {
		r->scheduler_restarts++;
		fine_carry(&r->fine_cluster);
		fine_carry(&r->fine_span);
		run_log(r, t, LOG_WARN, "scheduler restarted (new id %s)", s->scheduler_id);
	}
	strutil_copy(r->scheduler_id, sizeof(r->scheduler_id), s->scheduler_id);
}

/* A late sample (run_apply) adds to a series' order-free totals only. */
static void sample_put(struct timeline *tl, double t, double v, bool late)
{
	if (late)
		timeline_add_unordered(tl, v);
	else
		timeline_push(tl, t, v);
}

/* The sample's total threads: the source's, else its workers' sum. */
static optnum sample_threads(const struct ev_sample *s, const struct sample_sums *a)
{
	if (s->total_threads.valid)
		return s->total_threads;
	if (s->n_workers && a->n_threads == s->n_workers)
		return optnum_of(a->threads);
	return s->worker_count == 0 ? optnum_of(0) : optnum_none();
}

/* Tasks executing: the workers' own counts; else the scheduler's count of
 * tasks "processing", which also holds those queued on a worker behind a
 * busy thread (worker-saturation: two one-thread workers show 4), so at
 * most the threads there are. */
static optnum sample_executing(const struct ev_sample *s, const struct sample_sums *a,
			       optnum threads)
{
	if (a->n_exec)
		return optnum_of(a->executing);
	if (!s->tasks_processing.valid)
		return optnum_none();
	double p = s->tasks_processing.value;
	return optnum_of(threads.valid ? fmin(p, threads.value) : p);
}

static void sample_timelines(struct run *r, double t, const struct ev_sample *s,
			     const struct sample_sums *a, bool late)
{
	sample_put(&r->tl_workers, t, s->worker_count, late);
	optnum threads = sample_threads(s, a);
	if (threads.valid)
		sample_put(&r->tl_threads, t, threads.value, late);
	if (a->n_mem)
		sample_put(&r->tl_mem_used, t, a->mem, late);
	if (a->n_limit)
		sample_put(&r->tl_mem_limit, t, a->limit, late);
	if (a->n_pct)
		sample_put(&r->tl_mem_worst_pct, t, a->worst_pct, late);
	if (a->n_cpu)
		sample_put(&r->tl_cpu, t, a->cpu / (double)a->n_cpu, late);
	optnum ex = sample_executing(s, a, threads);
	if (ex.valid)
		sample_put(&r->tl_executing, t, ex.value, late);
}

void run_apply_sample(struct run *r, double t, const struct ev_sample *s)
{
	scheduler_identity(r, t, s);
	sample_progress(r, s);
	if (r->tasks_done.valid)
		timeline_push(&r->tl_tasks_done, t, r->tasks_done.value);
	r->n_samples++;
	r->workers_now = s->worker_count;
	struct sample_sums sums = { 0 };
	bool detailed = s->n_workers > 0 || s->worker_count == 0;
	if (detailed) {
		workers_evict(r, t, s->n_workers);
		workers_mark_absent(r);
		for (size_t i = 0; i < s->n_workers; i++) {
			worker_sample_apply(r, t, &s->workers[i]);
			sums_add(&sums, &s->workers[i]);
		}
		workers_log_departures(r, t);
	}
	sample_timelines(r, t, s, &sums, false);
}

/* Inside the run by its own time: what a late event is judged by, since
 * the markers may have come before or after it. */
static bool run_in_window(const struct run *r, double t)
{
	return !(r->started && t < r->t_run_start) && !(r->ended && t > r->t_run_end);
}

/* A sample timed before the latest event (docs/recording.md, "Time going
 * back"): new workers enter the table and, when it is inside the run, the
 * order-free totals (peaks, means) take it; no series gets a point or a
 * trapezoid, and what is "now" stays the latest sample's. */
void run_apply_sample_late(struct run *r, double t, const struct ev_sample *s)
{
	r->n_samples++;
	bool counted = run_in_window(r, t);
	struct sample_sums sums = { 0 };
	workers_evict(r, t, s->n_workers);
	for (size_t i = 0; i < s->n_workers; i++) {
		worker_sample_late(r, t, &s->workers[i], counted);
		sums_add(&sums, &s->workers[i]);
	}
	if (counted)
		sample_timelines(r, t, s, &sums, true);
}
