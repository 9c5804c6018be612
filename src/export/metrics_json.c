/* metrics.json (metrics_json.h): roastcoffea 0.1.2's keys in its order
 * (workflow, workers, efficiency, fine, chunks, branch coverage, raw data),
 * then roastop's. A group roastcoffea writes only when its source exists
 * (fine metrics, chunk records) appears only then. NaN and infinity never
 * appear. Written as a stream (no JSON tree): the per-file maps can be large. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "roastop/findings_json.h"
#include "roastop/identity.h"
#include "roastop/jsonw.h"
#include "roastop/metrics_extra.h"
#include "roastop/metrics_json.h"
#include "roastop/metrics_raw.h"

enum absent { AS_NULL, AS_OMIT }; /* what an invalid value becomes */

struct key {
	const char *name;
	size_t off;
};

#define K(f) { #f, offsetof(struct metrics, f) }
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct key workflow_keys[] = {
	K(data_rate_gbps), K(total_events), K(event_rate_elapsed_khz),
	K(event_rate_cpu_total_khz), K(elapsed_time_seconds), K(total_cpu_time), K(num_chunks),
	K(avg_cpu_time_per_chunk), K(total_bytes_read),
	/* workers: roastcoffea writes these whenever worker tracking is on (the default) */
	K(avg_workers), K(peak_workers), K(total_cores), K(cores_per_worker),
	K(peak_memory_bytes), K(avg_memory_per_worker_bytes),
	K(core_efficiency), K(speedup_factor), K(event_rate_core_khz),
};

static const struct key fine_keys[] = {
	K(processor_cpu_time_seconds), K(processor_io_wait_time_seconds),
	K(processor_cpu_percent), K(processor_io_wait_percent), K(overhead_cpu_time_seconds),
	K(overhead_io_wait_time_seconds), K(total_bytes_memory_read), K(disk_read_bytes),
	K(disk_write_bytes), K(decompression_time_seconds), K(compression_time_seconds),
	K(total_compression_overhead_seconds), K(deserialization_time_seconds),
	K(serialization_time_seconds), K(total_serialization_overhead_seconds),
};

/* roastcoffea's chunk.py leaves out a statistic it has no values for */
static const struct key chunk_keys[] = {
	K(num_successful_chunks), K(num_failed_chunks), K(chunk_duration_mean),
	K(chunk_duration_min), K(chunk_duration_max), K(chunk_duration_std),
	K(chunk_mem_delta_mean_mb), K(chunk_mem_delta_min_mb), K(chunk_mem_delta_max_mb),
	K(chunk_mem_delta_std_mb), K(total_events_from_chunks), K(chunk_events_mean),
	K(chunk_events_min), K(chunk_events_max),
};

static const struct key branch_avg_keys[] = {
	K(avg_branches_read_percent), K(avg_bytes_read_percent),
};

static const struct key branch_total_keys[] = {
	K(total_branches_read),
};

static const struct key extra_keys[] = {
	K(data_rate_mb_per_s), K(efficiency_ratio), K(chunks_per_second), K(io_overhead_pct),
	K(memory_utilization_mean_percent), K(memory_utilization_min_percent),
	K(memory_utilization_max_percent), K(cpu_utilization_mean_percent),
	K(total_threads_avg), K(total_threads_now), K(workers_now),
	K(chunk_duration_p50), K(chunk_duration_p90), K(chunk_duration_p99),
	K(expected_events), K(progress_percent), K(rate_window_seconds),
	K(progress_fraction), K(eta_seconds),
};

static void add_keys(struct jsonw *w, const struct metrics *m, const struct key *keys, size_t n,
		     enum absent absent)
{
	for (size_t i = 0; i < n; i++) {
		optnum v = *(const optnum *)((const char *)m + keys[i].off);
		if (v.valid || absent == AS_NULL)
			jsonw_opt(w, keys[i].name, v);
	}
}

/* roastcoffea's per_dataset: successful chunks only, mean_events_per_chunk
 * only when the dataset counted events. */
static void add_per_dataset(struct jsonw *w, const struct run *r, const struct metrics *m)
{
	struct dataset_metrics d;
	jsonw_object(w, "per_dataset");
	for (size_t i = 0; metrics_dataset(r, m, i, &d); i++) {
		if (d.num_chunks == 0)
			continue; /* only failed chunks */
		jsonw_object(w, d.name);
		jsonw_num(w, "num_chunks", (double)d.num_chunks);
		jsonw_num(w, "total_duration", d.total_duration);
		jsonw_num(w, "total_events", d.total_events);
		jsonw_opt(w, "mean_duration", d.mean_duration);
		if (d.mean_events_per_chunk.valid)
			jsonw_opt(w, "mean_events_per_chunk", d.mean_events_per_chunk);
		jsonw_end(w, '}');
	}
	jsonw_end(w, '}');
}

/* roastcoffea's `.get(key, 0)` for a per-file value the chunk did not carry */
static double or_zero(optnum v)
{
	return v.valid && isfinite(v.value) ? v.value : 0.0;
}

/* file_metadata, or (reads) file_read_metrics: an object per file with
 * metadata, in file order. */
static void add_file_objects(struct jsonw *w, const struct run *r, bool reads)
{
	jsonw_object(w, reads ? "file_read_metrics" : "file_metadata");
	for (size_t i = 0; i < r->files.count; i++) {
		const struct file_agg *f = strmap_val_at(&r->files, i);
		if (!f->has_meta)
			continue;
		jsonw_object(w, strmap_key_at(&r->files, i));
		if (reads) {
			jsonw_num(w, "total_branches", or_zero(f->total_branches));
			jsonw_num(w, "branches_read_percent", or_zero(f->branches_read_percent));
			jsonw_num(w, "total_tree_bytes", or_zero(f->total_tree_bytes));
			jsonw_num(w, "bytes_read", or_zero(f->accessed_bytes));
			jsonw_num(w, "bytes_read_percent", or_zero(f->bytes_read_percent));
		} else {
			jsonw_str(w, "filename", strmap_key_at(&r->files, i));
			jsonw_opt(w, "compression_ratio", f->compression_ratio);
			jsonw_opt(w, "total_branches", f->total_branches);
			jsonw_opt(w, "total_tree_bytes", f->total_tree_bytes);
		}
		jsonw_end(w, '}');
	}
	jsonw_end(w, '}');
}

/* A list of one positive per-file value, files with metadata, in file order. */
static void add_file_list(struct jsonw *w, const struct run *r, const char *key, bool ratio)
{
	jsonw_array(w, key);
	for (size_t i = 0; i < r->files.count; i++) {
		const struct file_agg *f = strmap_val_at(&r->files, i);
		optnum v = ratio ? f->compression_ratio : f->bytes_read_percent;
		if (f->has_meta && v.valid && v.value > 0)
			jsonw_num(w, NULL, v.value);
	}
	jsonw_end(w, ']');
}

/* branch_coverage.py's keys, in its order. */
static void add_branch_coverage(struct jsonw *w, const struct run *r, const struct metrics *m)
{
	add_file_objects(w, r, false);
	add_file_list(w, r, "compression_ratios", true);
	add_file_objects(w, r, true);
	add_keys(w, m, branch_avg_keys, N(branch_avg_keys), AS_NULL);
	add_file_list(w, r, "bytes_read_percent_per_file", false);
	add_keys(w, m, branch_total_keys, N(branch_total_keys), AS_NULL);
}

/* One section kind: which statistics it reports besides count and mean,
 * and the unit suffix of their keys. */
struct section_kind {
	const char *name, *unit;
	bool total, min, max;
};

static void add_section_stat(struct jsonw *w, const char *what, const char *unit, optnum v)
{
	char key[32];
	snprintf(key, sizeof(key), "%s_%s", what, unit);
	jsonw_opt(w, key, v);
}

static void add_section_kind(struct jsonw *w, const struct strmap *map,
			     const struct section_kind *k)
{
	jsonw_object(w, k->name);
	for (size_t i = 0; i < map->count; i++) {
		const struct stats *s = &((const struct section_agg *)strmap_val_at(map, i))->s;
		jsonw_object(w, strmap_key_at(map, i));
		jsonw_num(w, "count", (double)s->n);
		if (k->total)
			add_section_stat(w, "total", k->unit, optnum_of(s->sum));
		add_section_stat(w, "mean", k->unit, stats_mean(s));
		if (k->min)
			add_section_stat(w, "min", k->unit, stats_min(s));
		if (k->max)
			add_section_stat(w, "max", k->unit, stats_max(s));
		jsonw_end(w, '}');
	}
	jsonw_end(w, '}');
}

/* timing {count, total_seconds, mean_seconds, max_seconds}; memory {count,
 * mean_mb, min_mb, max_mb}; bytes {count, total_bytes, mean_bytes}. */
static void add_section_summary(struct jsonw *w, const struct run *r)
{
	static const struct section_kind timing = { "timing", "seconds", true, false, true };
	static const struct section_kind memory = { "memory", "mb", false, true, true };
	static const struct section_kind bytes = { "bytes", "bytes", true, false, false };
	if (r->sec_time.count + r->sec_mem.count + r->sec_bytes.count == 0)
		return;
	jsonw_object(w, "section_summary");
	add_section_kind(w, &r->sec_time, &timing);
	add_section_kind(w, &r->sec_mem, &memory);
	add_section_kind(w, &r->sec_bytes, &bytes);
	jsonw_end(w, '}');
}

static void add_metric_sources(struct jsonw *w, const struct metrics *m)
{
	jsonw_object(w, "metric_sources");
	jsonw_str(w, "total_events", metrics_source_name(m->src_events));
	jsonw_str(w, "total_cpu_time", metrics_source_name(m->src_cpu));
	jsonw_str(w, "total_bytes_read", metrics_source_name(m->src_bytes));
	jsonw_str(w, "num_chunks", metrics_source_name(m->src_chunks));
	jsonw_str(w, "fine_metrics", !m->has_fine ? NULL : (m->fine_from_span ? "span" : "cluster"));
	jsonw_end(w, '}');
}

static void add_string_if(struct jsonw *w, const char *name, const char *v)
{
	jsonw_str(w, name, v && v[0] ? v : NULL);
}

static void add_sources(struct jsonw *w, const struct run *r)
{
	jsonw_object(w, "sources");
	for (size_t i = 0; i < r->n_sources; i++) {
		const struct source_info *s = &r->sources[i];
		jsonw_object(w, s->name);
		jsonw_str(w, "state", s->state < SRC__COUNT ? source_state_name(s->state) : NULL);
		add_string_if(w, "reason", s->reason);
		jsonw_num(w, "since", s->since);
		jsonw_num(w, "transitions", (double)s->transitions);
		jsonw_end(w, '}');
	}
	jsonw_end(w, '}');
}

static void add_counts(struct jsonw *w, const struct run *r)
{
	jsonw_object(w, "events_applied");
	for (int t = EV_SAMPLE; t < EV__COUNT; t++)
		if (t != EV_TASK && t != EV_COUNTERS) /* the session's, never a run's */
			jsonw_num(w, event_type_name(t), (double)r->applied[t]);
	jsonw_end(w, '}');
	jsonw_num(w, "events_ignored", (double)r->ignored);
	/* applied in part: earlier than the run's latest time (docs/recording.md) */
	jsonw_num(w, "time_regressions", (double)r->time_regressions);
	jsonw_object(w, "overflow");
	jsonw_num(w, "workers", (double)r->overflow_workers);
	jsonw_num(w, "datasets", (double)r->overflow_datasets);
	jsonw_num(w, "files", (double)r->overflow_files);
	jsonw_num(w, "sections", (double)r->overflow_sections);
	jsonw_num(w, "branches", (double)r->overflow_branches);
	jsonw_num(w, "fine_rows", (double)r->overflow_fine);
	jsonw_num(w, "errors", (double)r->overflow_errors);
	jsonw_end(w, '}');
	jsonw_num(w, "keys_shortened", (double)r->keys_shortened);
	jsonw_num(w, "workers_evicted", (double)r->workers_evicted);
	jsonw_object(w, "chunk_errors");
	for (size_t i = 0; i < r->errors.count; i++) {
		uint64_t n = *(const uint64_t *)strmap_val_at(&r->errors, i);
		if (n) /* 0: its chunks all recovered on a retry */
			jsonw_num(w, strmap_key_at(&r->errors, i), (double)n);
	}
	jsonw_end(w, '}');
	jsonw_num(w, "chunks_with_custom_fields", (double)r->chunks_with_custom);
	jsonw_num(w, "scheduler_samples", (double)r->n_samples);
	jsonw_num(w, "heartbeat_samples", (double)r->n_beat_samples);
	jsonw_num(w, "scheduler_restarts", (double)r->scheduler_restarts);
	jsonw_num(w, "scheduler_gaps", (double)r->scheduler_gaps);
	jsonw_num(w, "workers_seen", (double)(r->workers.count + r->workers_evicted));
	jsonw_object(w, "fine_snapshots");
	jsonw_num(w, "cluster", (double)r->n_fine_cluster);
	jsonw_num(w, "span", (double)r->n_fine_span);
	jsonw_end(w, '}');
}

#define INFLIGHT_LISTED 10 /* chunks in flight and lost, written each */

static void add_inflight_chunk(struct jsonw *w, const struct metrics *m,
			       const struct inflight_chunk *c)
{
	jsonw_object(w, NULL);
	jsonw_str(w, "file", c->file[0] ? c->file : NULL);
	jsonw_str(w, "dataset", c->dataset[0] ? c->dataset : NULL);
	jsonw_str(w, "worker", c->worker[0] ? c->worker : NULL);
	jsonw_str(w, "host", c->host);
	jsonw_opt(w, "entry_start", c->entry_start);
	jsonw_opt(w, "entry_stop", c->entry_stop);
	jsonw_num(w, "age_seconds", metrics_inflight_age(m, c));
	if (isnan(c->t_lost))
		jsonw_bool(w, "straggler", metrics_straggler(m, c));
	else
		jsonw_num(w, "lost_at", c->t_lost);
	jsonw_end(w, '}');
}

/* Chunks begun and not ended (docs/metrics.md, "Chunks in flight"): the
 * oldest still running when written (at the run's end: those it left),
 * and the latest lost with their worker. */
static void add_inflight(struct jsonw *w, const struct metrics *m, const struct run *r)
{
	const struct inflight *f = &r->inflight;
	jsonw_object(w, "in_flight");
	jsonw_num(w, "chunk_starts", (double)f->starts);
	jsonw_opt(w, "running", m->inflight_running);
	jsonw_opt(w, "oldest_age_seconds", m->inflight_oldest_age);
	jsonw_opt(w, "stragglers", m->inflight_stragglers);
	jsonw_opt(w, "straggler_after_seconds", m->straggler_after);
	jsonw_opt(w, "lost_with_worker", m->inflight_lost);
	jsonw_num(w, "matched", (double)f->matched);
	jsonw_num(w, "unmatched_ends", (double)f->unmatched);
	jsonw_num(w, "replaced", (double)f->replaced);
	jsonw_num(w, "overflow", (double)f->overflow);
	const struct inflight_chunk *oldest[INFLIGHT_LISTED];
	size_t n = inflight_oldest(f, oldest, INFLIGHT_LISTED);
	jsonw_array(w, "oldest_running");
	for (size_t i = 0; i < n; i++)
		add_inflight_chunk(w, m, oldest[i]);
	jsonw_end(w, ']');
	jsonw_array(w, "lost");
	const struct inflight_chunk *c;
	for (size_t i = 0; i < INFLIGHT_LISTED && (c = inflight_lost_get(f, i)) != NULL; i++)
		add_inflight_chunk(w, m, c);
	jsonw_end(w, ']');
	jsonw_end(w, '}');
}

/* The latest failed chunks (failed.h), the latest first: which file and
 * entry range raised what, where. */
static void add_failed(struct jsonw *w, const struct run *r)
{
	jsonw_object(w, "failed_chunks");
	jsonw_num(w, "count", (double)r->failed.n);
	jsonw_array(w, "latest");
	const struct failed_chunk *c;
	for (size_t i = 0; (c = failed_get(&r->failed, i)) != NULL; i++) {
		jsonw_object(w, NULL);
		jsonw_str(w, "error", c->error[0] ? c->error : NULL);
		jsonw_str(w, "file", c->file[0] ? c->file : NULL);
		jsonw_str(w, "dataset", c->dataset[0] ? c->dataset : NULL);
		jsonw_str(w, "worker", c->worker[0] ? c->worker : NULL);
		jsonw_opt(w, "entry_start", c->entry_start);
		jsonw_opt(w, "entry_stop", c->entry_stop);
		jsonw_opt(w, "duration", c->duration);
		jsonw_num(w, "received_at", c->t);
		jsonw_bool(w, "retried", c->retried);
		jsonw_end(w, '}');
	}
	jsonw_end(w, ']');
	jsonw_end(w, '}');
}

/* Retries (retries.h, docs/metrics.md "Retries"): null before any chunk. */
static void add_retries(struct jsonw *w, const struct metrics *m, const struct run *r)
{
	const struct retries *rt = &r->retries;
	jsonw_object(w, "retries");
	jsonw_opt(w, "count", m->chunk_retries);
	jsonw_opt(w, "recovered_chunks", m->retried_chunks_recovered);
	jsonw_object(w, "by_type");
	for (size_t i = 0; i < rt->by_type.count; i++)
		jsonw_num(w, strmap_key_at(&rt->by_type, i),
			  (double)*(const uint64_t *)strmap_val_at(&rt->by_type, i));
	jsonw_end(w, '}');
	jsonw_num(w, "untracked", (double)rt->untracked);
	jsonw_num(w, "overflow", (double)rt->overflow);
	jsonw_end(w, '}');
}

/* roastop's own keys (docs/metrics.md): which run (the collector's id, or
 * roastop's implicit-N) and how it ended and why; null before any run. */
static void add_run_status(struct jsonw *w, const struct run *r)
{
	jsonw_str(w, "run_id", r->run_id[0] ? r->run_id : NULL);
	jsonw_str(w, "run_name", r->name[0] ? r->name : NULL);
	bool known = r->started || r->begun || r->ended;
	jsonw_str(w, "run_status", known ? run_status_name(r->status) : NULL);
	jsonw_str(w, "run_status_reason", !known ? "no run_start received"
				: (r->status_reason[0] ? r->status_reason : NULL));
}

/* The metrics made null because their inputs contradict each other. */
static void add_warnings(struct jsonw *w, const struct metrics *m)
{
	jsonw_array(w, "warnings");
	for (size_t i = 0; i < m->n_warnings; i++) {
		jsonw_object(w, NULL);
		jsonw_str(w, "key", m->warnings[i].key);
		jsonw_str(w, "reason", m->warnings[i].reason);
		jsonw_end(w, '}');
	}
	jsonw_end(w, ']');
}

/* The run's event log, oldest first: the lines it still keeps (the last
 * RUN_LOG_LINES) and how many it ever had. */
static void add_log(struct jsonw *w, const struct run *r)
{
	jsonw_num(w, "log_lines", (double)r->log_count);
	jsonw_array(w, "log");
	for (size_t i = RUN_LOG_LINES; i-- > 0;) {
		const struct log_line *l = run_log_get(r, i);
		if (!l)
			continue;
		jsonw_object(w, NULL);
		jsonw_num(w, "t", l->t);
		jsonw_str(w, "level", log_kind_name(l->kind));
		jsonw_str(w, "text", l->text);
		jsonw_end(w, '}');
	}
	jsonw_end(w, ']');
}

static void add_roastop(struct jsonw *w, const struct metrics *m, const struct run *r,
			const struct findings *fs, const struct metrics_extra_input *extra)
{
	jsonw_object(w, "roastop");
	jsonw_str(w, "version", ROASTOP_VERSION);
	add_string_if(w, "run_id", r->run_id);
	add_string_if(w, "run_name", r->name);
	add_string_if(w, "processor", r->processor);
	struct identity id;
	identity_of_run(r, m, &id);
	identity_write(w, &id);
	add_string_if(w, "dask_version", r->dask_version);
	add_string_if(w, "scheduler_id", r->scheduler_id);
	jsonw_bool(w, "run_ended", r->ended);
	jsonw_bool(w, "run_implicit", !r->started); /* no run_start: no collector */
	add_warnings(w, m);
	add_sources(w, r);
	add_counts(w, r);
	add_inflight(w, m, r);
	add_failed(w, r);
	if (fs)
		findings_json(w, fs, m->t_start);
	add_retries(w, m, r);
	add_log(w, r);
	metrics_raw_roastop(w, r);
	if (extra)
		metrics_extra_write(w, extra, r, m);
	jsonw_end(w, '}');
}

int metrics_write_json(const struct metrics *m, const struct run *r, const struct findings *fs,
		       const struct metrics_extra_input *extra, struct strbuf *out)
{
	struct jsonw w;
	jsonw_init(&w, out);
	jsonw_object(&w, NULL);
	add_keys(&w, m, workflow_keys, N(workflow_keys), AS_NULL);
	if (m->has_fine)
		add_keys(&w, m, fine_keys, N(fine_keys), AS_NULL);
	if (r->n_chunks) {
		add_keys(&w, m, chunk_keys, N(chunk_keys), AS_OMIT);
		if (r->chunk_duration.n)
			add_per_dataset(&w, r, m);
		add_branch_coverage(&w, r, m);
	}
	metrics_raw_tracking(&w, r);
	metrics_raw_chunks(&w, r);
	metrics_raw_span(&w, r, m);
	add_keys(&w, m, extra_keys, N(extra_keys), AS_OMIT);
	if (m->progress_source != PROGRESS_NONE)
		jsonw_str(&w, "progress_source", metrics_progress_name(m->progress_source));
	add_section_summary(&w, r);
	add_metric_sources(&w, m);
	add_run_status(&w, r);
	add_roastop(&w, m, r, fs, extra);
	jsonw_end(&w, '}');
	return out->failed ? -1 : 0;
}

static void read_keys(const cJSON *doc, struct metrics *m, const struct key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, keys[i].name);
		optnum *out = (optnum *)((char *)m + keys[i].off);
		*out = cJSON_IsNumber(v) && isfinite(v->valuedouble) ? optnum_of(v->valuedouble)
								      : optnum_none();
	}
}

void metrics_read_json(const cJSON *doc, struct metrics *m)
{
	memset(m, 0, sizeof(*m));
	read_keys(doc, m, workflow_keys, N(workflow_keys));
	read_keys(doc, m, fine_keys, N(fine_keys));
	read_keys(doc, m, chunk_keys, N(chunk_keys));
	read_keys(doc, m, branch_avg_keys, N(branch_avg_keys));
	read_keys(doc, m, branch_total_keys, N(branch_total_keys));
	read_keys(doc, m, extra_keys, N(extra_keys));
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(doc, "roastop"), "retries");
	static const struct key retry_keys[] = {
		{ "count", offsetof(struct metrics, chunk_retries) },
		{ "recovered_chunks", offsetof(struct metrics, retried_chunks_recovered) },
	};
	read_keys(rt, m, retry_keys, N(retry_keys));
}
