/* The run model, chunks (run.c has the entry point): a finished chunk's
 * totals, its dataset, file, sections, branches and errors, each in a table
 * with a cap, and the window of chunk times the rates read. */
#include "roastop/run.h"
#include "runpriv.h"
#include "roastop/strutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* An exception type has one failed chunk less: a later attempt of a chunk
 * whose latest attempt raised it. The type as the retry table kept it
 * (RETRIES_TYPE_LEN) may be a longer key's prefix, or past the table's cap
 * under "(other)". */
static void error_uncount(struct run *r, const char *type)
{
	uint64_t *n = strmap_get(&r->errors, type);
	for (size_t i = 0; !n && i < r->errors.count; i++)
		if (strncmp(strmap_key_at(&r->errors, i), type, RETRIES_TYPE_LEN - 1) == 0)
			n = strmap_val_at(&r->errors, i);
	if (!n)
		n = strmap_get(&r->errors, "(other)");
	if (n && *n)
		(*n)--;
}

/* The chunk's dataset has one failed chunk more (up), or one less. */
static void dataset_failed(struct run *r, double t, const struct ev_chunk *c, bool up)
{
	struct dataset_agg *d = dataset_get(r, t, c->dataset);
	if (d && up)
		d->n_failed++;
	else if (d && d->n_failed)
		d->n_failed--;
}

/* A failed attempt: a new failed chunk, or the same one again when it had
 * failed already (its retry failed too). */
static void chunk_failed(struct run *r, double t, const struct ev_chunk *c)
{
	char prev[RETRIES_TYPE_LEN];
	uint64_t overflow = r->retries.overflow;
	bool again = retries_failed(&r->retries, c, prev, sizeof(prev)) == RETRY_AGAIN;
	if (overflow == 0 && r->retries.overflow)
		run_log(r, t, LOG_WARN, "retry table full at %zu: a chunk failing from now on stays "
			"failed whatever follows (roastop.retries.overflow)", r->retries.chunks.count);
	if (again) {
		error_uncount(r, prev);
	} else {
		r->n_chunks++;
		r->n_failed++;
		dataset_failed(r, t, c, true);
	}
	error_count(r, t, c->error);
	failed_add(&r->failed, t, c);
	run_log(r, t, LOG_ERROR, "chunk failed%s: %s on %s (%s)", again ? " again" : "", c->error,
		c->worker ? c->worker : "?", c->file ? c->file : "?");
}

/* A success of a chunk whose latest attempt failed: the failure was
 * retried, the chunk is not failed any more (and was counted already). */
static bool chunk_recovered(struct run *r, double t, const struct ev_chunk *c)
{
	char prev[RETRIES_TYPE_LEN];
	if (!retries_succeeded(&r->retries, c, prev, sizeof(prev)))
		return false;
	r->n_failed--;
	dataset_failed(r, t, c, false);
	error_uncount(r, prev);
	failed_mark_retried(&r->failed, c);
	run_log(r, t, LOG_INFO, "chunk retried: succeeded after %s on %s (%s)", prev,
		c->worker ? c->worker : "?", c->file ? c->file : "?");
	return true;
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
	bool first = r->n_chunks - r->n_failed == 1; /* run_apply_chunk counted it */
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
void run_chunk_window_open(struct run *r)
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

void run_apply_chunk(struct run *r, double t, const struct ev_chunk *c, bool late)
{
	inflight_end(&r->inflight, c);
	if (c->error) {
		chunk_failed(r, t, c);
		return;
	}
	if (!chunk_recovered(r, t, c))
		r->n_chunks++;
	chunk_succeeded(r, t, c, late);
}
