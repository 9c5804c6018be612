/* Rules on the chunks' time: the tail, and chunks too small for the time a
 * task spends outside process() (docs/diagnosis.md). */
#include "diagnosispriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tail: idle threads after the last moment all were busy cost at least
 * DIAG_TAIL_SHARE of the elapsed time, over a tail at least
 * DIAG_TAIL_MEDIANS median chunks long. */
#define DIAG_TAIL_SHARE 0.15
#define DIAG_TAIL_HELD 0.5
#define DIAG_TAIL_MEDIANS 2.0

struct edge {
	double t;
	int d; /* +1 a chunk begins, -1 one ends */
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return x->d - y->d; /* an end before a start at the same time */
}

/* The chunks' begin and end times, sorted; their count (0: none usable). */
static size_t tail_edges(const struct rawchunk *const *c, size_t n, struct edge *e)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		double t1 = c[i]->v[RC_T_END], t0 = c[i]->v[RC_T_START];
		if (isnan(t0))
			t0 = t1 - c[i]->v[RC_DURATION];
		if (!isfinite(t0) || !isfinite(t1) || t1 < t0)
			continue;
		e[k++] = (struct edge){ t0, +1 };
		e[k++] = (struct edge){ t1, -1 };
	}
	qsort(e, k, sizeof(*e), cmp_edge);
	return k;
}

struct tail {
	double first, from, to; /* the chunks' first start; the tail's span */
	double idle, idle_all; /* idle thread-seconds in the tail, and over the whole span */
	double held; /* seconds of the tail with a chunk in flight */
	bool full; /* all threads were busy at some moment */
};

/* One sweep: the last moment in-flight chunks fell below the threads, and
 * the idle thread-seconds from then to the last chunk's end. */
static struct tail tail_sweep(const struct edge *e, size_t k, double threads)
{
	struct tail t = { .first = k ? e[0].t : NAN, .from = NAN };
	int conc = 0;
	for (size_t i = 0; i < k; i++) {
		double gap = i > 0 && conc < threads ? (threads - conc) * (e[i].t - e[i - 1].t) : 0;
		t.idle_all += gap;
		if (!isnan(t.from)) {
			t.idle += gap;
			t.held += conc > 0 ? e[i].t - e[i - 1].t : 0;
		}
		bool was_full = conc >= threads;
		conc += e[i].d;
		if (conc >= threads)
			t.full = true, t.from = NAN, t.idle = t.held = 0;
		else if (was_full)
			t.from = e[i].t;
		t.to = e[i].t;
	}
	return t;
}

/* A tail is a moment all threads were busy, then fewer, with a chunk in
 * flight at least DIAG_TAIL_HELD of the time since: the threads waited on
 * chunks. Without that (chunks far shorter than the time between them) the
 * gaps are the task's time outside process(), small_chunks' business. */
static bool tail_real(const struct tail *t)
{
	return t->full && !isnan(t->from) && t->held >= DIAG_TAIL_HELD * (t->to - t->from);
}

/* The longest chunk in flight during the tail [from, to]: the one that held
 * it (a straggler can end before the chunk queued behind it, which ends
 * last in a moment). */
static const struct rawchunk *tail_holder(const struct rawchunk *const *c, size_t n,
					  const struct tail *t)
{
	const struct rawchunk *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (c[i]->v[RC_T_END] > t->from && c[i]->v[RC_T_START] < t->to &&
		    (!best || c[i]->v[RC_DURATION] > best->v[RC_DURATION]))
			best = c[i];
	return best;
}

/* The sweep over every chunk record of r (none when they are a sample). */
static bool chunk_sweep(struct diag_eval *ev, double threads, struct tail *t,
			const struct rawchunk **last)
{
	size_t n = 0;
	const struct rawchunk *const *c = rawchunks_sampled(&ev->r->raw) ? NULL : diag_chunks(ev, &n);
	struct edge *e = c ? malloc(2 * n * sizeof(*e)) : NULL;
	size_t k = e ? tail_edges(c, n, e) : 0;
	*t = tail_sweep(e, k, threads);
	if (last)
		*last = k && tail_real(t) ? tail_holder(c, n, t) : NULL;
	free(e);
	return k > 0;
}

static void tail_write(struct finding *f, const struct tail *t, double threads,
		       const struct rawchunk *last, double share)
{
	char a[FMT_LEN], b[FMT_LEN], d[FMT_LEN];
	snprintf(f->title, sizeof(f->title), "the tail: %.0f%% of the run waited on a few chunks",
		 100 * share);
	snprintf(f->evidence, sizeof(f->evidence),
		 "the last %s ran fewer chunks than the %.0f threads (%s of thread time idle, "
		 "%.0f%% of the elapsed time); its longest chunk: %s s on %s, file %s",
		 format_duration(a, optnum_of(t->to - t->from)), threads,
		 format_duration(b, optnum_of(t->idle)), 100 * share,
		 format_num(d, optnum_of(last->v[RC_DURATION]), "%.3g"),
		 last->worker[0] ? last->worker : "n/a", last->file[0] ? last->file : "n/a");
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "smaller chunks for the long files, or the slow file or worker below");
}

/* Judged on a run that has ended, from every chunk record (not a sample). */
static void tail_final(struct diag_eval *e, const struct metrics *m, double threads)
{
	struct tail t;
	const struct rawchunk *last;
	double elapsed = m->elapsed_time_seconds.valid ? m->elapsed_time_seconds.value : NAN;
	if (!chunk_sweep(e, threads, &t, &last) || !last)
		return;
	double share = t.idle / threads / elapsed;
	if (share >= DIAG_TAIL_SHARE && t.to - t.from >= DIAG_TAIL_MEDIANS * m->chunk_duration_p50.value)
		tail_write(diag_new(e->out, FIND_TAIL, t.from, share), &t, threads, last, share);
}

/* While the run goes: chunks past the straggler limit run while threads
 * idle (metrics' in-flight figures). */
static void tail_live(const struct metrics *m, double threads, struct findings *out)
{
	optnum s = m->inflight_stragglers, run = m->inflight_running;
	if (!s.valid || s.value < 1 || !run.valid || run.value >= threads ||
	    !m->inflight_oldest_age.valid || !m->straggler_after.valid)
		return;
	double since = m->inflight_at - m->inflight_oldest_age.value + m->straggler_after.value;
	struct finding *f = diag_new(out, FIND_TAIL, since, 0);
	char a[FMT_LEN], b[FMT_LEN];
	snprintf(f->title, sizeof(f->title), "the tail: %.0f straggling chunk%s, %.0f of %.0f threads idle",
		 s.value, diag_s(s.value), threads - run.value, threads);
	snprintf(f->evidence, sizeof(f->evidence),
		 "%.0f chunk%s in flight, %.0f older than the straggler limit %s; the oldest %s",
		 run.value, diag_s(run.value), s.value, format_duration(a, m->straggler_after),
		 format_duration(b, m->inflight_oldest_age));
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "smaller chunks shorten the tail: fewer events wait on the last ones");
}

void diag_rule_tail(struct diag_eval *e)
{
	const struct run *r = e->r;
	const struct metrics *m = e->m;
	optnum th = m->total_cores; /* total_threads_avg is the same figure */
	if (!th.valid || th.value < 1)
		return;
	double threads = round(th.value);
	if (!r->ended)
		tail_live(m, threads, e->out);
	else if (r->raw.n >= DIAG_MIN_CHUNKS && !rawchunks_sampled(&r->raw) &&
		 m->chunk_duration_p50.valid)
		tail_final(e, m, threads);
}

/* Chunks too small: the threads outside process() between chunks (before
 * the tail) at least DIAG_OUTSIDE_SHARE of their time while they had work
 * (tasks assigned to at least DIAG_BUSY_TASKS of them on average: else they
 * idled for want of work); the chunk size suggested brings it under
 * DIAG_OUTSIDE_TARGET. */
#define DIAG_OUTSIDE_SHARE 0.5
#define DIAG_OUTSIDE_TARGET 0.2
#define DIAG_BUSY_TASKS 0.75

static void small_write(struct finding *f, const struct metrics *m, double body, double threads,
			double per_chunk, double share, double size)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], d[FMT_LEN];
	snprintf(f->title, sizeof(f->title), "chunks too small: %.0f%% of thread time outside process()",
		 100 * share);
	snprintf(f->evidence, sizeof(f->evidence),
		 "over %s of %.0f threads before the tail, %.0f%% between chunks: %s outside per "
		 "chunk against %s inside; %s events per chunk",
		 format_duration(a, optnum_of(body)), threads, 100 * share,
		 format_duration(b, optnum_of(per_chunk)), format_duration(c, m->chunk_duration_mean),
		 format_count(d, m->chunk_events_mean));
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "chunksize of at least %s events would bring it under %.0f%%",
		 format_count(a, optnum_of(size)), 100 * DIAG_OUTSIDE_TARGET);
}

/* The threads' time outside process() and the span it is judged over: from
 * the sweep, before the tail; past RAWCHUNKS_MAX chunks (the records a
 * sample), the window's share the core efficiency leaves. since: from when. */
static bool small_outside(struct diag_eval *e, double threads, double *idle, double *body,
			  double *since)
{
	const struct metrics *m = e->m;
	struct tail t;
	if (rawchunks_sampled(&e->r->raw)) {
		optnum eff = m->core_efficiency, w = m->rate_window_seconds;
		if (!eff.valid || !w.valid)
			return false;
		*body = w.value;
		*idle = (1 - eff.value) * threads * w.value;
		*since = m->t_window_start;
		return true;
	}
	if (!chunk_sweep(e, threads, &t, NULL))
		return false;
	bool tail = tail_real(&t);
	*body = (tail ? t.from : t.to) - t.first;
	*idle = t.idle_all - (tail ? t.idle : 0);
	*since = t.first;
	return true;
}

/* The threads that had a task, on average over [from, to]: each worker's
 * tasks assigned (processing: executing or queued on it), at most its
 * threads, averaged over its history's points there, summed over workers.
 * Invalid when no worker's history has a count of tasks assigned. */
static optnum assigned_avg(const struct run *r, double from, double to)
{
	double sum = 0;
	bool any = false;
	for (size_t i = 0; i < r->workers.count; i++) {
		const struct worker_agg *w = strmap_val_at(&r->workers, i);
		double got = 0, k = 0;
		for (uint32_t j = 0; w->nthreads.valid && j < w->hist.len; j++) {
			const struct worker_point *p = &w->hist.pts[j];
			double t = w->hist.t0 + p->t;
			if (p->proc == WORKER_NA || t < from || t > to)
				continue;
			got += fmin(p->proc, w->nthreads.value), k++;
		}
		if (k > 0)
			sum += got / k, any = true;
	}
	return any ? optnum_of(sum) : optnum_none();
}

/* Whether the threads had work over the body: by the tasks assigned to
 * them, else (no such count) the scheduler's tasks executing. */
static bool small_busy(const struct run *r, double threads, double from, double to)
{
	optnum busy = assigned_avg(r, from, to);
	if (!busy.valid)
		busy = timeline_time_avg(&r->tl_executing);
	return busy.valid && busy.value >= DIAG_BUSY_TASKS * threads;
}

void diag_rule_small_chunks(struct diag_eval *e)
{
	const struct metrics *m = e->m;
	optnum th = m->total_cores;
	optnum n = m->num_successful_chunks, ev = m->total_events_from_chunks;
	double idle, body, since, threads = th.valid ? round(th.value) : 0;
	if (threads < 1 || !n.valid || n.value < DIAG_MIN_CHUNKS || !ev.valid || ev.value <= 0 ||
	    !m->chunk_duration_mean.valid || !small_outside(e, threads, &idle, &body, &since) ||
	    !small_busy(e->r, threads, since, since + body))
		return;
	double share = idle / (threads * body);
	if (!(share >= DIAG_OUTSIDE_SHARE))
		return;
	/* per chunk outside, per event inside: o / (o + p x size) <= target */
	double per_chunk = idle / n.value, per_event = m->chunk_duration_mean.value * n.value / ev.value;
	double s = DIAG_OUTSIDE_TARGET, size = ceil(per_chunk * (1 - s) / (s * per_event));
	struct finding *f = diag_new(e->out, FIND_SMALL_CHUNKS, since, share);
	small_write(f, m, body, threads, per_chunk, share, size);
}
