/* metrics.json's raw data in roastcoffea 0.1.2's form; see metrics_raw.h.
 * Its timestamps are roastcoffea's: ISO 8601 in the writer's local time
 * without an offset (datetime.now().isoformat()), so its plots line them up
 * with chunk_info's times (datetime.fromtimestamp). The innermost items (a
 * [time, value] pair, a chunk record) are written each on one line: at the
 * caps, indentation would double the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roastop/jsonw.h"
#include "roastop/metrics_raw.h"
#include "roastop/strutil.h"

/* A per-worker series keeps a Dask worker's values for the points of its
 * history; beyond TRACKING_WORKERS, workers in table order, the rest are
 * left out (counted in roastop.tracking_data). */
#define TRACKING_WORKERS 64

void metrics_raw_iso(char *buf, size_t size, double t)
{
	double secs = floor(t);
	long us = lround((t - secs) * 1e6);
	if (us >= 1000000) {
		secs += 1;
		us -= 1000000;
	}
	time_t tt = (time_t)secs;
	struct tm tm;
	if (!isfinite(t) || !localtime_r(&tt, &tm)) {
		snprintf(buf, size, "1970-01-01T00:00:00.000000");
		return;
	}
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%06ld", us);
}

/* One [time, value] pair, on one line. */
static void raw_pair(struct jsonw *w, double t, double v)
{
	char iso[40];
	metrics_raw_iso(iso, sizeof(iso), t);
	jsonw_array_as(w, NULL, JSONW_LINE);
	jsonw_str(w, NULL, iso);
	jsonw_num(w, NULL, v);
	jsonw_end(w, ']');
}

static void raw_worker_counts(struct jsonw *w, const struct run *r)
{
	const struct timeline *tl = &r->tl_workers;
	char iso[40];
	jsonw_object(w, "worker_counts");
	for (size_t i = 0; i < tl->len; i++) {
		metrics_raw_iso(iso, sizeof(iso), tl->pts[i].t);
		jsonw_num(w, iso, tl->pts[i].mean);
	}
	jsonw_end(w, '}');
}

/* The series tracking_data has per worker, from its history's points; a
 * value not measured leaves its point out. Memory limit and threads are a
 * Dask worker's for its life: its latest, at each point of its memory. */
enum raw_series {
	RS_MEMORY, RS_MEMORY_LIMIT, RS_ACTIVE_TASKS, RS_CORES, RS_EXECUTING, RS_CPU, RS_OCCUPANCY,
	RS__COUNT
};

static const char *const series_names[RS__COUNT] = {
	"worker_memory", "worker_memory_limit", "worker_active_tasks", "worker_cores",
	"worker_executing", "worker_cpu", "worker_occupancy",
};

static double raw_count(uint16_t v)
{
	return v == WORKER_NA ? NAN : v;
}

static double raw_point_value(const struct worker_agg *a, const struct worker_point *p,
			      enum raw_series s)
{
	bool mem = isfinite(p->mem);
	switch (s) {
	case RS_MEMORY:
		return mem ? p->mem : NAN;
	case RS_MEMORY_LIMIT:
		return mem && a->memory_limit.valid ? a->memory_limit.value : NAN;
	case RS_ACTIVE_TASKS:
		return raw_count(p->proc);
	case RS_CORES:
		return a->nthreads.valid ? a->nthreads.value : NAN;
	case RS_EXECUTING:
		return raw_count(p->exec);
	case RS_OCCUPANCY:
		return p->occ;
	default:
		return raw_count(p->cpu);
	}
}

static void raw_series(struct jsonw *w, const struct run *r, enum raw_series s)
{
	jsonw_object(w, series_names[s]);
	for (size_t i = 0; i < r->workers.count && i < TRACKING_WORKERS; i++) {
		const struct worker_agg *a = strmap_val_at(&r->workers, i);
		const struct worker_hist *h = &a->hist;
		bool any = false;
		for (uint32_t k = 0; k < h->len && !any; k++)
			any = isfinite(raw_point_value(a, &h->pts[k], s));
		if (!any)
			continue;
		jsonw_array(w, strmap_key_at(&r->workers, i));
		for (uint32_t k = 0; k < h->len; k++) {
			double v = raw_point_value(a, &h->pts[k], s);
			if (isfinite(v))
				raw_pair(w, h->t0 + h->pts[k].t, v);
		}
		jsonw_end(w, ']');
	}
	jsonw_end(w, '}');
}

void metrics_raw_tracking(struct jsonw *w, const struct run *r)
{
	if (r->n_samples == 0) {
		jsonw_opt(w, "tracking_data", optnum_none()); /* no scheduler: roastcoffea's None */
		return;
	}
	jsonw_object(w, "tracking_data");
	raw_worker_counts(w, r);
	for (int s = 0; s < RS__COUNT; s++)
		raw_series(w, r, (enum raw_series)s);
	jsonw_end(w, '}');
}

/* The kept records in arrival order; NULL when none (or out of memory). */
static const struct rawchunk **raw_ordered(const struct rawchunks *s)
{
	if (s->n == 0)
		return NULL;
	const struct rawchunk **o = malloc(s->n * sizeof(*o));
	if (o)
		rawchunks_ordered(s, o);
	return o;
}

static void raw_str_field(struct jsonw *w, const char *key, const char *v)
{
	if (v[0])
		jsonw_str(w, key, v);
}

/* A field not given is left out, not null: roastcoffea's plots read
 * chunk.get(key, 0) and do arithmetic on it. On one line. */
static void raw_record(struct jsonw *w, const struct rawchunk *c)
{
	jsonw_object_as(w, NULL, JSONW_LINE);
	jsonw_num(w, "roastop_seq", (double)c->seq);
	for (int f = 0; f < RC__COUNT; f++)
		if (!isnan(c->v[f]))
			jsonw_num(w, rawchunks_field_name((enum rawchunk_field)f), c->v[f]);
	raw_str_field(w, "dataset", c->dataset);
	raw_str_field(w, "file", c->file);
	raw_str_field(w, "uuid", c->uuid);
	raw_str_field(w, "worker", c->worker);
	jsonw_end(w, '}');
}

/* Python's str() of a string without quotes, backslashes or control
 * characters; false for any other (left out). */
static bool raw_py_str(struct strbuf *line, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == '\'' || *p == '\\' || *p < 0x20 || *p >= 0x7F)
			return false;
	strbuf_puts(line, "'");
	strbuf_puts(line, s);
	strbuf_puts(line, "'");
	return true;
}

/* What one kept record stands for: total / kept (1 when all are kept). */
static double metrics_raw_weight(const struct rawchunks *s)
{
	return s->n ? (double)s->total / (double)s->n : 1.0;
}

/* roastcoffea's chunk_info, as its save_measurement writes it: the key is
 * str((file, entry_start, entry_stop)), the value [t_start, t_end,
 * bytes_read]. A sample's bytes are weighted by total/kept so that the
 * throughput it plots estimates the whole run's. */
static void raw_chunk_info(struct jsonw *w, struct strbuf *line, const struct rawchunks *s,
			   const struct rawchunk **o)
{
	double weight = metrics_raw_weight(s);
	jsonw_object(w, "chunk_info");
	for (size_t i = 0; i < s->n; i++) {
		const double *v = o[i]->v;
		if (isnan(v[RC_ENTRY_START]) || isnan(v[RC_ENTRY_STOP]) || isnan(v[RC_T_START]) ||
		    isnan(v[RC_T_END]) || !o[i]->file[0])
			continue;
		strbuf_reset(line);
		strbuf_puts(line, "(");
		if (!raw_py_str(line, o[i]->file))
			continue;
		strbuf_appendf(line, ", %.0f, %.0f)", v[RC_ENTRY_START], v[RC_ENTRY_STOP]);
		char key[RAWCHUNKS_FILE_LEN + 64];
		strutil_copy(key, sizeof(key), line->data);
		double bytes = isnan(v[RC_BYTES_READ]) ? 0 : v[RC_BYTES_READ] * weight;
		jsonw_array_as(w, key, JSONW_LINE);
		jsonw_num(w, NULL, v[RC_T_START]);
		jsonw_num(w, NULL, v[RC_T_END]);
		jsonw_num(w, NULL, bytes);
		jsonw_end(w, ']');
	}
	jsonw_end(w, '}');
}

void metrics_raw_chunks(struct jsonw *w, const struct run *r)
{
	const struct rawchunk **o = raw_ordered(&r->raw);
	if (!o)
		return; /* roastcoffea writes neither without chunk records */
	struct strbuf line;
	strbuf_init(&line);
	raw_chunk_info(w, &line, &r->raw, o);
	jsonw_array(w, "raw_chunk_metrics");
	for (size_t i = 0; i < r->raw.n; i++)
		raw_record(w, o[i]);
	jsonw_end(w, ']');
	strbuf_free(&line);
	free(o);
}

/* roastcoffea's raw_span_metrics: the span's cumulative_worker_metrics,
 * keyed str((context, prefix, activity, unit)); roastop's run-scoped rows
 * (the span's, else the cluster's growth over the run, metric_sources). */
void metrics_raw_span(struct jsonw *w, const struct run *r, const struct metrics *m)
{
	if (!m->has_fine)
		return;
	const struct strmap *map = m->fine_from_span ? &r->fine_span : &r->fine_cluster;
	struct strbuf line;
	strbuf_init(&line);
	jsonw_object(w, "raw_span_metrics");
	for (size_t i = 0; i < map->count; i++) {
		char buf[4 * (RUN_FINE_PART_MAX + 1)];
		const char *parts[4];
		strutil_copy(buf, sizeof(buf), strmap_key_at(map, i));
		if (!run_fine_split(buf, parts))
			continue;
		strbuf_reset(&line);
		strbuf_puts(&line, "(");
		bool ok = true;
		for (int k = 0; k < 4 && ok; k++) {
			if (k)
				strbuf_puts(&line, ", ");
			ok = raw_py_str(&line, parts[k]);
		}
		strbuf_puts(&line, ")");
		if (ok)
			jsonw_num(w, line.data, run_fine_value(strmap_val_at(map, i)));
	}
	jsonw_end(w, '}');
	strbuf_free(&line);
}

/* roastop.raw_chunks and roastop.tracking_data: what the raw data hold. */
void metrics_raw_roastop(struct jsonw *w, const struct run *r)
{
	const struct rawchunks *s = &r->raw;
	jsonw_object(w, "raw_chunks");
	jsonw_num(w, "kept", (double)s->n);
	jsonw_num(w, "total", (double)s->total);
	jsonw_bool(w, "sampled", rawchunks_sampled(s));
	jsonw_str(w, "method", rawchunks_sampled(s) ? "reservoir" : "all");
	jsonw_num(w, "cap", RAWCHUNKS_MAX);
	jsonw_num(w, "chunk_info_bytes_weight", metrics_raw_weight(s));
	jsonw_end(w, '}');
	jsonw_object(w, "tracking_data");
	jsonw_num(w, "workers_written",
		  (double)(r->workers.count < TRACKING_WORKERS ? r->workers.count : TRACKING_WORKERS));
	jsonw_num(w, "workers_in_table", (double)r->workers.count);
	jsonw_num(w, "points_per_worker_max", RUN_WORKER_HISTORY);
	jsonw_num(w, "worker_count_points", (double)r->tl_workers.len);
	jsonw_end(w, '}');
}
