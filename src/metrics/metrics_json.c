/* metrics.json: roastcoffea 0.1.2's keys in its order (workflow, workers,
 * efficiency, fine, chunks, branch coverage), then roastop's additions.
 * Scalars are numbers when measured and null when not; NaN never appears. */
#include <math.h>

#include "roastop/metrics.h"

struct key {
	const char *name;
	size_t off;
};

#define K(f) { #f, offsetof(struct metrics, f) }

static const struct key scalar_keys[] = {
	K(data_rate_gbps), K(total_events), K(event_rate_elapsed_khz),
	K(event_rate_cpu_total_khz), K(elapsed_time_seconds), K(total_cpu_time), K(num_chunks),
	K(avg_cpu_time_per_chunk), K(total_bytes_read),
	K(avg_workers), K(peak_workers), K(total_cores), K(cores_per_worker),
	K(peak_memory_bytes), K(avg_memory_per_worker_bytes),
	K(core_efficiency), K(speedup_factor), K(event_rate_core_khz),
	K(processor_cpu_time_seconds), K(processor_io_wait_time_seconds),
	K(processor_cpu_percent), K(processor_io_wait_percent), K(overhead_cpu_time_seconds),
	K(overhead_io_wait_time_seconds), K(total_bytes_memory_read), K(disk_read_bytes),
	K(disk_write_bytes), K(decompression_time_seconds), K(compression_time_seconds),
	K(total_compression_overhead_seconds), K(deserialization_time_seconds),
	K(serialization_time_seconds), K(total_serialization_overhead_seconds),
	K(num_successful_chunks), K(num_failed_chunks), K(chunk_duration_mean),
	K(chunk_duration_min), K(chunk_duration_max), K(chunk_duration_std),
	K(chunk_mem_delta_mean_mb), K(chunk_mem_delta_min_mb), K(chunk_mem_delta_max_mb),
	K(chunk_mem_delta_std_mb), K(total_events_from_chunks), K(chunk_events_mean),
	K(chunk_events_min), K(chunk_events_max),
};

static const struct key branch_keys[] = {
	K(avg_branches_read_percent), K(avg_bytes_read_percent), K(total_branches_read),
};

static const struct key extra_keys[] = {
	K(data_rate_mb_per_s), K(efficiency_ratio), K(io_overhead_pct),
	K(memory_utilization_mean_percent), K(memory_utilization_min_percent),
	K(memory_utilization_max_percent), K(cpu_utilization_mean_percent),
	K(chunk_duration_p50), K(chunk_duration_p90), K(chunk_duration_p99),
	K(workers_now), K(expected_events), K(progress_percent),
};

static void add_num(cJSON *obj, const char *name, optnum v)
{
	if (v.valid && isfinite(v.value))
		cJSON_AddNumberToObject(obj, name, v.value);
	else
		cJSON_AddNullToObject(obj, name);
}

static void add_keys(cJSON *obj, const struct metrics *m, const struct key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		add_num(obj, keys[i].name, *(const optnum *)((const char *)m + keys[i].off));
}

static void add_per_dataset(cJSON *obj, const struct run *r, const struct metrics *m)
{
	cJSON *all = cJSON_AddObjectToObject(obj, "per_dataset");
	struct dataset_metrics d;
	for (size_t i = 0; all && metrics_dataset(r, m, i, &d); i++) {
		if (d.num_chunks == 0)
			continue; /* only failed chunks: roastcoffea lists successful ones */
		cJSON *o = cJSON_AddObjectToObject(all, d.name);
		if (!o)
			return;
		cJSON_AddNumberToObject(o, "num_chunks", (double)d.num_chunks);
		cJSON_AddNumberToObject(o, "total_duration", d.total_duration);
		cJSON_AddNumberToObject(o, "total_events", d.total_events);
		add_num(o, "mean_duration", d.mean_duration);
		if (d.mean_events_per_chunk.valid)
			add_num(o, "mean_events_per_chunk", d.mean_events_per_chunk);
	}
}

static void add_opt_field(cJSON *o, const char *name, optnum v, double dflt)
{
	cJSON_AddNumberToObject(o, name, v.valid && isfinite(v.value) ? v.value : dflt);
}

/* file_metadata, compression_ratios, file_read_metrics and
 * bytes_read_percent_per_file, as roastcoffea's branch_coverage.py */
static void add_files(cJSON *obj, const struct run *r)
{
	cJSON *meta = cJSON_AddObjectToObject(obj, "file_metadata");
	cJSON *ratios = cJSON_AddArrayToObject(obj, "compression_ratios");
	cJSON *reads = cJSON_AddObjectToObject(obj, "file_read_metrics");
	cJSON *pcts = cJSON_AddArrayToObject(obj, "bytes_read_percent_per_file");
	if (!meta || !ratios || !reads || !pcts)
		return;
	for (size_t i = 0; i < r->files.count; i++) {
		const struct file_agg *f = strmap_val_at(&r->files, i);
		const char *name = strmap_key_at(&r->files, i);
		if (!f->has_meta)
			continue;
		cJSON *m = cJSON_AddObjectToObject(meta, name);
		cJSON *rd = cJSON_AddObjectToObject(reads, name);
		if (!m || !rd)
			return;
		cJSON_AddStringToObject(m, "filename", name);
		add_num(m, "compression_ratio", f->compression_ratio);
		add_num(m, "total_branches", f->total_branches);
		add_num(m, "total_tree_bytes", f->total_tree_bytes);
		if (f->compression_ratio.valid && f->compression_ratio.value > 0)
			cJSON_AddItemToArray(ratios, cJSON_CreateNumber(f->compression_ratio.value));
		add_opt_field(rd, "total_branches", f->total_branches, 0);
		add_opt_field(rd, "branches_read_percent", f->branches_read_percent, 0);
		add_opt_field(rd, "total_tree_bytes", f->total_tree_bytes, 0);
		add_opt_field(rd, "bytes_read", f->accessed_bytes, 0);
		add_opt_field(rd, "bytes_read_percent", f->bytes_read_percent, 0);
		if (f->bytes_read_percent.valid && f->bytes_read_percent.value > 0)
			cJSON_AddItemToArray(pcts, cJSON_CreateNumber(f->bytes_read_percent.value));
	}
}

static void add_sections(cJSON *parent, const char *name, const struct strmap *m,
			 const char *unit_total, const char *unit_mean)
{
	cJSON *o = cJSON_AddObjectToObject(parent, name);
	for (size_t i = 0; o && i < m->count; i++) {
		const struct section_agg *s = strmap_val_at(m, i);
		cJSON *e = cJSON_AddObjectToObject(o, strmap_key_at(m, i));
		if (!e)
			return;
		cJSON_AddNumberToObject(e, "count", (double)s->s.n);
		cJSON_AddNumberToObject(e, unit_total, s->s.sum);
		add_num(e, unit_mean, stats_mean(&s->s));
		add_num(e, "min", stats_min(&s->s));
		add_num(e, "max", stats_max(&s->s));
	}
}

static void add_section_summary(cJSON *obj, const struct run *r)
{
	cJSON *s = cJSON_AddObjectToObject(obj, "section_summary");
	if (!s)
		return;
	add_sections(s, "timing", &r->sec_time, "total_seconds", "mean_seconds");
	add_sections(s, "memory", &r->sec_mem, "total_mb", "mean_mb");
	add_sections(s, "bytes", &r->sec_bytes, "total_bytes", "mean_bytes");
}

static void add_string_if(cJSON *o, const char *name, const char *v)
{
	if (v && v[0])
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

static void add_sources(cJSON *o, const struct metrics *m, const struct run *r)
{
	cJSON *src = cJSON_AddObjectToObject(o, "metric_sources");
	if (src) {
		cJSON_AddStringToObject(src, "total_events", metrics_source_name(m->src_events));
		cJSON_AddStringToObject(src, "total_cpu_time", metrics_source_name(m->src_cpu));
		cJSON_AddStringToObject(src, "total_bytes_read", metrics_source_name(m->src_bytes));
		cJSON_AddStringToObject(src, "num_chunks", metrics_source_name(m->src_chunks));
		cJSON_AddStringToObject(src, "fine_metrics",
					!m->has_fine ? "none" : (m->fine_from_span ? "span" : "cluster"));
	}
	cJSON *st = cJSON_AddObjectToObject(o, "sources");
	for (size_t i = 0; st && i < r->n_sources; i++) {
		cJSON *s = cJSON_AddObjectToObject(st, r->sources[i].name);
		if (!s)
			return;
		cJSON_AddStringToObject(s, "state", source_state_name(r->sources[i].state));
		cJSON_AddStringToObject(s, "reason", r->sources[i].reason);
		cJSON_AddNumberToObject(s, "transitions", (double)r->sources[i].transitions);
	}
}

static void add_counts(cJSON *o, const struct run *r)
{
	cJSON *ap = cJSON_AddObjectToObject(o, "events_applied");
	for (int t = EV_SAMPLE; ap && t < EV__COUNT; t++)
		cJSON_AddNumberToObject(ap, event_type_name(t), (double)r->applied[t]);
	cJSON_AddNumberToObject(o, "events_ignored", (double)r->ignored);
	cJSON *ov = cJSON_AddObjectToObject(o, "overflow");
	if (ov) {
		cJSON_AddNumberToObject(ov, "workers", (double)r->overflow_workers);
		cJSON_AddNumberToObject(ov, "datasets", (double)r->overflow_datasets);
		cJSON_AddNumberToObject(ov, "files", (double)r->overflow_files);
		cJSON_AddNumberToObject(ov, "sections", (double)r->overflow_sections);
		cJSON_AddNumberToObject(ov, "branches", (double)r->overflow_branches);
		cJSON_AddNumberToObject(ov, "fine_rows", (double)r->overflow_fine);
	}
	cJSON *err = cJSON_AddObjectToObject(o, "chunk_errors");
	for (size_t i = 0; err && i < r->errors.count; i++)
		cJSON_AddNumberToObject(err, strmap_key_at(&r->errors, i),
					(double)*(const uint64_t *)strmap_val_at(&r->errors, i));
	cJSON_AddNumberToObject(o, "chunks_with_custom_fields", (double)r->chunks_with_custom);
	cJSON_AddNumberToObject(o, "scheduler_samples", (double)r->n_samples);
	cJSON_AddNumberToObject(o, "scheduler_restarts", (double)r->scheduler_restarts);
	cJSON_AddNumberToObject(o, "workers_seen", (double)r->workers.count);
}

static void add_roastop(cJSON *obj, const struct metrics *m, const struct run *r)
{
	cJSON *o = cJSON_AddObjectToObject(obj, "roastop");
	if (!o)
		return;
	cJSON_AddStringToObject(o, "version", ROASTOP_VERSION);
	add_string_if(o, "run_id", r->run_id);
	add_string_if(o, "run_name", r->name);
	add_string_if(o, "processor", r->processor);
	add_string_if(o, "dask_version", r->dask_version);
	add_string_if(o, "scheduler_id", r->scheduler_id);
	cJSON_AddBoolToObject(o, "run_ended", r->ended);
	add_sources(o, m, r);
	add_counts(o, r);
}

cJSON *metrics_to_json(const struct metrics *m, const struct run *r)
{
	cJSON *obj = cJSON_CreateObject();
	if (!obj)
		return NULL;
	add_keys(obj, m, scalar_keys, sizeof(scalar_keys) / sizeof(scalar_keys[0]));
	add_per_dataset(obj, r, m);
	add_files(obj, r);
	add_keys(obj, m, branch_keys, sizeof(branch_keys) / sizeof(branch_keys[0]));
	add_keys(obj, m, extra_keys, sizeof(extra_keys) / sizeof(extra_keys[0]));
	add_section_summary(obj, r);
	cJSON_AddNullToObject(obj, "tracking_data");
	add_roastop(obj, m, r);
	return obj;
}
