/* Every metric, its formula in the comment above it. Where roastop and
 * roastcoffea 0.1.2 differ, docs/metrics.md says how and why. A quotient
 * with a missing or zero denominator is invalid (null), never 0. */
#include "roastop/metrics.h"

#include <fnmatch.h>
#include <math.h>
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

/* elapsed = t_end - t_start, where t_start = run-start marker, else the first
 * event; t_end = run-end marker, else now (never before the latest event, so
 * a caller's stale clock cannot shrink it). Negative: invalid. */
static void compute_elapsed(const struct run *r, double now, struct metrics *m)
{
	m->elapsed_time_seconds = optnum_none();
	if (!r->any_event)
		return;
	m->t_start = r->started ? r->t_run_start : r->t_first;
	m->t_end = r->ended ? r->t_run_end : fmax(now, r->t_last);
	double el = m->t_end - m->t_start;
	if (isfinite(el) && el >= 0)
		m->elapsed_time_seconds = optnum_of(el);
}

/* A total from coffea's report when it arrived, else from the chunk records. */
static optnum total_of(optnum from_report, const struct stats *chunks, enum total_source *src)
{
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

static void compute_workflow(const struct run *r, struct metrics *m)
{
	const struct report_agg *rep = &r->report;
	m->total_events = total_of(rep->entries, &r->chunk_events, &m->src_events);
	/* coffea's processtime sums process() wall time per chunk */
	m->total_cpu_time = total_of(rep->processtime, &r->chunk_duration, &m->src_cpu);
	m->total_bytes_read = total_of(rep->bytesread, &r->chunk_bytes_read, &m->src_bytes);
	/* roastcoffea's final dict takes len(chunk_metrics) over the report */
	if (r->n_chunks) {
		m->num_chunks = count_of(r->n_chunks);
		m->src_chunks = TOTAL_CHUNKS;
	} else {
		m->num_chunks = rep->chunks;
		m->src_chunks = rep->chunks.valid ? TOTAL_REPORT : TOTAL_NONE;
	}
	/* avg_cpu_time_per_chunk = total_cpu_time / chunks it was summed over */
	optnum per = m->src_cpu == TOTAL_REPORT ? rep->chunks : count_of(r->chunk_duration.n);
	m->avg_cpu_time_per_chunk = ratio(m->total_cpu_time, per);
	/* data_rate_gbps = bytes x 8 / 1e9 / elapsed; MB/s = bytes / 1e6 / elapsed */
	m->data_rate_gbps = ratio(scale(m->total_bytes_read, 8e-9), m->elapsed_time_seconds);
	m->data_rate_mb_per_s = ratio(scale(m->total_bytes_read, 1e-6), m->elapsed_time_seconds);
	/* event rates in kHz: events / elapsed / 1000, events / cpu / 1000 */
	m->event_rate_elapsed_khz = scale(ratio(m->total_events, m->elapsed_time_seconds), 1e-3);
	m->event_rate_cpu_total_khz = scale(ratio(m->total_events, m->total_cpu_time), 1e-3);
	/* efficiency_ratio = elapsed rate / CPU rate (roastcoffea's summary table) */
	m->efficiency_ratio = ratio(m->event_rate_elapsed_khz, m->event_rate_cpu_total_khz);
	/* chunks_per_second = num_chunks / elapsed */
	m->chunks_per_second = ratio(m->num_chunks, m->elapsed_time_seconds);
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
	/* "now" values: the latest sample, unknown after the scheduler was lost */
	if (r->tl_threads.has_last)
		m->total_threads_now = optnum_of(r->tl_threads.v_last);
	if (r->tl_mem_used.has_last)
		m->memory_used_now_bytes = optnum_of(r->tl_mem_used.v_last);
	if (r->tl_mem_limit.has_last)
		m->memory_limit_now_bytes = optnum_of(r->tl_mem_limit.v_last);
	if (r->tl_mem_worst_pct.has_last)
		m->memory_worst_percent_now = optnum_of(r->tl_mem_worst_pct.v_last);
	if (r->tl_cpu.has_last)
		m->cpu_percent_now = optnum_of(r->tl_cpu.v_last);
	if (r->tl_executing.has_last)
		m->tasks_executing_now = optnum_of(r->tl_executing.v_last);
	m->tasks_executing_peak = timeline_max(&r->tl_executing);
	m->tasks_done_now = r->tasks_done;
	m->tasks_total_now = r->tasks_total;
	if (r->tasks_total.valid && r->tasks_total.value > 0)
		m->tasks_percent_now = optnum_of(100 * r->tasks_done.value / r->tasks_total.value);
}

static void compute_efficiency(struct metrics *m)
{
	optnum core_seconds = optnum_none();
	if (m->total_cores.valid && m->elapsed_time_seconds.valid)
		core_seconds = optnum_of(m->total_cores.value * m->elapsed_time_seconds.value);
	/* core_efficiency = total_cpu_time / (total_cores x elapsed) */
	m->core_efficiency = ratio(m->total_cpu_time, core_seconds);
	/* speedup_factor = total_cpu_time / elapsed */
	m->speedup_factor = ratio(m->total_cpu_time, m->elapsed_time_seconds);
	/* event_rate_core_khz = events / (elapsed x total_cores) / 1000 */
	m->event_rate_core_khz = scale(ratio(m->total_events, core_seconds), 1e-3);
	/* io_overhead_pct = processor non-CPU time / (total_cores x elapsed) x 100 */
	m->io_overhead_pct = scale(ratio(m->processor_io_wait_time_seconds, core_seconds), 100);
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

/* progress = events done / expected x 100; eta = remaining / current rate */
static void compute_progress(const struct run *r, struct metrics *m)
{
	m->expected_events = r->expected_events;
	m->progress_percent = scale(ratio(m->total_events, r->expected_events), 100);
	if (!m->progress_percent.valid || r->ended)
		return;
	optnum rate = ratio(m->total_events, m->elapsed_time_seconds);
	optnum left = optnum_of(fmax(0, r->expected_events.value - m->total_events.value));
	m->eta_seconds = rate.valid && rate.value > 0 ? ratio(left, rate) : optnum_none();
}

void metrics_compute(const struct run *r, double now, const struct metrics_options *opt,
		     struct metrics *m)
{
	memset(m, 0, sizeof(*m)); /* every optnum starts invalid */
	compute_elapsed(r, now, m);
	compute_workflow(r, m);
	compute_workers(r, m);
	compute_fine(r, opt, m);
	compute_efficiency(m);
	compute_chunks(r, m);
	compute_branches(r, m);
	compute_progress(r, m);
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
	out->event_rate_khz = scale(ratio(optnum_of(d->total_events), optnum_of(d->total_duration)), 1e-3);
	out->share_of_time_percent =
		scale(ratio(optnum_of(d->total_duration), optnum_of(r->chunk_duration.sum)), 100);
	return true;
}

const char *metrics_source_name(enum total_source s)
{
	return s == TOTAL_REPORT ? "coffea_report" : (s == TOTAL_CHUNKS ? "chunks" : NULL);
}
