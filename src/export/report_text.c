/* Summary tables in the spirit of roastcoffea's print_summary. Each table is
 * a title and (label, value) rows; every value comes from a struct metrics
 * (or a per-dataset / per-section aggregate) through format.c, so the
 * screen, summary.txt and metrics.json agree. */
#include "roastop/report_text.h"

#include <stdio.h>
#include <string.h>

#include "roastop/diagnosis.h"
#include "roastop/format.h"
#include "roastop/previous.h"
#include "roastop/identity.h"
#include "roastop/metrics_tasks.h"
#include "roastop/strutil.h"

#define LABEL_W 34
#define NAME_W 28 /* dataset and section names in the sub-tables */
#define TOP_SECTIONS 10

static optnum times100(optnum v)
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

/* A value followed by where it came from, e.g. "4,200 (coffea report)". */
static void row_src(struct strbuf *o, const char *label, const char *value, enum total_source s)
{
	static const char *const from[] = { "", " (coffea report)", " (chunk records)" };
	char line[FMT_LEN + 24];
	snprintf(line, sizeof(line), "%s%s", value, s < ROASTOP_ARRAY_LEN(from) ? from[s] : "");
	row(o, label, line);
}

static void throughput(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN], b[FMT_LEN], line[2 * FMT_LEN + 4];
	title(o, "Throughput Metrics");
	snprintf(line, sizeof(line), "%s (%s)", format_rate(a, m->data_rate_gbps, 1e9, "bps"),
		 format_rate(b, m->data_rate_mb_per_s, 1e6, "B/s"));
	row(o, "Data Rate", m->data_rate_gbps.valid ? line : "n/a");
	row_src(o, "Total Bytes Read (Coffea)", format_bytes(a, m->total_bytes_read), m->src_bytes);
	row(o, "Memory Read (Dask)", format_bytes(a, m->total_bytes_memory_read));
}

static void events(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	title(o, "Event Processing Metrics");
	row_src(o, "Total Events", format_count(a, m->total_events), m->src_events);
	row(o, "Event Rate (Elapsed Time)", format_rate(a, m->event_rate_elapsed_khz, 1e3, "Hz"));
	row(o, "Event Rate (Total CPU)", format_rate(a, m->event_rate_cpu_total_khz, 1e3, "Hz"));
	row(o, "Event Rate (Core-Averaged)", format_rate(a, m->event_rate_core_khz, 1e3, "Hz/core"));
	row(o, "Efficiency Ratio", format_num(a, times100(m->efficiency_ratio), "%.1f %%"));
	if (m->expected_events.valid) {
		row(o, "Expected Events", format_count(a, m->expected_events));
		row(o, "Progress", format_num(a, m->progress_percent, "%.1f %%"));
	}
}

static void resources(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	title(o, "Resource Utilization");
	row(o, "Workers (Time-Averaged)", format_num(a, m->avg_workers, "%.2f"));
	row(o, "Peak Workers", format_num(a, m->peak_workers, "%.0f"));
	row(o, "Workers (Latest Sample)", format_num(a, m->workers_now, "%.0f"));
	row(o, "Cores per Worker", format_num(a, m->cores_per_worker, "%.2f"));
	row(o, "Total Cores (Time-Averaged)", format_num(a, m->total_cores, "%.1f"));
	row(o, "Core Efficiency", format_num(a, times100(m->core_efficiency), "%.1f %%"));
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
	row_src(o, "Total CPU Time", format_duration(a, m->total_cpu_time), m->src_cpu);
	row_src(o, "Number of Chunks", format_count(a, m->num_chunks), m->src_chunks);
	row(o, "Avg CPU Time/Chunk", format_duration(a, m->avg_cpu_time_per_chunk));
	row(o, "Chunks per Second", format_si(a, m->chunks_per_second, NULL));
}

static void fine_overhead(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	if (!m->processor_known) {
		row(o, "Dask Overhead", "n/a (processor name unknown: all tasks counted above)");
		return;
	}
	row(o, "Dask Overhead CPU Time", format_duration(a, m->overhead_cpu_time_seconds));
	row(o, "Dask Overhead I/O & Waiting Time",
	    format_duration(a, m->overhead_io_wait_time_seconds));
}

static void fine(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	if (!m->has_fine) {
		title(o, "Fine Metrics");
		row(o, "Fine metrics", "n/a (no Dask fine metrics received)");
		return;
	}
	title(o, m->fine_from_span ? "Fine Metrics (Dask span)" : "Fine Metrics (Dask cluster counters)");
	row(o, "Processor CPU Time", format_duration(a, m->processor_cpu_time_seconds));
	row(o, "Processor I/O & Waiting Time", format_duration(a, m->processor_io_wait_time_seconds));
	row(o, "  CPU %", format_num(a, m->processor_cpu_percent, "%.1f %%"));
	row(o, "  I/O & Wait %", format_num(a, m->processor_io_wait_percent, "%.1f %%"));
	fine_overhead(o, m);
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

static void name_cell(struct strbuf *o, const char *name)
{
	char cut[NAME_W + 1];
	strbuf_appendf(o, "    %-*s", NAME_W, strutil_copy_line(cut, sizeof(cut), name));
}

static void datasets(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], e[FMT_LEN];
	struct dataset_metrics d;
	if (r->datasets.count == 0)
		return;
	strbuf_appendf(o, "\n  Per-Dataset Breakdown\n    %-*s %8s %7s %14s %10s %10s\n", NAME_W,
		       "dataset", "chunks", "failed", "events", "mean", "p99");
	for (size_t i = 0; metrics_dataset(r, m, i, &d); i++) {
		name_cell(o, d.name);
		strbuf_appendf(o, " %8s %7llu %14s %10s %10s\n",
			       format_count(a, optnum_of((double)d.num_chunks)),
			       (unsigned long long)d.num_failed,
			       format_count(b, optnum_of(d.total_events)),
			       format_duration(c, d.mean_duration), format_duration(e, d.p99_duration));
	}
}

/* Indices of a section map ordered by total, largest first (at most 256). */
static size_t sections_by_total(const struct strmap *map, size_t *idx, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < map->count && n < cap; i++) {
		double v = ((const struct section_agg *)strmap_val_at(map, i))->s.sum;
		size_t j = n++;
		while (j > 0 && ((const struct section_agg *)strmap_val_at(map, idx[j - 1]))->s.sum < v) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	return n;
}

/* Up to TOP_SECTIONS rows by total (roastcoffea shows its top 5 by time). */
static void section_table(struct strbuf *o, const struct strmap *map, const char *heading,
			  enum format_section u)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
	size_t idx[RUN_MAX_SECTIONS];
	if (map->count == 0)
		return;
	size_t n = sections_by_total(map, idx, ROASTOP_ARRAY_LEN(idx));
	const char *third = u == FORMAT_SECTION_MEM ? "min" : "total";
	strbuf_appendf(o, "\n  %s\n    %-*s %8s %10s %10s %10s\n", heading, NAME_W, "section",
		       "count", "mean", third, "max");
	for (size_t k = 0; k < n && k < TOP_SECTIONS; k++) {
		const struct stats *s = &((const struct section_agg *)strmap_val_at(map, idx[k]))->s;
		optnum v3 = u == FORMAT_SECTION_MEM ? stats_min(s) : optnum_of(s->sum);
		name_cell(o, strmap_key_at(map, idx[k]));
		strbuf_appendf(o, " %8llu %10s %10s %10s\n", (unsigned long long)s->n,
			       format_section(a, u, stats_mean(s)), format_section(b, u, v3),
			       format_section(c, u, stats_max(s)));
	}
	if (map->count > TOP_SECTIONS)
		strbuf_appendf(o, "    (%zu more in metrics.json)\n", map->count - TOP_SECTIONS);
}

/* A count per name (the chunks failed by exception type, the retried
 * attempts by type: retries.h), each under its label; a name whose count is
 * 0 (failed chunks that all recovered on a retry) is left out. */
static void counts(struct strbuf *o, const struct strmap *map)
{
	for (size_t i = 0; i < map->count; i++) {
		uint64_t n = *(const uint64_t *)strmap_val_at(map, i);
		char name[LABEL_W - 3];
		if (n)
			strbuf_appendf(o, "      %-*s %llu\n", LABEL_W - 4,
				       strutil_copy_line(name, sizeof(name), strmap_key_at(map, i)),
				       (unsigned long long)n);
	}
}

static void chunk_stats(struct strbuf *o, const struct metrics *m)
{
	char a[FMT_LEN];
	row(o, "Mean Chunk Time", format_duration(a, m->chunk_duration_mean));
	row(o, "  Min", format_duration(a, m->chunk_duration_min));
	row(o, "  p50", format_duration(a, m->chunk_duration_p50));
	row(o, "  p90", format_duration(a, m->chunk_duration_p90));
	row(o, "  p99", format_duration(a, m->chunk_duration_p99));
	row(o, "  Max", format_duration(a, m->chunk_duration_max));
	row(o, "  Std Dev", format_duration(a, m->chunk_duration_std));
	row(o, "Mean Memory Delta", format_mib(a, m->chunk_mem_delta_mean_mb));
	row(o, "  Min", format_mib(a, m->chunk_mem_delta_min_mb));
	row(o, "  Max", format_mib(a, m->chunk_mem_delta_max_mb));
	row(o, "Mean Events/Chunk", format_count(a, m->chunk_events_mean));
	row(o, "  Min", format_count(a, m->chunk_events_min));
	row(o, "  Max", format_count(a, m->chunk_events_max));
	row(o, "Branches Read", format_count(a, m->total_branches_read));
	row(o, "Avg Branches Read % (per file)", format_num(a, m->avg_branches_read_percent, "%.2f %%"));
	row(o, "Avg Bytes Read % (per file)", format_num(a, m->avg_bytes_read_percent, "%.2f %%"));
}

#define TEXT_INFLIGHT_LISTED 5

/* The chunks still running (at the run's end: those it left) and those
 * lost with their worker; nothing without chunk starts. */
static void inflight(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	if (!m->inflight_running.valid)
		return;
	char a[FMT_LEN], name[INFLIGHT_FILE_LEN], worker[INFLIGHT_NAME_LEN];
	row(o, r->ended ? "Chunks Running at the End" : "Chunks Running",
	    format_count(a, m->inflight_running));
	const struct inflight_chunk *c[TEXT_INFLIGHT_LISTED];
	size_t n = inflight_oldest(&r->inflight, c, TEXT_INFLIGHT_LISTED);
	for (size_t i = 0; i < n; i++) {
		strutil_copy_line(name, sizeof(name), c[i]->file[0] ? c[i]->file : "n/a");
		strutil_copy_line(worker, sizeof(worker), c[i]->worker[0] ? c[i]->worker : "n/a");
		strbuf_appendf(o, "      %s%s %s on %s\n",
			       format_duration(a, optnum_of(metrics_inflight_age(m, c[i]))),
			       metrics_straggler(m, c[i]) ? " (straggler)" : "", name, worker);
	}
	row(o, "Lost with Their Worker", format_count(a, m->inflight_lost));
}

static void chunks(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	char a[FMT_LEN];
	title(o, "Chunk Metrics");
	inflight(o, m, r); /* also when none ended: all of them stuck */
	if (r->n_chunks == 0) {
		row(o, "Chunk records", "n/a (none received)");
		return;
	}
	row(o, "Total Chunks", format_count(a, m->num_chunks));
	row(o, "  Successful", format_count(a, m->num_successful_chunks));
	row(o, "  Failed", format_count(a, m->num_failed_chunks));
	counts(o, &r->errors);
	row(o, "Retries", format_count(a, m->chunk_retries));
	counts(o, &r->retries.by_type);
	chunk_stats(o, m);
	datasets(o, m, r);
	section_table(o, &r->sec_time, "Section Timing (track_time)", FORMAT_SECTION_TIME);
	section_table(o, &r->sec_mem, "Section Memory (track_memory)", FORMAT_SECTION_MEM);
	section_table(o, &r->sec_bytes, "Section Bytes (track_bytes)", FORMAT_SECTION_BYTES);
}

static void header(struct strbuf *o, const struct run *r)
{
	char name[RUN_NAME_LEN];
	strbuf_appendf(o, "roastop %s summary", ROASTOP_VERSION);
	if (r->name[0] || r->run_id[0])
		strbuf_appendf(o, " - run %s",
			       strutil_copy_line(name, sizeof(name), r->name[0] ? r->name : r->run_id));
	if (r->processor[0])
		strbuf_appendf(o, " (%s)", strutil_copy_line(name, sizeof(name), r->processor));
	strbuf_puts(o, "\n");
	char reason[RUN_REASON_LEN];
	if (r->ended)
		strbuf_appendf(o, "run ended: %s%s%s\n", run_status_name(r->status),
			       r->status_reason[0] ? " - " : "",
			       strutil_copy_line(reason, sizeof(reason), r->status_reason));
	else if (r->started)
		strbuf_puts(o, "run still in progress (no run-end received)\n");
	else
		strbuf_puts(o, r->begun ? "no run-start received (no collector): an implicit run, from "
					  "its first chunk\n"
					: "no run-start received: times are from roastop's first event\n");
}

/* What the numbers mean for this run (docs/diagnosis.md): each finding's
 * title, evidence and suggestion; "No finding" when none holds. */
static void findings(struct strbuf *o, const struct findings *fs)
{
	if (!fs)
		return;
	title(o, "Findings");
	if (fs->n == 0)
		strbuf_puts(o, "No finding: no rule of docs/diagnosis.md holds for this run.\n");
	char t[DIAG_TITLE_LEN], e[DIAG_EVIDENCE_LEN], s[DIAG_SUGGESTION_LEN];
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->f[i];
		strbuf_appendf(o, "[%s] %s (%s)\n", diagnosis_severity_name(f->severity),
			       strutil_copy_line(t, sizeof(t), f->title), diagnosis_id_name(f->id));
		strbuf_appendf(o, "    %s\n", strutil_copy_line(e, sizeof(e), f->evidence));
		strbuf_appendf(o, "    -> %s\n", strutil_copy_line(s, sizeof(s), f->suggestion));
	}
}

/* What makes another run the same analysis (identity.h): one line. */
static void analysis(struct strbuf *o, const struct metrics *m, const struct run *r)
{
	struct identity id;
	char key[17], ev[FMT_LEN];
	identity_of_run(r, m, &id);
	identity_key(&id, key);
	strbuf_appendf(o, "analysis %s: %u datasets, %u files, chunk size %s events\n", key,
		       id.n_datasets, id.n_files,
		       format_count(ev, id.chunk_events > 0 ? optnum_of(id.chunk_events)
							    : optnum_none()));
}

void text_summary(const struct metrics *m, const struct run *r, const struct findings *fs,
		  struct strbuf *out)
{
	header(out, r);
	analysis(out, m, r);
	findings(out, fs);
	throughput(out, m);
	events(out, m);
	resources(out, m);
	timing(out, m);
	fine(out, m);
	chunks(out, m, r);
	strbuf_puts(out, "\nUnits: sizes in KiB, MiB, GiB (powers of 1024, as Dask); rates in"
			 " decimal\nunits (1 kHz = 1,000 events/s, 1 MB/s = 10^6 bytes/s,"
			 " 1 Gbps = 10^9 bits/s).\n");
}

void text_run_summary(const struct metrics *m, const struct run *r, const struct findings *fs,
		      const struct metrics_extra_input *extra, struct strbuf *out)
{
	text_summary(m, r, fs, out);
	if (r && extra && extra->previous)
		previous_text(out, extra->previous, r, m);
	if (r && extra && extra->tasks)
		metrics_tasks_text(&r->tasks, &m->tasks, extra->tasks_fed ? &extra->tasks_feed : NULL,
				   out);
}

static void run_line(struct strbuf *o, size_t i, const struct session_run *row)
{
	char name[RUN_NAME_LEN], start[FMT_LEN], el[FMT_LEN], ch[FMT_LEN], ev[FMT_LEN], rate[FMT_LEN];
	const char *label = session_run_label(row);
	strbuf_appendf(o, "  %3zu  %-20.20s  %8s  %9s  %-10s  %7s  %11s  %10s%s\n", i + 1,
		       strutil_copy_line(name, sizeof(name), label),
		       format_clock(start, row->fig.t_start),
		       format_duration(el, row->fig.elapsed), run_status_name(row->status),
		       format_count(ch, row->fig.chunks), format_count(ev, row->fig.events),
		       format_rate(rate, row->fig.event_rate_hz, 1.0, "Hz"),
		       row->run ? "" : "  (summary only)");
}

void text_runs(const struct session *s, struct strbuf *out)
{
	title(out, "Runs of this session");
	strbuf_appendf(out, "  %3s  %-20s  %8s  %9s  %-10s  %7s  %11s  %10s\n", "#", "name", "start",
		       "duration", "status", "chunks", "events", "rate");
	for (size_t i = 0; i < s->n_rows; i++)
		run_line(out, i, &s->rows[i]);
	if (s->rows_dropped)
		strbuf_appendf(out, "  (%llu older runs not listed: over %d)\n",
			       (unsigned long long)s->rows_dropped, SESSION_MAX_RUNS);
}
