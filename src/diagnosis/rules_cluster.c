/* Rules on how the cluster's threads spend the run: waiting inside
 * process() for a CPU (starved) or for anything else (I/O bound), or
 * without work at all (an idle cluster) (docs/diagnosis.md). */
#include "diagnosispriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* I/O bound: process() off the CPU, and not waiting for one, at least
 * DIAG_IO_NONCPU_SHARE of its time not spent waiting for one, and each worker process (its threads
 * together, so that threads waiting on the GIL do not count as waiting on
 * I/O) using at most DIAG_IO_PROCESS_CPU of a core inside process(). */
#define DIAG_IO_NONCPU_SHARE 0.6
#define DIAG_IO_PROCESS_CPU 0.5
/* Starved: process() runnable but not running (waiting for a CPU) at
 * least DIAG_STARVED_SHARE of its time, over the chunks that measured it. */
#define DIAG_STARVED_SHARE 0.3
/* Both judge process(): only when it held the threads at least
 * DIAG_INSIDE_SHARE of the run (threads x elapsed); below that the run's
 * time goes outside it (small_chunks, idle_cluster). */
#define DIAG_INSIDE_SHARE 0.25

struct cpu_sums {
	double cpu, seconds, events, since;
	size_t n;
	/* the chunks that measured their wait for a CPU: waited, over seconds */
	double wait, wait_seconds;
	size_t n_wait;
};

static void cpu_add(struct cpu_sums *s, const struct rawchunk *c)
{
	double cpu = c->v[RC_CPU_TIME], d = c->v[RC_DURATION], ev = c->v[RC_NUM_EVENTS];
	double wait = c->v[RC_CPU_WAIT];
	if (!isfinite(cpu) || !isfinite(d) || d <= 0 || cpu < 0)
		return;
	s->cpu += fmin(cpu, d);
	s->seconds += d;
	s->events += isfinite(ev) ? ev : 0;
	if (s->n++ == 0)
		s->since = c->v[RC_T_END];
	if (isfinite(wait) && wait >= 0) {
		s->wait += fmin(wait, d - fmin(cpu, d));
		s->wait_seconds += d;
		s->n_wait++;
	}
}

/* The chunk records with both a CPU time and a duration. */
static struct cpu_sums cpu_collect(struct diag_eval *e)
{
	struct cpu_sums s = { .since = NAN };
	size_t nc;
	const struct rawchunk *const *c = diag_chunks(e, &nc);
	for (size_t i = 0; i < nc; i++)
		cpu_add(&s, c[i]);
	return s;
}

/* The share of process()'s time spent waiting for a CPU, from the chunks
 * that measured it when at least half of them did; NAN: not measured. */
static double cpu_wait_share(const struct cpu_sums *s)
{
	if (s->n_wait == 0 || 2 * s->n_wait < s->n || s->wait_seconds <= 0)
		return NAN;
	return s->wait / s->wait_seconds;
}

static void io_write(struct finding *f, const struct metrics *m, const struct cpu_sums *s,
		     double judged, double per_process, double k)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], d[FMT_LEN], w[80];
	double wait = cpu_wait_share(s), noncpu = f->cost;
	if (isnan(wait))
		snprintf(w, sizeof(w), "its wait for a CPU not measured");
	else
		snprintf(w, sizeof(w), "%.0f%% waiting for a CPU; %.0f%% of the rest off it", 100 * wait,
			 100 * judged);
	snprintf(f->title, sizeof(f->title), "I/O bound: process() waits %.0f%% of its time off the CPU",
		 100 * judged);
	int len = snprintf(f->evidence, sizeof(f->evidence),
			   "over %zu chunks, process() ran %s on CPU of %s (%.0f%% off the CPU, %s); "
			   "a worker process of %.0f thread%s used %.2f cores in it; %s per core "
			   "against %s per CPU second",
			   s->n, format_duration(a, optnum_of(s->cpu)),
			   format_duration(b, optnum_of(s->seconds)), 100 * noncpu, w, k, diag_s(k),
			   per_process,
			   format_si(c, m->event_rate_core_khz.valid ? optnum_of(1e3 * m->event_rate_core_khz.value)
								   : optnum_none(), "ev/s"),
			   format_si(d, s->cpu > 0 ? optnum_of(s->events / s->cpu) : optnum_none(), "ev/s"));
	if (m->avg_bytes_read_percent.valid && len > 0 && (size_t)len < sizeof(f->evidence))
		snprintf(f->evidence + len, sizeof(f->evidence) - (size_t)len,
			 "; the files' bytes read: %.1f%% on average", m->avg_bytes_read_percent.value);
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "read closer to the data (a nearer replica, a cache), fewer branches; more threads "
		 "per worker hide the wait");
}

static void io_bound(const struct cpu_sums *s, const struct metrics *m, struct findings *out)
{
	optnum k = m->cores_per_worker;
	if (!k.valid || k.value < 1 || s->n < DIAG_MIN_CHUNKS || s->seconds <= 0)
		return;
	double on = s->cpu / s->seconds, wait = cpu_wait_share(s), per_process = on * round(k.value);
	double w = isnan(wait) ? 0 : wait, noncpu = 1 - on - w;
	double judged = w < 1 ? noncpu / (1 - w) : 0; /* of the time not queued for a CPU */
	if (!(judged >= DIAG_IO_NONCPU_SHARE) || !(per_process <= DIAG_IO_PROCESS_CPU))
		return;
	struct finding *f = diag_new(out, FIND_IO_BOUND, s->since, noncpu);
	io_write(f, m, s, judged, per_process, round(k.value));
}

static void cpu_starved(const struct cpu_sums *s, struct findings *out)
{
	double wait = cpu_wait_share(s);
	if (s->n_wait < DIAG_MIN_CHUNKS || !(wait >= DIAG_STARVED_SHARE))
		return;
	struct finding *f = diag_new(out, FIND_CPU_STARVED, s->since, wait);
	char a[FMT_LEN], b[FMT_LEN];
	double on = s->cpu / s->seconds;
	snprintf(f->title, sizeof(f->title),
		 "CPU starved: process() waits %.0f%% of its time for a CPU", 100 * wait);
	snprintf(f->evidence, sizeof(f->evidence),
		 "over %zu chunks, process()'s threads were runnable but not running for %s of %s "
		 "(%.0f%%), on the CPU %.0f%%, off it for other reasons (I/O, locks) %.0f%%",
		 s->n_wait, format_duration(a, optnum_of(s->wait)),
		 format_duration(b, optnum_of(s->wait_seconds)), 100 * wait, 100 * on,
		 100 * fmax(0, 1 - on - wait));
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "more busy threads than cores on the workers' nodes: lower nthreads (or workers "
		 "per node), ask for more cores, or move what else runs there");
}

/* Whether seconds of process() held the threads long enough to judge;
 * true when the threads or the elapsed time are not known. */
static bool cpu_inside_enough(double seconds, const struct metrics *m)
{
	optnum th = m->total_cores;
	optnum el = m->elapsed_time_seconds;
	if (!th.valid || !el.valid || th.value <= 0 || el.value <= 0)
		return true;
	return seconds >= DIAG_INSIDE_SHARE * th.value * el.value;
}

void diag_rule_io_bound(struct diag_eval *e)
{
	struct cpu_sums s = cpu_collect(e);
	if (cpu_inside_enough(s.seconds, e->m))
		io_bound(&s, e->m, e->out);
}

void diag_rule_cpu_starved(struct diag_eval *e)
{
	struct cpu_sums s = cpu_collect(e);
	if (cpu_inside_enough(s.wait_seconds, e->m))
		cpu_starved(&s, e->out);
}

/* An idle cluster: the run ended with at most DIAG_IDLE_CHUNK_SHARE as many
 * chunks as threads; or, while it goes, the latest sample shows threads
 * without a task on some workers while at least DIAG_IDLE_WAITING tasks
 * wait queued on others. */
#define DIAG_IDLE_CHUNK_SHARE 0.5
#define DIAG_IDLE_WAITING 2.0

static void idle_few_chunks(const struct run *r, const struct metrics *m, double threads,
			    struct findings *out)
{
	double n = (double)r->n_chunks;
	if (!r->ended || n < 1 || n > DIAG_IDLE_CHUNK_SHARE * threads)
		return;
	double idle = 1 - n / threads;
	struct finding *f = diag_new(out, FIND_IDLE_CLUSTER, NAN, idle);
	char a[FMT_LEN], b[FMT_LEN];
	snprintf(f->title, sizeof(f->title), "idle cluster: %.0f chunk%s for %.0f threads", n,
		 diag_s(n), threads);
	snprintf(f->evidence, sizeof(f->evidence),
		 "the run had %.0f chunk%s (%s events) and the cluster %.0f threads: at least %.0f "
		 "thread%s (%.0f%%) never had a chunk",
		 n, diag_s(n), format_count(a, m->total_events_from_chunks), threads, threads - n,
		 diag_s(threads - n), 100 * idle);
	optnum per = m->total_events_from_chunks.valid
			     ? optnum_of(floor(m->total_events_from_chunks.value / threads))
			     : optnum_none();
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "a chunksize of at most %s events gives every thread a chunk; or fewer workers",
		 format_count(b, per));
}

struct idle_now {
	double idle, waiting;
	const char *busiest; /* the worker with most tasks waiting */
	double most;
};

static struct idle_now idle_collect(const struct run *r)
{
	struct idle_now s = { 0 };
	for (size_t i = 0; i < r->workers.count; i++) {
		const struct worker_agg *w = strmap_val_at(&r->workers, i);
		if (!w->present || !w->nthreads.valid || !w->executing.valid || !w->processing.valid)
			continue;
		double wait = w->processing.value - w->executing.value;
		if (wait > 0)
			s.waiting += wait;
		else if (w->executing.value < w->nthreads.value)
			s.idle += w->nthreads.value - w->executing.value;
		if (wait > s.most)
			s.most = wait, s.busiest = w->name[0] ? w->name : strmap_key_at(&r->workers, i);
	}
	return s;
}

static void idle_waiting(const struct run *r, double threads, struct findings *out)
{
	struct idle_now s = idle_collect(r);
	if (r->ended || s.idle < 1 || s.waiting < DIAG_IDLE_WAITING || !s.busiest)
		return;
	double t = r->tl_executing.has_last ? r->tl_executing.t_last : NAN;
	struct finding *f = diag_new(out, FIND_IDLE_CLUSTER, t, s.idle / threads);
	snprintf(f->title, sizeof(f->title), "idle cluster: %.0f thread%s without a task, %.0f tasks wait",
		 s.idle, diag_s(s.idle), s.waiting);
	snprintf(f->evidence, sizeof(f->evidence),
		 "the latest scheduler sample: %.0f of %.0f threads execute nothing while %.0f tasks "
		 "wait queued behind others' (%.0f on %s)",
		 s.idle, threads, s.waiting, s.most, s.busiest);
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "Dask's work stealing lags: smaller chunks spread better; check that worker's load");
}

void diag_rule_idle_cluster(struct diag_eval *e)
{
	const struct run *r = e->r;
	const struct metrics *m = e->m;
	struct findings *out = e->out;
	optnum th = m->total_cores;
	if (!th.valid || round(th.value) < 2)
		return;
	double threads = round(th.value);
	size_t before = out->n;
	idle_few_chunks(r, m, threads, out);
	if (out->n == before)
		idle_waiting(r, threads, out);
}
