/* Every metric, its formula in the comment above it. Where roastop and
 * roastcoffea 0.1.2 differ, docs/metrics.md says how and why. A quotient
 * with a missing or zero denominator is invalid (null), never 0. */
#include "roastop/metrics.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static optnum ratio(optnum a, optnum b)
{
	if (!a.valid || !b.valid || b.value == 0)
		return optnum_none();
	double q = a.value / b.value;
	return isfinite(q) ? optnum_of(q) : optnum_none();
}

static optnum scale(optnum a, double k)
{
	return a.valid ? optnum_of(a.value * k) : optnum_none();
}

static optnum count_of(uint64_t n)
{
	return optnum_of((double)n);
}

/* The latest sample's value, unknown after the scheduler was lost. */
static optnum last_of(const struct timeline *tl)
{
	return tl->has_last ? optnum_of(tl->v_last) : optnum_none();
}

/* elapsed = t_end - t_start, where t_start = run-start marker, else (an
 * implicit run) its earliest chunk's start, else the first event; t_end =
 * run-end marker, else now (never before the latest event, so a caller's
 * stale clock cannot shrink it). Negative: invalid. */
static void compute_elapsed(const struct run *r, double now, struct metrics *m)
{
	m->elapsed_time_seconds = optnum_none();
	if (!r->any_event)
		return;
	m->t_start = r->started ? r->t_run_start : (r->begun ? r->t_begin : r->t_first);
	if (!r->started && r->begun && r->n_chunks > r->n_failed)
		m->t_start = fmin(m->t_start, r->t_chunk_first);
	m->t_end = r->ended ? r->t_run_end : fmax(now, r->t_last);
	double el = m->t_end - m->t_start;
	if (isfinite(el) && el >= 0)
		m->elapsed_time_seconds = optnum_of(el);
}

/* A metric made null by contradicting inputs, and why (docs/metrics.md,
 * "Invariants"); past the list's room the value is still null. */
static void warn(struct metrics *m, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warn(struct metrics *m, const char *key, const char *fmt, ...)
{
	if (m->n_warnings == METRICS_MAX_WARNINGS)
		return;
	struct metrics_warning *w = &m->warnings[m->n_warnings++];
	w->key = key;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->reason, sizeof(w->reason), fmt, ap);
	va_end(ap);
}

/* The report cannot be this run's when it counts fewer events or chunks
 * than the run's own chunk records (which it includes), or when more
 * reports arrived than runs started. Writes why into why. */
static bool report_contradicts(const struct run *r, char *why, size_t n)
{
	const struct report_agg *rep = &r->report;
	uint64_t ok = r->n_chunks - r->n_failed;
	if (r->started && r->applied[EV_REPORT] > r->applied[EV_RUN_START])
		snprintf(why, n, "%llu coffea reports for %llu run starts: a report of another run",
			 (unsigned long long)r->applied[EV_REPORT],
			 (unsigned long long)r->applied[EV_RUN_START]);
	else if (rep->entries.valid && r->chunk_events.n &&
		 rep->entries.value < r->chunk_events.sum * (1 - 1e-9))
		snprintf(why, n, "coffea report has %.0f events, fewer than its chunks' %.0f: "
			 "a report of another run", rep->entries.value, r->chunk_events.sum);
	else if (rep->chunks.valid && rep->chunks.value < (double)ok)
		snprintf(why, n, "coffea report has %.0f chunks, fewer than the %llu chunk records: "
			 "a report of another run", rep->chunks.value, (unsigned long long)ok);
	else
		return false;
	return true;
}

/* A total from coffea's report when it arrived, else from the chunk records.
 * A report that contradicts the run: null, with the reason. */
static optnum total_of(struct metrics *m, const char *key, optnum from_report, const char *bad,
		       const struct stats *chunks, enum total_source *src)
{
	if (from_report.valid && bad) {
		*src = TOTAL_NONE;
		warn(m, key, "%s", bad);
		return optnum_none();
	}
	if (from_report.valid) {
		*src = TOTAL_REPORT;
		return from_report;
	}
	if (chunks->n && isfinite(chunks->sum)) {
		*src = TOTAL_CHUNKS;
		return optnum_of(chunks->sum);
	}
	*src = TOTAL_NONE;
	return optnum_none();
}

/* The run's window: its markers' interval when it has them (the elapsed
 * interval), else its chunks' span (earliest start to latest receive time);
 * with neither markers nor chunks, the elapsed interval. */
static void compute_window(const struct run *r, struct metrics *m)
{
	if (r->started || r->n_chunks == r->n_failed) {
		m->t_window_start = m->t_start;
		m->t_window_end = m->t_end;
		m->rate_window_seconds = m->elapsed_time_seconds;
		return;
	}
	m->t_window_start = r->t_chunk_first;
	m->t_window_end = r->t_chunk_last;
	double w = m->t_window_end - m->t_window_start;
	if (isfinite(w) && w >= 0)
		m->rate_window_seconds = optnum_of(w);
}

/* A chunk total less what lies outside the window; the report's as it is. */
static optnum inside(optnum total, enum total_source src, double outside)
{
	if (!total.valid || src != TOTAL_CHUNKS)
		return total;
	double v = total.value - outside;
	return isfinite(v) ? optnum_of(fmax(0, v)) : optnum_none();
}

static void window_totals(const struct run *r, struct metrics *m)
{
	m->window_events = inside(m->total_events, m->src_events, r->outside_events);
	m->window_bytes = inside(m->total_bytes_read, m->src_bytes, r->outside_bytes);
	m->window_cpu_time = inside(m->total_cpu_time, m->src_cpu, r->outside_time);
	/* failed chunks did not deliver: never in a rate's numerator */
	if (m->src_chunks == TOTAL_CHUNKS)
		m->window_chunks = count_of(r->n_chunks - r->n_failed - r->n_outside);
	else
		m->window_chunks = m->num_chunks;
}

static void compute_workflow(const struct run *r, struct metrics *m)
{
	const struct report_agg *rep = &r->report;
	char why[METRICS_WARNING_TEXT];
	const char *bad = report_contradicts(r, why, sizeof(why)) ? why : NULL;
	m->total_events = total_of(m, "total_events", rep->entries, bad, &r->chunk_events,
				   &m->src_events);
	/* coffea's processtime sums process() wall time per chunk */
	m->total_cpu_time = total_of(m, "total_cpu_time", rep->processtime, bad,
				     &r->chunk_duration, &m->src_cpu);
	m->total_bytes_read = total_of(m, "total_bytes_read", rep->bytesread, bad,
				       &r->chunk_bytes_read, &m->src_bytes);
	/* roastcoffea's final dict takes len(chunk_metrics) over the report */
	if (r->n_chunks) {
		m->num_chunks = count_of(r->n_chunks);
		m->src_chunks = TOTAL_CHUNKS;
	} else if (rep->chunks.valid && bad) {
		warn(m, "num_chunks", "%s", bad);
	} else {
		m->num_chunks = rep->chunks;
		m->src_chunks = rep->chunks.valid ? TOTAL_REPORT : TOTAL_NONE;
	}
	/* avg_cpu_time_per_chunk = total_cpu_time / chunks it was summed over */
	optnum per = m->src_cpu == TOTAL_REPORT ? rep->chunks : count_of(r->chunk_duration.n);
	m->avg_cpu_time_per_chunk = ratio(m->total_cpu_time, per);
	window_totals(r, m);
	/* rates over the run's window W, of what the window holds:
	 * data_rate_gbps = bytes x 8 / 1e9 / W; MB/s = bytes / 1e6 / W */
	optnum w = m->rate_window_seconds;
	m->data_rate_gbps = ratio(scale(m->window_bytes, 8e-9), w);
	m->data_rate_mb_per_s = ratio(scale(m->window_bytes, 1e-6), w);
	/* event rates in kHz: events / W / 1000; all events / all chunk time / 1000 */
	m->event_rate_elapsed_khz = scale(ratio(m->window_events, w), 1e-3);
	m->event_rate_cpu_total_khz = scale(ratio(m->total_events, m->total_cpu_time), 1e-3);
	/* efficiency_ratio = elapsed rate / CPU rate (roastcoffea's summary table) */
	m->efficiency_ratio = ratio(m->event_rate_elapsed_khz, m->event_rate_cpu_total_khz);
	/* chunks_per_second = successful chunks in the window / W */
	m->chunks_per_second = ratio(m->window_chunks, w);
}

static void compute_workers(const struct run *r, struct metrics *m)
{
	if (r->n_samples == 0)
		return; /* no scheduler data: every worker key stays null */
	/* avg_workers = integral of worker count dt / covered time (trapezoid) */
	m->avg_workers = timeline_time_avg(&r->tl_workers);
	m->peak_workers = timeline_max(&r->tl_workers);
	/* total_cores = integral of total threads dt / covered time (docs/metrics.md:
	 * roastcoffea's code sums every worker's last nthreads instead) */
	m->total_cores = timeline_time_avg(&r->tl_threads);
	m->total_threads_avg = m->total_cores;
	m->cores_per_worker = run_cores_per_worker(r);
	m->peak_memory_bytes = stats_max(&r->worker_mem_bytes);
	m->avg_memory_per_worker_bytes = run_avg_memory_per_worker(r);
	m->memory_utilization_mean_percent = stats_mean(&r->worker_mem_pct);
	m->memory_utilization_min_percent = stats_min(&r->worker_mem_pct);
	m->memory_utilization_max_percent = stats_max(&r->worker_mem_pct);
	m->cpu_utilization_mean_percent = stats_mean(&r->worker_cpu_pct);
	m->workers_now = count_of(r->workers_now);
	m->total_threads_now = last_of(&r->tl_threads);
	m->memory_used_now_bytes = last_of(&r->tl_mem_used);
	m->memory_limit_now_bytes = last_of(&r->tl_mem_limit);
	m->memory_worst_percent_now = last_of(&r->tl_mem_worst_pct);
	m->cpu_percent_now = last_of(&r->tl_cpu);
	m->tasks_executing_now = last_of(&r->tl_executing);
	m->tasks_executing_peak = timeline_max(&r->tl_executing);
	m->tasks_done_now = r->tasks_done;
	m->tasks_total_now = r->tasks_total;
	if (r->tasks_total.valid && r->tasks_total.value > 0)
		m->tasks_percent_now = optnum_of(100 * r->tasks_done.value / r->tasks_total.value);
}

/* Slack for clock granularity over a window of w seconds. */
static double tolerance(double w)
{
	return METRICS_TOL_REL + METRICS_TOL_SECONDS / w;
}

/* v within [0, bound]: clamped when past it by no more than the tolerance;
 * null beyond, with why (what: the reading of the quotient). */
static optnum bounded(struct metrics *m, const char *key, optnum v, double bound,
		      const char *what)
{
	if (!v.valid || !m->rate_window_seconds.valid)
		return v;
	if (v.value < 0) {
		warn(m, key, "%s is negative (%.3g)", what, v.value);
		return optnum_none();
	}
	if (v.value <= bound)
		return v;
	if (v.value <= bound * (1 + tolerance(m->rate_window_seconds.value)))
		return optnum_of(bound);
	warn(m, key, "%s: %.3g, over its bound %.3g", what, v.value, bound);
	return optnum_none();
}

/* Chunk time in the window cannot exceed threads x window: past the
 * tolerance the inputs contradict each other (why goes into why). */
static bool cpu_contradicts(const struct metrics *m, char *why, size_t n)
{
	optnum th = m->total_cores, w = m->rate_window_seconds, cpu = m->window_cpu_time;
	if (!th.valid || !w.valid || !cpu.valid)
		return false;
	double cap = th.value * w.value;
	if (cpu.value <= cap * (1 + tolerance(w.value)))
		return false;
	snprintf(why, n, "%s %.1f s exceeds total threads x window (%.2f x %.1f s = %.1f s)",
		 m->src_cpu == TOTAL_REPORT ? "coffea's processtime" : "chunk time in the run window",
		 cpu.value, th.value, w.value, cap);
	return true;
}

/* v, or null with why when the time it is computed from is contradicted. */
static optnum unless(struct metrics *m, const char *key, optnum v, const char *why)
{
	if (!why || !v.valid)
		return v;
	warn(m, key, "%s", why);
	return optnum_none();
}

static void compute_efficiency(struct metrics *m)
{
	optnum core_seconds = optnum_none();
	if (m->total_cores.valid && m->rate_window_seconds.valid)
		core_seconds = optnum_of(m->total_cores.value * m->rate_window_seconds.value);
	double th = m->total_cores.valid ? m->total_cores.value : INFINITY;
	char buf[METRICS_WARNING_TEXT];
	const char *why = cpu_contradicts(m, buf, sizeof(buf)) ? buf : NULL;
	/* core_efficiency = cpu time in the window / (total_cores x W), in [0, 1] */
	optnum eff = unless(m, "core_efficiency", ratio(m->window_cpu_time, core_seconds), why);
	m->core_efficiency = bounded(m, "core_efficiency", eff, 1, "cpu time / core time");
	/* speedup_factor = cpu time in the window / W, at most the threads */
	optnum sp = unless(m, "speedup_factor", ratio(m->window_cpu_time, m->rate_window_seconds), why);
	m->speedup_factor = bounded(m, "speedup_factor", sp, th, "speedup over the threads");
	/* efficiency_ratio: a speedup too (roastcoffea's cpu time / elapsed) */
	optnum er = unless(m, "efficiency_ratio", m->efficiency_ratio, why);
	m->efficiency_ratio = bounded(m, "efficiency_ratio", er, th,
				      "elapsed rate / CPU rate over the threads");
	/* event_rate_core_khz = events / (W x total_cores) / 1000 */
	m->event_rate_core_khz = scale(ratio(m->window_events, core_seconds), 1e-3);
	/* io_overhead_pct = processor non-CPU time / (total_cores x W) x 100 */
	m->io_overhead_pct = bounded(m, "io_overhead_pct",
				     scale(ratio(m->processor_io_wait_time_seconds, core_seconds), 100),
				     100, "non-CPU time / core time");
}

struct fine_sums {
	double p_cpu, p_io, o_cpu, o_io, disk_r, disk_w, mem_r;
	double compress, decompress, serialize, deserialize;
};

/* roastcoffea: prefix == processor class name; with no name, everything is
 * processor work. --processor-prefix GLOB replaces the exact comparison. */
static bool is_processor(const char *prefix, const struct run *r, const struct metrics_options *o)
{
	if (o && o->processor_prefix)
		return fnmatch(o->processor_prefix, prefix, 0) == 0;
	if (!r->processor[0])
		return true;
	return strcmp(prefix, r->processor) == 0;
}

/* Activity matching exactly as roastcoffea's fine_metrics.py: the byte
 * counters need unit "bytes", the timed activities match on name alone
 * (Dask meters them in seconds only). */
static void fine_add(struct fine_sums *s, const char *act, const char *unit, double v, bool proc)
{
	bool bytes = strcmp(unit, "bytes") == 0;
	if (strcmp(act, "thread-cpu") == 0)
		*(proc ? &s->p_cpu : &s->o_cpu) += v;
	else if (strcmp(act, "thread-noncpu") == 0)
		*(proc ? &s->p_io : &s->o_io) += v;
	else if (bytes && strcmp(act, "disk-read") == 0)
		s->disk_r += v;
	else if (bytes && strcmp(act, "disk-write") == 0)
		s->disk_w += v;
	else if (bytes && strcmp(act, "memory-read") == 0)
		s->mem_r += v;
	else if (strcmp(act, "decompress") == 0)
		s->decompress += v;
	else if (strcmp(act, "compress") == 0)
		s->compress += v;
	else if (strcmp(act, "deserialize") == 0)
		s->deserialize += v;
	else if (strcmp(act, "serialize") == 0)
		s->serialize += v;
}

/* Only "execute" rows: a span holds nothing else (Dask documents that its
 * keys are all ("execute", prefix, activity, unit)), so cluster-wide rows
 * are filtered the same way and both sources mean the same thing. */
static void fine_sum(const struct run *r, const struct strmap *map,
		     const struct metrics_options *o, struct fine_sums *s)
{
	char key[4 * EVENT_MAX_STRING + 4];
	for (size_t i = 0; i < map->count; i++) {
		snprintf(key, sizeof(key), "%s", strmap_key_at(map, i));
		const char *parts[4];
		if (!run_fine_split(key, parts) || strcmp(parts[0], "execute") != 0)
			continue;
		double v = run_fine_value(strmap_val_at(map, i));
		if (isfinite(v))
			fine_add(s, parts[2], parts[3], v, is_processor(parts[1], r, o));
	}
}

static void compute_fine(const struct run *r, const struct metrics_options *o, struct metrics *m)
{
	const struct strmap *map = r->fine_span.count ? &r->fine_span : &r->fine_cluster;
	if (map->count == 0)
		return; /* no snapshot: every fine key stays null */
	m->has_fine = true;
	m->fine_from_span = map == &r->fine_span;
	m->processor_known = (o && o->processor_prefix) || r->processor[0];
	struct fine_sums s = { 0 };
	fine_sum(r, map, o, &s);
	m->processor_cpu_time_seconds = optnum_of(s.p_cpu);
	m->processor_io_wait_time_seconds = optnum_of(s.p_io);
	/* processor_cpu_percent = cpu / (cpu + noncpu) x 100; io_wait is the complement */
	optnum total = optnum_of(s.p_cpu + s.p_io);
	m->processor_cpu_percent = scale(ratio(optnum_of(s.p_cpu), total), 100);
	m->processor_io_wait_percent = scale(ratio(optnum_of(s.p_io), total), 100);
	/* overhead = the same sums over non-processor rows; meaningless without a processor */
	if (m->processor_known) {
		m->overhead_cpu_time_seconds = optnum_of(s.o_cpu);
		m->overhead_io_wait_time_seconds = optnum_of(s.o_io);
		/* overhead_cpu_percent = cpu / (cpu + noncpu) x 100 over non-processor rows */
		optnum o_total = optnum_of(s.o_cpu + s.o_io);
		m->overhead_cpu_percent = scale(ratio(optnum_of(s.o_cpu), o_total), 100);
		m->overhead_io_wait_percent = scale(ratio(optnum_of(s.o_io), o_total), 100);
	}
	m->total_bytes_memory_read = optnum_of(s.mem_r);
	m->disk_read_bytes = optnum_of(s.disk_r);
	m->disk_write_bytes = optnum_of(s.disk_w);
	m->compression_time_seconds = optnum_of(s.compress);
	m->decompression_time_seconds = optnum_of(s.decompress);
	/* total_compression_overhead = compress + decompress */
	m->total_compression_overhead_seconds = optnum_of(s.compress + s.decompress);
	m->serialization_time_seconds = optnum_of(s.serialize);
	m->deserialization_time_seconds = optnum_of(s.deserialize);
	/* total_serialization_overhead = serialize + deserialize */
	m->total_serialization_overhead_seconds = optnum_of(s.serialize + s.deserialize);
}

static void compute_chunks(const struct run *r, struct metrics *m)
{
	if (r->n_chunks == 0)
		return;
	m->num_successful_chunks = count_of(r->n_chunks - r->n_failed);
	m->num_failed_chunks = count_of(r->n_failed);
	m->chunk_retries = count_of(r->retries.count);
	m->retried_chunks_recovered = count_of(r->retries.recovered);
	/* successful chunks only; std is the sample std (n - 1), 0 for one chunk */
	m->chunk_duration_mean = stats_mean(&r->chunk_duration);
	m->chunk_duration_min = stats_min(&r->chunk_duration);
	m->chunk_duration_max = stats_max(&r->chunk_duration);
	m->chunk_duration_std = stats_std(&r->chunk_duration);
	m->chunk_duration_p50 = hist_quantile(&r->duration_hist, 0.50);
	m->chunk_duration_p90 = hist_quantile(&r->duration_hist, 0.90);
	m->chunk_duration_p99 = hist_quantile(&r->duration_hist, 0.99);
	m->chunk_mem_delta_mean_mb = stats_mean(&r->chunk_mem_delta);
	m->chunk_mem_delta_min_mb = stats_min(&r->chunk_mem_delta);
	m->chunk_mem_delta_max_mb = stats_max(&r->chunk_mem_delta);
	m->chunk_mem_delta_std_mb = stats_std(&r->chunk_mem_delta);
	if (r->chunk_events.n)
		m->total_events_from_chunks = optnum_of(r->chunk_events.sum);
	m->chunk_events_mean = stats_mean(&r->chunk_events);
	m->chunk_events_min = stats_min(&r->chunk_events);
	m->chunk_events_max = stats_max(&r->chunk_events);
}

/* Files with metadata (roastcoffea's file_read_metrics): a file's read
 * percentages come from its first chunk, 0 when that chunk had none. */
static double first_or_zero(bool has, optnum v)
{
	return has && v.valid ? v.value : 0.0;
}

static void compute_branches(const struct run *r, struct metrics *m)
{
	double br = 0, by = 0;
	size_t n = 0;
	for (size_t i = 0; i < r->files.count; i++) {
		const struct file_agg *f = strmap_val_at(&r->files, i);
		if (!f->has_meta)
			continue;
		br += first_or_zero(f->has_first, f->branches_read_percent);
		by += first_or_zero(f->has_first, f->bytes_read_percent);
		n++;
	}
	if (n) {
		m->avg_branches_read_percent = optnum_of(br / (double)n);
		m->avg_bytes_read_percent = optnum_of(by / (double)n);
	}
	if (r->branches.count)
		m->total_branches_read = count_of(r->branches.count);
}

/* The recent rate of a cumulative series at time `end`: (latest value -
 * value at point i) / (end - t_i), i the earliest point of the last
 * METRICS_ETA_WINDOW seconds (at least METRICS_ETA_POINTS points back),
 * never before `from` (the run's start), across a gap (a restarted count,
 * a lost scheduler) or across a drop. A point's min is the value at its
 * first sample, exact for a rising series even in a merged bucket. The end
 * is now, not the latest arrival, so a run that stalls slows its rate.
 * Invalid without two points or with no progress among them. */
static optnum recent_rate(const struct timeline *tl, double from, double end)
{
	if (!tl->has_last || tl->len < 2 || !(end > from))
		return optnum_none();
	double edge = fmax(from, end - METRICS_ETA_WINDOW);
	size_t i = tl->len - 1, taken = 1;
	while (i > 0 && !tl->pts[i].gap_before && tl->pts[i - 1].t >= from &&
	       tl->pts[i - 1].min <= tl->pts[i].min &&
	       (tl->pts[i - 1].t >= edge || taken < METRICS_ETA_POINTS)) {
		i--;
		taken++;
	}
	double gained = tl->v_last - tl->pts[i].min, span = end - tl->pts[i].t;
	if (taken < 2 || !(gained > 0) || !(span > 0))
		return optnum_none();
	return optnum_of(gained / span);
}

/* progress = done / total of the source: events of the expected total,
 * else the run's tasks; eta = (total - done) / recent_rate, 0 once done
 * reaches the total; none after the run's end (nothing is left to wait
 * for) or without a rate. */
static void compute_progress(const struct run *r, struct metrics *m)
{
	m->expected_events = r->expected_events;
	m->progress_percent = scale(ratio(m->total_events, r->expected_events), 100);
	const struct timeline *tl = NULL;
	if (m->progress_percent.valid) {
		m->progress_source = PROGRESS_EVENTS;
		m->progress_done = m->total_events;
		m->progress_total = r->expected_events;
		tl = &r->tl_events;
	} else if (m->tasks_percent_now.valid) {
		m->progress_source = PROGRESS_TASKS;
		m->progress_done = r->tasks_done;
		m->progress_total = r->tasks_total;
		tl = &r->tl_tasks_done;
	} else {
		return;
	}
	m->progress_fraction = ratio(m->progress_done, m->progress_total);
	if (r->ended || !m->elapsed_time_seconds.valid)
		return;
	m->eta_rate = recent_rate(tl, m->t_start, m->t_end);
	double left = m->progress_total.value - m->progress_done.value;
	if (left <= 0)
		m->eta_seconds = optnum_of(0);
	else
		m->eta_seconds = ratio(optnum_of(left), m->eta_rate);
}

double metrics_inflight_age(const struct metrics *m, const struct inflight_chunk *c)
{
	return (isnan(c->t_lost) ? m->inflight_at : c->t_lost) - c->t_seen;
}

bool metrics_straggler(const struct metrics *m, const struct inflight_chunk *c)
{
	return m->straggler_after.valid && metrics_inflight_age(m, c) > m->straggler_after.value;
}

static void compute_straggler_after(const struct run *r, struct metrics *m)
{
	if (r->n_chunks - r->n_failed < METRICS_STRAGGLER_MIN_CHUNKS)
		return;
	optnum p90 = m->chunk_duration_p90, p99 = m->chunk_duration_p99;
	if (p90.valid && p99.valid)
		m->straggler_after = optnum_of(fmax(METRICS_STRAGGLER_P90_TIMES * p90.value, p99.value));
}

/* Valid from the run's first chunk_start: an emitter without them leaves
 * the in-flight figures unmeasured, not 0. */
static void compute_inflight(const struct run *r, struct metrics *m)
{
	const struct inflight *f = &r->inflight;
	m->inflight_at = r->ended ? r->t_run_end : m->t_end;
	compute_straggler_after(r, m);
	if (!f->starts)
		return;
	m->inflight_running = count_of(f->n);
	m->inflight_lost = count_of(f->lost);
	uint64_t stragglers = 0;
	double oldest = NAN;
	for (size_t i = 0; i < f->n; i++) {
		double age = metrics_inflight_age(m, &f->items[i]);
		oldest = isnan(oldest) ? age : fmax(oldest, age);
		stragglers += metrics_straggler(m, &f->items[i]);
	}
	if (f->n)
		m->inflight_oldest_age = optnum_of(fmax(oldest, 0));
	if (m->straggler_after.valid)
		m->inflight_stragglers = count_of(stragglers);
}

void metrics_compute(const struct run *r, double now, const struct metrics_options *opt,
		     struct metrics *m)
{
	memset(m, 0, sizeof(*m)); /* every optnum starts invalid */
	compute_elapsed(r, now, m);
	compute_window(r, m);
	compute_workflow(r, m);
	compute_workers(r, m);
	compute_fine(r, opt, m);
	compute_efficiency(m);
	compute_chunks(r, m);
	compute_branches(r, m);
	compute_progress(r, m);
	compute_inflight(r, m);
	task_figures_compute(&r->tasks, &m->tasks);
}

/* mean_duration = total_duration / num_chunks; mean_events_per_chunk only
 * when total_events > 0 (roastcoffea); share = dataset time / all time. */
bool metrics_dataset(const struct run *r, const struct metrics *m, size_t i,
		     struct dataset_metrics *out)
{
	(void)m;
	const struct dataset_agg *d = strmap_val_at(&r->datasets, i);
	if (!d)
		return false;
	memset(out, 0, sizeof(*out));
	out->name = strmap_key_at(&r->datasets, i);
	out->num_chunks = d->n_chunks;
	out->num_failed = d->n_failed;
	out->total_duration = d->total_duration;
	out->total_events = d->total_events;
	out->mean_duration = ratio(optnum_of(d->total_duration), count_of(d->n_chunks));
	if (d->total_events > 0)
		out->mean_events_per_chunk = ratio(optnum_of(d->total_events), count_of(d->n_chunks));
	if (d->duration_hist)
		out->p99_duration = hist_quantile(d->duration_hist, 0.99);
	out->event_rate_khz = metrics_event_rate_khz(d->total_events, d->total_duration);
	out->share_of_time_percent =
		scale(ratio(optnum_of(d->total_duration), optnum_of(r->chunk_duration.sum)), 100);
	return true;
}

optnum metrics_event_rate_khz(double events, double seconds)
{
	return scale(ratio(optnum_of(events), optnum_of(seconds)), 1e-3);
}

bool metrics_file(const struct run *r, size_t i, const char **name, optnum *rate_khz)
{
	const struct file_agg *f = strmap_val_at(&r->files, i);
	if (!f)
		return false;
	*name = strmap_key_at(&r->files, i);
	*rate_khz = metrics_event_rate_khz(f->total_events, f->total_duration);
	return true;
}

const char *metrics_progress_name(enum progress_source s)
{
	return s == PROGRESS_EVENTS ? "events" : (s == PROGRESS_TASKS ? "tasks" : NULL);
}

const char *metrics_source_name(enum total_source s)
{
	return s == TOTAL_REPORT ? "coffea_report" : (s == TOTAL_CHUNKS ? "chunks" : NULL);
}

void metrics_change(optnum a, optnum b, optnum *delta, optnum *percent)
{
	bool both = a.valid && b.valid && isfinite(a.value) && isfinite(b.value);
	*delta = both ? optnum_of(b.value - a.value) : optnum_none();
	*percent = both && a.value != 0 ? optnum_of(100 * (b.value - a.value) / fabs(a.value))
					: optnum_none();
}
