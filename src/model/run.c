/* The run model. run_apply() is the only entry point that changes state;
 * each event kind has one apply function. Everything is bounded: maps have
 * caps (overflow is counted), timelines have fixed capacity. */
#include "roastop/run.h"
#include "roastop/beats.h"
#include "roastop/strutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINE_SEP '\x1f'

static void run_log(struct run *r, double t, enum log_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void run_log(struct run *r, double t, enum log_kind kind, const char *fmt, ...)
{
	struct log_line *l = &r->log[r->log_count % RUN_LOG_LINES];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->text, sizeof(l->text), fmt, ap);
	va_end(ap);
	l->t = t;
	l->kind = kind;
	r->log_count++;
}

void run_note(struct run *r, double t, enum log_kind kind, const char *text)
{
	run_log(r, t, kind, "%s", text);
}

const struct log_line *run_log_get(const struct run *r, size_t i)
{
	if (i >= r->log_count || i >= RUN_LOG_LINES)
		return NULL;
	return &r->log[(r->log_count - 1 - i) % RUN_LOG_LINES];
}

/* ---- bounded tables ------------------------------------------------- */

#define KEY_HASH_LEN 17 /* "~" and 16 hex digits */

/* name as a table key of at most max bytes: a longer one becomes its first
 * bytes (cut on a UTF-8 boundary), "~" and its 64-bit hash, so that distinct
 * long names stay distinct keys and each costs a bounded amount. buf holds
 * max + 1 bytes. */
static const char *run_key(struct run *r, double t, const char *name, size_t max, char *buf)
{
	if (!name || strnlen(name, max + 1) <= max)
		return name;
	strutil_copy(buf, max - KEY_HASH_LEN + 1, name);
	size_t n = strlen(buf);
	snprintf(buf + n, max + 1 - n, "~%016llx",
		 (unsigned long long)strmap_hash(name, strlen(name)));
	if (r->keys_shortened++ == 0)
		run_log(r, t, LOG_WARN, "a name over %zu bytes kept as its prefix and hash "
			"(counted in roastop.keys_shortened)", max);
	return buf;
}

/* A table at its cap: counted, and said once in the log. */
static void run_overflow(struct run *r, double t, uint64_t *count, const char *what, size_t cap)
{
	if ((*count)++ == 0)
		run_log(r, t, LOG_WARN, "%s table full at %zu: more are counted in "
			"roastop.overflow.%s", what, cap, what);
}

static const size_t timeline_offsets[] = {
	offsetof(struct run, tl_events),	offsetof(struct run, tl_bytes),
	offsetof(struct run, tl_workers),	offsetof(struct run, tl_threads),
	offsetof(struct run, tl_mem_used),	offsetof(struct run, tl_mem_limit),
	offsetof(struct run, tl_mem_worst_pct), offsetof(struct run, tl_cpu),
	offsetof(struct run, tl_executing),	offsetof(struct run, tl_tasks_done),
};

static struct timeline *timeline_at(struct run *r, size_t i)
{
	return (struct timeline *)((char *)r + timeline_offsets[i]);
}

int run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	stats_init(&r->chunk_duration);
	stats_init(&r->chunk_events);
	stats_init(&r->chunk_mem_delta);
	stats_init(&r->chunk_cpu_time);
	stats_init(&r->chunk_bytes_read);
	stats_init(&r->worker_mem_bytes);
	stats_init(&r->worker_mem_pct);
	stats_init(&r->worker_cpu_pct);
	hist_init(&r->duration_hist);
	hist_init(&r->events_hist);
	topk_init(&r->slowest);
	inflight_init(&r->inflight);
	rawchunks_init(&r->raw);
	tasks_init(&r->tasks);
	strmap_init(&r->datasets, sizeof(struct dataset_agg), RUN_MAX_DATASETS);
	strmap_init(&r->files, sizeof(struct file_agg), RUN_MAX_FILES);
	strmap_init(&r->sec_time, sizeof(struct section_agg), RUN_MAX_SECTIONS);
	strmap_init(&r->sec_mem, sizeof(struct section_agg), RUN_MAX_SECTIONS);
	strmap_init(&r->sec_bytes, sizeof(struct section_agg), RUN_MAX_SECTIONS);
	strmap_init(&r->branches, 1, RUN_MAX_BRANCHES);
	strmap_init(&r->errors, sizeof(uint64_t), RUN_MAX_SECTIONS + 1); /* + "(other)" */
	strmap_init(&r->workers, sizeof(struct worker_agg), RUN_MAX_WORKERS);
	strmap_init(&r->fine_cluster, sizeof(struct fine_agg), RUN_MAX_FINE_ROWS);
	strmap_init(&r->fine_span, sizeof(struct fine_agg), RUN_MAX_FINE_ROWS);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(timeline_offsets); i++) {
		if (timeline_init(timeline_at(r, i), RUN_TIMELINE_POINTS) != 0) {
			run_destroy(r);
			return -1;
		}
	}
	return 0;
}

void run_set_pool(struct run *r, struct strmap_pool *pool)
{
	struct strmap *plain[] = { &r->files,	 &r->sec_time, &r->sec_mem,	 &r->sec_bytes,
				   &r->branches, &r->errors,   &r->fine_cluster, &r->fine_span };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(plain); i++)
		strmap_set_pool(plain[i], pool, 0);
	strmap_set_pool(&r->datasets, pool, sizeof(struct hist));
	strmap_set_pool(&r->workers, pool, 0); /* the history is inside the value */
	inflight_set_pool(&r->inflight, pool);
	rawchunks_set_pool(&r->raw, pool);
	tasks_set_pool(&r->tasks, pool);
}

void run_destroy(struct run *r)
{
	inflight_free(&r->inflight);
	rawchunks_free(&r->raw);
	tasks_free(&r->tasks);
	for (size_t i = 0; i < r->datasets.count; i++) {
		struct dataset_agg *d = strmap_val_at(&r->datasets, i);
		free(d->duration_hist);
	}
	struct strmap *maps[] = { &r->datasets, &r->files,	 &r->sec_time,	   &r->sec_mem,
				  &r->sec_bytes, &r->branches,	 &r->errors,	   &r->workers,
				  &r->fine_cluster, &r->fine_span };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(maps); i++)
		strmap_free(maps[i]);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(timeline_offsets); i++)
		timeline_free(timeline_at(r, i));
}

/* ---- chunks ---------------------------------------------------------- */

static optnum chunk_mem_delta(const struct ev_chunk *c)
{
	if (c->mem_delta_mb.valid)
		return c->mem_delta_mb;
	if (c->mem_before_mb.valid && c->mem_after_mb.valid)
		return optnum_of(c->mem_after_mb.value - c->mem_before_mb.value);
	return optnum_none();
}

static struct dataset_agg *dataset_get(struct run *r, double t, const char *name)
{
	bool added = false;
	char buf[RUN_KEY_MAX + 1];
	const char *key = run_key(r, t, name ? name : "unknown", RUN_KEY_MAX, buf);
	struct dataset_agg *d = strmap_upsert_hint(&r->datasets, key, &added, &r->hint_dataset);
	if (!d)
		run_overflow(r, t, &r->overflow_datasets, "datasets", RUN_MAX_DATASETS);
	return d;
}

/* Error types past the cap add up under "(other)". */
static void error_count(struct run *r, double t, const char *type)
{
	bool added = false;
	char buf[RUN_KEY_MAX + 1];
	const char *key = run_key(r, t, type, RUN_KEY_MAX, buf);
	if (r->errors.count >= RUN_MAX_SECTIONS && !strmap_get(&r->errors, key)) {
		run_overflow(r, t, &r->overflow_errors, "errors", RUN_MAX_SECTIONS);
		key = "(other)";
	}
	uint64_t *n = strmap_upsert(&r->errors, key, &added);
	if (n)
		(*n)++;
}

static void chunk_failed(struct run *r, double t, const struct ev_chunk *c)
{
	r->n_failed++;
	struct dataset_agg *d = dataset_get(r, t, c->dataset);
	if (d)
		d->n_failed++;
	error_count(r, t, c->error);
	failed_add(&r->failed, t, c);
	run_log(r, t, LOG_ERROR, "chunk failed: %s on %s (%s)", c->error,
		c->worker ? c->worker : "?", c->file ? c->file : "?");
}

static void dataset_add(struct run *r, double t, const struct ev_chunk *c, double dur)
{
	struct dataset_agg *d = dataset_get(r, t, c->dataset);
	if (!d)
		return;
	d->n_chunks++;
	d->total_duration += dur;
	if (c->num_events.valid)
		d->total_events += c->num_events.value;
	if (c->bytes_read.valid)
		d->total_bytes_read += c->bytes_read.value;
	stats_add(&d->duration, dur);
	if (!d->duration_hist) {
		d->duration_hist = malloc(sizeof(*d->duration_hist));
		if (d->duration_hist)
			hist_init(d->duration_hist);
	}
	if (d->duration_hist)
		hist_add(d->duration_hist, dur);
}

static struct file_agg *file_get(struct run *r, double t, const char *name)
{
	bool added = false;
	char buf[RUN_KEY_MAX + 1];
	struct file_agg *f = strmap_upsert(&r->files, run_key(r, t, name, RUN_KEY_MAX, buf), &added);
	if (!f)
		run_overflow(r, t, &r->overflow_files, "files", RUN_MAX_FILES);
	return f;
}

/* Per-file read metrics come from the first chunk of each file; file
 * metadata from the first chunk that carries it (roastcoffea dedups both). */
static void file_add(struct run *r, double t, const struct ev_chunk *c, double dur)
{
	if (c->has_file_metadata && c->file_metadata.filename) {
		struct file_agg *m = file_get(r, t, c->file_metadata.filename);
		if (m && !m->has_meta) {
			m->has_meta = true;
			m->compression_ratio = c->file_metadata.compression_ratio;
			m->total_branches = c->file_metadata.total_branches;
			m->total_tree_bytes = c->file_metadata.total_tree_bytes;
		}
	}
	if (!c->file)
		return;
	struct file_agg *f = file_get(r, t, c->file);
	if (!f)
		return;
	f->n_chunks++;
	f->total_duration += dur;
	if (c->num_events.valid)
		f->total_events += c->num_events.value;
	if (!f->dataset[0])
		strutil_copy(f->dataset, sizeof(f->dataset), c->dataset);
	if (!f->has_first) {
		f->has_first = true;
		f->accessed_bytes = c->accessed_bytes;
		f->bytes_read_percent = c->bytes_read_percent;
		f->num_branches_accessed = c->num_branches_accessed;
		f->branches_read_percent = c->branches_read_percent;
	}
}

static void sections_add(struct run *r, double t, struct strmap *m, const struct kv_num *kv,
			 size_t n, size_t hints[RUN_SECTION_HINTS])
{
	for (size_t i = 0; i < n; i++) {
		bool added = false;
		char buf[RUN_KEY_MAX + 1];
		const char *key = run_key(r, t, kv[i].key, RUN_KEY_MAX, buf);
		struct section_agg *s = strmap_upsert_hint(m, key, &added, &hints[i % RUN_SECTION_HINTS]);
		if (!s) {
			run_overflow(r, t, &r->overflow_sections, "sections", RUN_MAX_SECTIONS);
			continue;
		}
		if (added)
			stats_init(&s->s);
		stats_add(&s->s, kv[i].value);
	}
}

/* The names' strmap hashes folded in order: strmap hashes a word at a time,
 * where a byte loop here was a tenth of applying a chunk. */
static uint64_t branch_list_hash(const struct ev_chunk *c)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < c->n_branches; i++) {
		const char *name = c->accessed_branches[i];
		h = (h ^ strmap_hash(name, strlen(name))) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h ^ c->n_branches;
}

/* Chunks of one analysis nearly always read the same branch list: remember
 * the last few lists by fingerprint and skip the per-branch inserts. */
static void branches_add(struct run *r, double t, const struct ev_chunk *c)
{
	if (c->n_branches == 0)
		return;
	uint64_t h = branch_list_hash(c);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(r->branch_lists_seen); i++)
		if (r->branch_lists_seen[i] == h)
			return;
	bool full = false;
	for (size_t i = 0; i < c->n_branches; i++) {
		bool added = false;
		char buf[RUN_KEY_MAX + 1];
		const char *key = run_key(r, t, c->accessed_branches[i], RUN_KEY_MAX, buf);
		if (!strmap_upsert(&r->branches, key, &added)) {
			run_overflow(r, t, &r->overflow_branches, "branches", RUN_MAX_BRANCHES);
			full = true;
		}
	}
	if (!full)
		r->branch_lists_seen[r->branch_lists_next++ % ROASTOP_ARRAY_LEN(r->branch_lists_seen)] = h;
}

/* What of this chunk lies outside the run window known at its arrival,
 * [run start, run end] (a bound not yet known is open): its time outside
 * it, and all of it when it arrived outside (its events were not delivered
 * within the window). */
static void chunk_window(struct run *r, double t, const struct ev_chunk *c, double dur)
{
	double d = isfinite(dur) && dur > 0 ? dur : 0;
	bool first = r->n_chunks - r->n_failed == 1; /* apply_chunk counted it */
	r->t_chunk_first = first ? t - d : fmin(r->t_chunk_first, t - d);
	r->t_chunk_last = first ? t : fmax(r->t_chunk_last, t);
	double start = r->started ? r->t_run_start : -INFINITY;
	double end = r->ended ? r->t_run_end : INFINITY;
	double overlap = fmax(0, fmin(t, end) - fmax(t - d, start));
	r->outside_time += d - fmin(d, overlap);
	if (t >= start && t <= end)
		return;
	r->n_outside++;
	r->outside_events += c->num_events.valid ? c->num_events.value : 0;
	r->outside_bytes += c->bytes_read.valid ? c->bytes_read.value : 0;
	if (r->ended && t > end)
		run_log(r, t, LOG_WARN, "chunk finished %.1f s after the run ended: counted, "
			"its events left out of the rates", t - end);
}

/* Chunks before the run-start marker belong to no window of this run. */
static void chunk_window_open(struct run *r)
{
	r->n_outside = r->n_chunks - r->n_failed;
	r->outside_events = r->chunk_events.sum;
	r->outside_bytes = r->chunk_bytes_read.sum;
	r->outside_time = r->chunk_duration.sum;
}

static void chunk_succeeded(struct run *r, double t, const struct ev_chunk *c, bool late)
{
	double dur = event_chunk_duration(c);
	stats_add(&r->chunk_duration, dur);
	hist_add(&r->duration_hist, dur);
	chunk_window(r, t, c, dur);
	if (c->num_events.valid) {
		stats_add(&r->chunk_events, c->num_events.value);
		hist_add(&r->events_hist, c->num_events.value);
	}
	optnum md = chunk_mem_delta(c);
	if (md.valid)
		stats_add(&r->chunk_mem_delta, md.value);
	if (c->cpu_time.valid)
		stats_add(&r->chunk_cpu_time, c->cpu_time.value);
	if (c->bytes_read.valid)
		stats_add(&r->chunk_bytes_read, c->bytes_read.value);
	topk_offer(&r->slowest, dur, c->file, c->dataset, c->worker, c->entry_start, c->entry_stop,
		   c->num_events);
	dataset_add(r, t, c, dur);
	file_add(r, t, c, dur);
	sections_add(r, t, &r->sec_time, c->timing, c->n_timing, r->hint_sections[0]);
	sections_add(r, t, &r->sec_mem, c->memory, c->n_memory, r->hint_sections[1]);
	sections_add(r, t, &r->sec_bytes, c->bytes, c->n_bytes, r->hint_sections[2]);
	branches_add(r, t, c);
	rawchunks_add(&r->raw, c);
	if (c->custom_json)
		r->chunks_with_custom++;
	if (late)
		return;
	timeline_push(&r->tl_events, t, r->chunk_events.sum);
	timeline_push(&r->tl_bytes, t, r->chunk_bytes_read.sum);
}

static void apply_chunk(struct run *r, double t, const struct ev_chunk *c, bool late)
{
	inflight_end(&r->inflight, c);
	r->n_chunks++;
	if (c->error)
		chunk_failed(r, t, c);
	else
		chunk_succeeded(r, t, c, late);
}

/* ---- scheduler samples ------------------------------------------------ */

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

static uint16_t worker_hist_count(double v)
{
	return isfinite(v) && v >= 0 ? (uint16_t)fmin(v, WORKER_NA - 1) : WORKER_NA;
}

static uint16_t worker_hist_max16(uint16_t a, uint16_t b)
{
	return a == WORKER_NA ? b : (b == WORKER_NA ? a : (a > b ? a : b));
}

static void worker_hist_merge(struct worker_point *into, const struct worker_point *p)
{
	into->mem = isnan(into->mem) ? p->mem : (isnan(p->mem) ? into->mem : fmaxf(into->mem, p->mem));
	into->cpu = worker_hist_max16(into->cpu, p->cpu);
	into->exec = worker_hist_max16(into->exec, p->exec);
	into->proc = worker_hist_max16(into->proc, p->proc);
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

void run_worker_hist_add(struct worker_hist *h, double t, double mem, double cpu, double exec,
			 double proc)
{
	struct worker_point p = { .mem = isfinite(mem) ? (float)mem : NAN,
				  .cpu = worker_hist_count(cpu), .exec = worker_hist_count(exec),
				  .proc = worker_hist_count(proc) };
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

static void sums_add(struct sample_sums *a, const struct worker_sample *s)
{
	if (s->nthreads.valid) {
		a->threads += s->nthreads.value;
		a->n_threads++;
	}
	if (s->memory_bytes.valid) {
		a->mem += s->memory_bytes.value;
		a->n_mem++;
	}
	if (s->memory_limit.valid && s->memory_limit.value > 0) {
		a->limit += s->memory_limit.value;
		a->n_limit++;
	}
	optnum pct = run_memory_percent(s->memory_bytes, s->memory_limit);
	if (pct.valid) {
		a->worst_pct = a->n_pct ? fmax(a->worst_pct, pct.value) : pct.value;
		a->n_pct++;
	}
	if (s->cpu_percent.valid) {
		a->cpu += s->cpu_percent.value;
		a->n_cpu++;
	}
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
	run_worker_hist_add(&w->hist, t, s->memory_bytes.valid ? s->memory_bytes.value : NAN,
			    s->cpu_percent.valid ? s->cpu_percent.value : NAN,
			    s->executing.valid ? s->executing.value : NAN,
			    s->processing.valid ? s->processing.value : NAN);
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

optnum run_cores_per_worker(const struct run *r)
{
	struct departed_agg a = r->departed;
	a.mem_avg_sum = 0;
	for (size_t i = 0; i < r->workers.count; i++)
		departed_add(&a, strmap_val_at(&r->workers, i));
	return a.n_nthreads ? optnum_of(a.nthreads_sum / (double)a.n_nthreads) : optnum_none();
}

optnum run_avg_memory_per_worker(const struct run *r)
{
	struct departed_agg a = r->departed;
	for (size_t i = 0; i < r->workers.count; i++)
		departed_add(&a, strmap_val_at(&r->workers, i));
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

static void fine_carry(struct strmap *m)
{
	for (size_t i = 0; i < m->count; i++) {
		struct fine_agg *f = strmap_val_at(m, i);
		f->carried += f->last - f->base;
		f->base = f->last = 0.0;
	}
}

/* A new scheduler counts from 0: what the old one counted is carried, and
 * the new counters are not mistaken for a baseline (the decreasing-value
 * check alone misses a counter that is already past its old value). */
static void fine_restart(struct run *r)
{
	fine_carry(&r->fine_cluster);
	fine_carry(&r->fine_span);
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
static void progress_restart(struct run *r)
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
		fine_restart(r);
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

static void apply_sample(struct run *r, double t, const struct ev_sample *s)
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
static void apply_sample_late(struct run *r, double t, const struct ev_sample *s)
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

/* ---- fine metrics ----------------------------------------------------- */

size_t run_fine_key(char *buf, size_t size, const char *context, const char *prefix,
		    const char *activity, const char *unit)
{
	int n = snprintf(buf, size, "%s%c%s%c%s%c%s", context ? context : "", FINE_SEP,
			 prefix ? prefix : "", FINE_SEP, activity ? activity : "", FINE_SEP,
			 unit ? unit : "");
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

bool run_fine_split(char *buf, const char *parts[4])
{
	parts[0] = buf;
	for (int i = 1; i < 4; i++) {
		char *sep = strchr(parts[i - 1], FINE_SEP);
		if (!sep)
			return false;
		*sep = '\0';
		parts[i] = sep + 1;
	}
	return true;
}

double run_fine_value(const struct fine_agg *f)
{
	return f->carried + f->last - f->base;
}

/* Cluster counters include activity from before roastop started: rows in
 * the first cluster snapshot become the baseline; rows that appear later
 * start from 0. A counter that goes down means the scheduler restarted:
 * what the old one counted is carried and the new one counts from 0. */
static void fine_row_apply(struct run *r, double t, struct strmap *m, const struct fine_row *row,
			   bool baseline)
{
	char key[4 * (RUN_FINE_PART_MAX + 1)], part[4][RUN_FINE_PART_MAX + 1];
	const char *in[4] = { row->context, row->prefix, row->activity, row->unit };
	for (int i = 0; i < 4; i++)
		in[i] = run_key(r, t, in[i], RUN_FINE_PART_MAX, part[i]);
	run_fine_key(key, sizeof(key), in[0], in[1], in[2], in[3]);
	bool added = false;
	struct fine_agg *f = strmap_upsert(m, key, &added);
	if (!f) {
		run_overflow(r, t, &r->overflow_fine, "fine_rows", RUN_MAX_FINE_ROWS);
		return;
	}
	if (added) {
		f->base = baseline ? row->value : 0.0;
		f->last = row->value;
		f->span = m == &r->fine_span;
		return;
	}
	if (row->value < f->last) {
		f->carried += f->last - f->base;
		f->base = 0.0;
	}
	f->last = row->value;
}

static void apply_fine(struct run *r, double t, const struct ev_fine *f)
{
	bool span = f->scope == FINE_SPAN;
	struct strmap *m = span ? &r->fine_span : &r->fine_cluster;
	bool baseline = !span && r->n_fine_cluster == 0;
	for (size_t i = 0; i < f->n_rows; i++)
		fine_row_apply(r, t, m, &f->rows[i], baseline);
	if (span)
		r->n_fine_span++;
	else
		r->n_fine_cluster++;
}

/* ---- run markers, report, status -------------------------------------- */

#define N_SAMPLE_TIMELINES 7

/* The timelines fed by scheduler samples. */
static void sample_timeline_list(struct run *r, struct timeline *out[N_SAMPLE_TIMELINES])
{
	struct timeline *all[N_SAMPLE_TIMELINES] = { &r->tl_workers, &r->tl_threads,
						     &r->tl_mem_used, &r->tl_mem_limit,
						     &r->tl_mem_worst_pct, &r->tl_cpu,
						     &r->tl_executing };
	memcpy(out, all, sizeof(all));
}

/* roastcoffea samples the cluster from the collector's start to its end:
 * worker totals cover the run, not the time roastop waited before it. The
 * trapezoids are cut at the start (and at the end, sample_totals_freeze),
 * interpolated between the polls on either side: starting at the last
 * poll before the start and stopping at the last one before the end made
 * avg_workers 2.025 where the run's own window gives 2.117. */
static void sample_totals_restart(struct run *r, double from)
{
	struct timeline *tls[N_SAMPLE_TIMELINES];
	sample_timeline_list(r, tls);
	for (size_t i = 0; i < N_SAMPLE_TIMELINES; i++)
		timeline_restart_totals(tls[i], from);
	for (size_t i = 0; i < r->workers.count; i++) {
		struct worker_agg *w = strmap_val_at(&r->workers, i);
		w->mem_samples = 0;
		w->mem_integral = w->mem_covered = w->mem_peak = 0;
	}
	r->departed.mem_avg_sum = 0;
	r->departed.n_mem = 0;
	stats_init(&r->worker_mem_bytes);
	stats_init(&r->worker_mem_pct);
	stats_init(&r->worker_cpu_pct);
}

static void sample_totals_freeze(struct run *r, bool frozen)
{
	struct timeline *tls[N_SAMPLE_TIMELINES];
	sample_timeline_list(r, tls);
	for (size_t i = 0; i < N_SAMPLE_TIMELINES; i++)
		if (frozen)
			timeline_freeze(tls[i], r->t_run_end);
		else
			timeline_thaw(tls[i]);
}

/* A late start (run_apply) restarts no totals: the samples before it in
 * the file are later than it in time, so inside the run. */
static void apply_run_start(struct run *r, double t, const struct ev_run_start *s, bool late)
{
	if (r->started) {
		run_log(r, t, LOG_WARN, "another run started (%s): its numbers add to this session's",
			s->run_id ? s->run_id : "?");
		r->ended = false;
		if (!late)
			progress_restart(r); /* its tasks, not the first run's */
	} else {
		r->started = true;
		r->t_run_start = t;
		/* a run_start read late (a recording out of order) restarts no
		 * totals, and the chunks applied before it are taken as inside */
		if (!late) {
			sample_totals_restart(r, t);
			chunk_window_open(r);
			progress_restart(r);
			tasks_clear(&r->tasks); /* the watch's tasks ran before the run */
		}
	}
	r->status = RUN_RUNNING;
	r->status_reason[0] = '\0';
	r->t_last_client = t;
	if (!r->ended)
		sample_totals_freeze(r, false);
	strutil_copy(r->run_id, sizeof(r->run_id), s->run_id);
	if (s->name)
		strutil_copy(r->name, sizeof(r->name), s->name);
	if (s->processor)
		strutil_copy(r->processor, sizeof(r->processor), s->processor);
	r->n_datasets_declared = (uint32_t)s->n_datasets;
	r->expected_events = s->expected_events;
	run_log(r, t, LOG_INFO, "run started: %s (%s)", r->name[0] ? r->name : r->run_id,
		r->processor[0] ? r->processor : "processor unknown");
}

/* "Type: message" of a failed run, else the reason given (either cut on a
 * UTF-8 boundary). */
static void run_end_reason(struct run *r, const struct ev_run_end *e)
{
	char *out = r->status_reason;
	size_t size = sizeof(r->status_reason);
	if (r->status != RUN_FAILED || !e->error_type) {
		strutil_copy(out, size, r->status == RUN_FAILED ? e->error_message : e->reason);
		return;
	}
	strutil_copy(out, size, e->error_type);
	size_t n = strlen(out);
	if (!e->error_message || !e->error_message[0] || n + 3 >= size)
		return;
	memcpy(out + n, ": ", 3);
	strutil_copy(out + n + 2, size - n - 2, e->error_message);
}

static enum log_kind run_end_log_kind(enum run_status s)
{
	return s == RUN_COMPLETED ? LOG_INFO : (s == RUN_FAILED ? LOG_ERROR : LOG_WARN);
}

/* The collector's run_end (without a status from an old emitter: completed)
 * or roastop's own. Roastop's is a guess made without word from the client:
 * it never overrides a run that has ended already. An incomplete run ends
 * at its client's last datagram, not when roastop gave up waiting. */
static int apply_run_end(struct run *r, double t, const struct ev_run_end *e)
{
	enum run_status st = e->status ? run_status_from_name(e->status) : RUN_COMPLETED;
	if (st == RUN_STATUS__COUNT || st == RUN_RUNNING)
		return 1; /* the decoders reject it; a hand-built event is ignored */
	bool own = st == RUN_INCOMPLETE || st == RUN_STOPPED;
	if (own && r->ended)
		return 1;
	if (!own)
		r->t_last_client = t;
	r->ended = true;
	r->status = st;
	r->t_run_end = st == RUN_INCOMPLETE && (r->started || r->begun) ? r->t_last_client : t;
	run_end_reason(r, e);
	sample_totals_freeze(r, true);
	run_log(r, t, run_end_log_kind(st), "run %s%s%s", run_status_name(st),
		r->status_reason[0] ? ": " : "", r->status_reason);
	return 0;
}

void run_begin(struct run *r, double t, bool restart)
{
	r->begun = true;
	r->t_begin = t;
	r->t_last_client = t;
	if (!restart)
		return;
	sample_totals_restart(r, t);
	chunk_window_open(r);
	progress_restart(r);
}

/* A datagram of a run marked incomplete: the client was slow, not gone. */
static void run_client_seen(struct run *r, double t)
{
	r->t_last_client = fmax(r->t_last_client, t);
	if (r->status != RUN_INCOMPLETE)
		return;
	r->ended = false;
	r->status = RUN_RUNNING;
	r->status_reason[0] = '\0';
	sample_totals_freeze(r, false);
	run_log(r, t, LOG_WARN, "the run sends again after it was marked incomplete: running");
}

/* A chunk begun after its run ended is not the run's to wait for (one
 * marked incomplete is running again: run_client_seen). */
static int apply_chunk_start(struct run *r, double t, const struct ev_chunk *c)
{
	if (r->ended && r->status != RUN_INCOMPLETE)
		return 1;
	run_client_seen(r, t);
	return inflight_start(&r->inflight, t, c);
}

static void report_add(optnum *into, optnum v)
{
	if (!v.valid)
		return;
	*into = optnum_of((into->valid ? into->value : 0.0) + v.value);
}

/* Two reports in one session (two Runner.run calls) add up. */
static void apply_report(struct run *r, double t, const struct ev_report *rep)
{
	struct report_agg *a = &r->report;
	if (a->present)
		run_log(r, t, LOG_INFO, "another coffea report: totals add up");
	a->present = true;
	report_add(&a->bytesread, rep->bytesread);
	report_add(&a->entries, rep->entries);
	report_add(&a->processtime, rep->processtime);
	report_add(&a->chunks, rep->chunks);
	a->n_columns += rep->n_columns;
}

static struct source_info *source_find(struct run *r, const char *name)
{
	for (size_t i = 0; i < r->n_sources; i++)
		if (strcmp(r->sources[i].name, name) == 0)
			return &r->sources[i];
	if (r->n_sources == ROASTOP_ARRAY_LEN(r->sources))
		return NULL;
	struct source_info *s = &r->sources[r->n_sources++];
	strutil_copy(s->name, sizeof(s->name), name);
	s->state = SRC__COUNT; /* so the first status counts as a change */
	return s;
}

/* A source feeding the timelines was lost: no line is drawn and no
 * trapezoid spans the gap. */
static void scheduler_gap(struct run *r)
{
	r->scheduler_gaps++;
	struct timeline *tls[N_SAMPLE_TIMELINES];
	sample_timeline_list(r, tls);
	for (size_t i = 0; i < N_SAMPLE_TIMELINES; i++)
		timeline_gap(tls[i]);
	timeline_gap(&r->tl_tasks_done);
	tasks_route_lost(&r->tasks); /* the tasks in flight are no longer known */
	for (size_t i = 0; i < r->workers.count; i++) {
		struct worker_agg *w = strmap_val_at(&r->workers, i);
		w->mem_t_last = -1;
	}
}

static int apply_status(struct run *r, double t, const struct ev_status *st)
{
	struct source_info *s = source_find(r, st->source ? st->source : "?");
	if (!s)
		return 1;
	strutil_copy(s->reason, sizeof(s->reason), st->reason);
	if (s->state == st->state)
		return 0;
	bool first = s->state == SRC__COUNT;
	s->state = st->state;
	s->since = t;
	s->transitions++;
	if (st->state == SRC_LOST && st->gaps_timelines.valid && st->gaps_timelines.value != 0)
		scheduler_gap(r);
	if (!first || st->state != SRC_CONNECTED)
		run_log(r, t, st->state == SRC_CONNECTED ? LOG_INFO : LOG_WARN, "%s %s%s%s",
			s->name, source_state_name(st->state), s->reason[0] ? ": " : "",
			s->reason);
	return 0;
}

/* ---- the one entry point ---------------------------------------------- */

#define RUN_REGRESSIONS_TOLD 5 /* in the log; the rest only counted */

static void run_time_regression(struct run *r, const struct event *ev)
{
	if (r->time_regressions++ >= RUN_REGRESSIONS_TOLD)
		return;
	run_log(r, r->t_last, LOG_WARN, "time goes back %.3f s at a %s event: applied without "
		"a time-series point (time_regression)%s", r->t_last - ev->t,
		event_type_name(ev->type),
		r->time_regressions == RUN_REGRESSIONS_TOLD ? "; further ones only counted" : "");
}

static void run_clock(struct run *r, double t)
{
	if (!r->any_event) {
		r->any_event = true;
		r->t_first = t;
		r->t_last = t;
	}
	if (t > r->t_last)
		r->t_last = t;
}

/* A task the model cannot read is ignored; one it holds in its totals
 * only (a prefix past the cap or refused by the pool) is applied and
 * counted there. */
static int run_apply_task(struct run *r, const struct ev_task *t)
{
	int rc = t->action && event_task_times_ok(t) ? 0 : 1;
	if (rc == 0)
		tasks_apply(&r->tasks, t, 0);
	if (rc)
		r->ignored++;
	else
		r->applied[EV_TASK]++;
	return rc;
}

int run_apply(struct run *r, const struct event *ev)
{
	if (ev->type <= EV_NONE || ev->type >= EV__COUNT || !isfinite(ev->t)) {
		r->ignored++;
		return 1;
	}
	if (ev->type == EV_LOG) { /* a note: the run's clock and figures are not its business */
		run_note(r, ev->t, ev->u.log.level, ev->u.log.text ? ev->u.log.text : "");
		r->applied[EV_LOG]++;
		return 0;
	}
	if (ev->type == EV_TASK) /* the task model's own times; not the run's clock */
		return run_apply_task(r, &ev->u.task);
	/* the run's clock never goes back: an earlier time is a regression */
	bool late = r->any_event && ev->t < r->t_last;
	if (late)
		run_time_regression(r, ev);
	run_clock(r, ev->t);
	int rc = 0;
	switch (ev->type) {
	case EV_SAMPLE:
		if (ev->u.sample.source && strcmp(ev->u.sample.source, BEATS_SAMPLE_SOURCE) == 0)
			r->n_beat_samples++;
		if (late) {
			apply_sample_late(r, ev->t, &ev->u.sample);
			break;
		}
		apply_sample(r, ev->t, &ev->u.sample);
		/* the route's failed and running tasks; once the run ended, only
		 * its own install's (not the next run's) */
		if (!r->ended || tasks_route_own(&r->tasks, &ev->u.sample))
			tasks_apply_sample(&r->tasks, &ev->u.sample);
		break;
	case EV_CHUNK:
		run_client_seen(r, ev->t);
		apply_chunk(r, ev->t, &ev->u.chunk, late);
		break;
	case EV_RUN_START: apply_run_start(r, ev->t, &ev->u.run_start, late); break;
	case EV_RUN_END: rc = apply_run_end(r, ev->t, &ev->u.run_end); break;
	case EV_REPORT:
		run_client_seen(r, ev->t);
		apply_report(r, ev->t, &ev->u.report);
		break;
	case EV_FINE: apply_fine(r, ev->t, &ev->u.fine); break;
	case EV_CHUNK_START: rc = apply_chunk_start(r, ev->t, &ev->u.chunk); break;
	case EV_STATUS: rc = apply_status(r, ev->t, &ev->u.status); break;
	case EV_HEARTBEAT: break; /* counted: the session's beats table draws them */
	default: rc = 1; break;
	}
	if (rc)
		r->ignored++;
	else
		r->applied[ev->type]++;
	return rc;
}
