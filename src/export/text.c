/* Summary tables. Each table is a title and (label, value) rows; values
 * are formatted by format.c from a struct metrics and nothing else. */
#include "roastop/report_text.h"

#include <stdio.h>

#include "roastop/format.h"

#define LABEL_W 34

static optnum scale_pct(optnum v)
{
	return v.valid ? optnum_of(v.value * 100.0) : v;
}

static void title(struct strbuf *o, const char *t)
{
	strbuf_appendf(o, "\n%s\n", t);
	for (const char *p = t; *p; p++)
		strbuf_puts(o, "-");
	strbuf_puts(o, "\n");
}

static void row(struct strbuf *o, const char *label, const char *value)
{
	strbuf_appendf(o, "  %-*s %s\n", LABEL_W, label, value);
}

static void throughput(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN], b[FMT_LEN], line[2 * FMT_LEN];
	title(o, "Throughput Metrics");
	snprintf(line, sizeof(line), "%s (%s)", format_num(a, m->data_rate_gbps, "%.3f Gbps"),
		 format_num(b, m->data_rate_mb_per_s, "%.1f MB/s"));
	row(o, "Data Rate", line);
	row(o, "Total Bytes Read (Coffea)", format_bytes(a, m->total_bytes_read));
	row(o, "Memory Read (Dask)", format_bytes(a, m->total_bytes_memory_read));
}

static void events(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	title(o, "Event Processing Metrics");
	row(o, "Total Events", format_count(a, m->total_events));
	row(o, "Event Rate (Elapsed Time)", format_num(a, m->event_rate_elapsed_khz, "%.2f kHz"));
	row(o, "Event Rate (Total CPU)", format_num(a, m->event_rate_cpu_total_khz, "%.2f kHz"));
	row(o, "Event Rate (Core-Averaged)", format_num(a, m->event_rate_core_khz, "%.3f kHz/core"));
	row(o, "Efficiency Ratio", format_num(a, m->efficiency_ratio, "%.3f"));
	if (m->expected_events.valid)
		row(o, "Progress", format_num(a, m->progress_percent, "%.1f %%"));
}

static void resources(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	title(o, "Resource Utilization");
	row(o, "Workers (Time-Averaged)", format_num(a, m->avg_workers, "%.2f"));
	row(o, "Peak Workers", format_num(a, m->peak_workers, "%.0f"));
	row(o, "Cores per Worker", format_num(a, m->cores_per_worker, "%.2f"));
	row(o, "Total Cores (Time-Averaged)", format_num(a, m->total_cores, "%.1f"));
	row(o, "Core Efficiency", format_num(a, scale_pct(m->core_efficiency), "%.1f %%"));
	row(o, "Speedup Factor", format_num(a, m->speedup_factor, "%.1fx"));
	row(o, "Peak Memory (per worker)", format_bytes(a, m->peak_memory_bytes));
	row(o, "Avg Memory (per worker)", format_bytes(a, m->avg_memory_per_worker_bytes));
	row(o, "Memory Utilization (mean)", format_num(a, m->memory_utilization_mean_percent, "%.1f %%"));
	row(o, "Memory Utilization (max)", format_num(a, m->memory_utilization_max_percent, "%.1f %%"));
	row(o, "CPU Utilization (mean)", format_num(a, m->cpu_utilization_mean_percent, "%.1f %%"));
}

static void timing(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	title(o, "Timing Breakdown");
	row(o, "Elapsed Time", format_duration(a, m->elapsed_time_seconds));
	row(o, "Total CPU Time", format_duration(a, m->total_cpu_time));
	row(o, "Number of Chunks", format_count(a, m->num_chunks));
	row(o, "Avg CPU Time/Chunk", format_duration(a, m->avg_cpu_time_per_chunk));
}

static void fine(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	title(o, m->fine_from_span ? "Fine Metrics (Dask span)" : "Fine Metrics (Dask cluster counters)");
	if (!m->has_fine) {
		row(o, "Fine metrics", "n/a (none received)");
		return;
	}
	row(o, "Processor CPU Time", format_duration(a, m->processor_cpu_time_seconds));
	row(o, "Processor I/O & Waiting Time", format_duration(a, m->processor_io_wait_time_seconds));
	row(o, "  CPU %", format_num(a, m->processor_cpu_percent, "%.1f %%"));
	row(o, "  I/O & Wait %", format_num(a, m->processor_io_wait_percent, "%.1f %%"));
	row(o, "Dask Overhead CPU Time", format_duration(a, m->overhead_cpu_time_seconds));
	row(o, "Dask Overhead I/O & Waiting Time", format_duration(a, m->overhead_io_wait_time_seconds));
	row(o, "I/O Overhead (of core time)", format_num(a, m->io_overhead_pct, "%.1f %%"));
	row(o, "Disk Read", format_bytes(a, m->disk_read_bytes));
	row(o, "Disk Write", format_bytes(a, m->disk_write_bytes));
	row(o, "Compression Overhead", format_duration(a, m->total_compression_overhead_seconds));
	row(o, "  Compress", format_duration(a, m->compression_time_seconds));
	row(o, "  Decompress", format_duration(a, m->decompression_time_seconds));
	row(o, "Serialization Overhead", format_duration(a, m->total_serialization_overhead_seconds));
	row(o, "  Serialize", format_duration(a, m->serialization_time_seconds));
	row(o, "  Deserialize", format_duration(a, m->deserialization_time_seconds));
}

static void datasets(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], e[FMT_LEN], line[5 * FMT_LEN];
	struct dataset_metrics d;
	if (r->datasets.count == 0)
		return;
	strbuf_puts(o, "  Per-Dataset Breakdown\n");
	for (size_t i = 0; metrics_dataset(r, m, i, &d); i++) {
		snprintf(line, sizeof(line), "%s chunks, %s events, mean %s, p99 %s",
			 format_count(a, optnum_of((double)d.num_chunks)),
			 format_count(b, optnum_of(d.total_events)),
			 format_duration(c, d.mean_duration), format_duration(e, d.p99_duration));
		strbuf_appendf(o, "    %-*s %s", LABEL_W - 2, d.name, line);
		if (d.num_failed)
			strbuf_appendf(o, ", %llu failed", (unsigned long long)d.num_failed);
		strbuf_puts(o, "\n");
	}
}

static void sections(struct strbuf *o, const struct run *r)
{
	char a[FMT_LEN], line[2 * FMT_LEN];
	if (r->sec_time.count == 0)
		return;
	strbuf_puts(o, "  Section Timing (track_time)\n");
	for (size_t i = 0; i < r->sec_time.count; i++) {
		const struct section_agg *s = strmap_val_at(&r->sec_time, i);
		snprintf(line, sizeof(line), "%s (%llux)", format_duration(a, stats_mean(&s->s)),
			 (unsigned long long)s->s.n);
		strbuf_appendf(o, "    %-*s %s\n", LABEL_W - 2, strmap_key_at(&r->sec_time, i), line);
	}
}

static void chunks(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	char a[FMT_LEN];
	title(o, "Chunk Metrics");
	row(o, "Total Chunks", format_count(a, m->num_chunks));
	row(o, "  Successful", format_count(a, m->num_successful_chunks));
	row(o, "  Failed", format_count(a, m->num_failed_chunks));
	row(o, "Mean Chunk Time", format_duration(a, m->chunk_duration_mean));
	row(o, "  Min", format_duration(a, m->chunk_duration_min));
	row(o, "  p50", format_duration(a, m->chunk_duration_p50));
	row(o, "  p90", format_duration(a, m->chunk_duration_p90));
	row(o, "  p99", format_duration(a, m->chunk_duration_p99));
	row(o, "  Max", format_duration(a, m->chunk_duration_max));
	row(o, "  Std Dev", format_duration(a, m->chunk_duration_std));
	row(o, "Mean Memory Delta", format_num(a, m->chunk_mem_delta_mean_mb, "%.1f MB"));
	row(o, "Mean Events/Chunk", format_num(a, m->chunk_events_mean, "%.0f"));
	row(o, "Branches Read", format_count(a, m->total_branches_read));
	row(o, "Avg Bytes Read % (per file)", format_num(a, m->avg_bytes_read_percent, "%.2f %%"));
	datasets(o, m, r);
	sections(o, r);
}

static void header(struct strbuf *o, const struct run *r)
{
	strbuf_appendf(o, "roastop %s summary", ROASTOP_VERSION);
	if (r->name[0] || r->run_id[0])
		strbuf_appendf(o, " - run %s", r->name[0] ? r->name : r->run_id);
	if (r->processor[0])
		strbuf_appendf(o, " (%s)", r->processor);
	strbuf_puts(o, "\n");
}

void text_summary(const struct metrics *m, const struct run *r, struct strbuf *out)
{
	header(out, r);
	throughput(out, m);
	events(out, m);
	resources(out, m);
	timing(out, m);
	fine(out, m);
	chunks(out, m, r);
}
