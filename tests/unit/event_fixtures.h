/* Events of every type, with every field set or with only the required
 * ones, and a field-by-field comparison: shared by the codec and the
 * record/replay tests. The values are chosen to be awkward: escapes and
 * non-ASCII in strings, numbers that need 17 digits, negative deltas, 2^53-1. */
#ifndef ROASTOP_EVENT_FIXTURES_H
#define ROASTOP_EVENT_FIXTURES_H

#include <stdio.h>
#include <string.h>

#include "roastop/event.h"

static inline const char **fx_strs(struct event *ev, const char *const *src, size_t n)
{
	const char **out = arena_alloc(&ev->mem, (n ? n : 1) * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[i] = arena_strdup(&ev->mem, src[i]);
	return out;
}

static inline struct kv_num *fx_kv(struct event *ev, const struct kv_num *src, size_t n)
{
	struct kv_num *out = arena_alloc(&ev->mem, n * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[i] = (struct kv_num){ arena_strdup(&ev->mem, src[i].key), src[i].value };
	return out;
}

static inline void fx_chunk(struct event *ev, bool full)
{
	struct ev_chunk *c = &ev->u.chunk;
	ev->type = EV_CHUNK;
	ev->t = 1767225600.123456;
	c->duration = optnum_of(9.25);
	if (!full)
		return;
	static const char *const branches[] = { "nMuon", "Muon_pt", "\xf0\x9f\x98\x80" };
	static const struct kv_num timing[] = { { "sel", 2.25 }, { "fill", 1e-9 } };
	static const struct kv_num memory[] = { { "hists", -2.5 } };
	static const struct kv_num bytes[] = { { "load \"x\"", 12374406 } };
	c->t_start = optnum_of(1767225590.5);
	c->t_end = optnum_of(1767225599.75);
	c->mem_before_mb = optnum_of(1033.43);
	c->mem_after_mb = optnum_of(1067.0312500001);
	c->mem_delta_mb = optnum_of(-12.5);
	c->bytes_read = optnum_of(15468008);
	c->timestamp = optnum_of(1767225599.8);
	c->num_events = optnum_of(134190);
	c->entry_start = optnum_of(100);
	c->entry_stop = optnum_of(134290);
	c->num_branches_accessed = optnum_of(3);
	c->accessed_bytes = optnum_of(13921207);
	c->accessed_uncompressed_bytes = optnum_of(41763621);
	c->branches_read_percent = optnum_of(0.25);
	c->bytes_read_percent = optnum_of(100);
	c->cpu_time = optnum_of(0.1 + 0.2); /* 0.30000000000000004 */
	c->pid = optnum_of(4242);
	c->seq = optnum_of(9007199254740991.0);
	c->start_seq = optnum_of(9007199254740990.0);
	c->dataset = arena_strdup(&ev->mem, "DY\"Jets\"\\ \n\t\x01");
	c->file = arena_strdup(&ev->mem, "root://eos/a b/\xc3\xbc.root");
	c->uuid = arena_strdup(&ev->mem, "ab-12");
	c->worker = arena_strdup(&ev->mem, "tcp://10.0.0.1:40000");
	c->host = arena_strdup(&ev->mem, "n\xc3\xb6" "de-01");
	c->error = arena_strdup(&ev->mem, "OSError");
	c->run_id = arena_strdup(&ev->mem, "gen-0001 \xc3\xa9\"r\"");
	c->n_branches = 3;
	c->accessed_branches = fx_strs(ev, branches, 3);
	c->n_timing = 2;
	c->timing = fx_kv(ev, timing, 2);
	c->n_memory = 1;
	c->memory = fx_kv(ev, memory, 1);
	c->n_bytes = 1;
	c->bytes = fx_kv(ev, bytes, 1);
	c->has_file_metadata = true;
	c->file_metadata = (struct file_meta){ arena_strdup(&ev->mem, "root://eos/a.root"),
					       optnum_of(0.31), optnum_of(1200),
					       optnum_of(2.5e9) };
	c->custom_json = arena_strdup(&ev->mem, "{\"extra\":[1,{\"a\":null}],\"note\":\"x\"}");
}

static inline void fx_sample(struct event *ev, bool full)
{
	struct ev_sample *s = &ev->u.sample;
	ev->type = EV_SAMPLE;
	ev->t = 1767225605;
	s->worker_count = full ? 2 : 7;
	if (!full)
		return;
	s->source = arena_strdup(&ev->mem, "state");
	s->scheduler_id = arena_strdup(&ev->mem, "Scheduler-abc");
	s->dask_version = arena_strdup(&ev->mem, "2026.7.0");
	s->total_threads = optnum_of(8);
	s->tasks_processing = optnum_of(5);
	s->n_workers = 2;
	s->workers = arena_alloc(&ev->mem, 2 * sizeof(*s->workers));
	s->workers[0] = (struct worker_sample){
		arena_strdup(&ev->mem, "tcp://10.0.0.1:40000"), arena_strdup(&ev->mem, "w0"),
		arena_strdup(&ev->mem, "node1"), arena_strdup(&ev->mem, "running"),
		optnum_of(4), optnum_of(1094851797), optnum_of(4e9), optnum_of(49.8),
		optnum_of(1), optnum_of(3), optnum_of(123456), optnum_of(0), optnum_of(31337),
		optnum_of(2.75)
	};
	s->workers[1] = (struct worker_sample){ .id = arena_strdup(&ev->mem, "tcp://10.0.0.2:40000"),
						.cpu_percent = optnum_of(250.5) };
}

static inline void fx_run_start(struct event *ev, bool full)
{
	static const char *const ds[] = { "DYJetsToLL_M-50", "SingleMuon" };
	struct ev_run_start *r = &ev->u.run_start;
	ev->type = EV_RUN_START;
	ev->t = 1767225600;
	r->run_id = arena_strdup(&ev->mem, "gen-0001");
	if (!full)
		return;
	r->name = arena_strdup(&ev->mem, "dimuon");
	r->processor = arena_strdup(&ev->mem, "DimuonProcessor");
	r->n_datasets = 2;
	r->datasets = fx_strs(ev, ds, 2);
	r->expected_events = optnum_of(20016140628.0);
	r->client_host = arena_strdup(&ev->mem, "login01");
	r->client_pid = optnum_of(31337);
}

static inline void fx_run_end(struct event *ev, bool full)
{
	ev->type = EV_RUN_END;
	ev->t = 1767227401;
	if (!full)
		return;
	struct ev_run_end *e = &ev->u.run_end;
	e->run_id = arena_strdup(&ev->mem, "gen-0001");
	e->status = arena_strdup(&ev->mem, "failed");
	e->error_type = arena_strdup(&ev->mem, "ValueError");
	e->error_message = arena_strdup(&ev->mem, "bad \"chunk\"\n\u00e9");
	e->reason = arena_strdup(&ev->mem, "why");
}

static inline void fx_report(struct event *ev, bool full)
{
	static const char *const cols[] = { "nMuon-offsets", "Muon_pt-data" };
	struct ev_report *r = &ev->u.report;
	ev->type = EV_REPORT;
	ev->t = 1767227400.5;
	if (!full)
		return;
	r->bytesread = optnum_of(59502813686.0);
	r->entries = optnum_of(495693092);
	r->processtime = optnum_of(19757.138069204273);
	r->chunks = optnum_of(5000);
	r->run_id = arena_strdup(&ev->mem, "gen-0001");
	r->n_columns = 2;
	r->columns = fx_strs(ev, cols, 2);
}

static inline void fx_fine(struct event *ev, bool full)
{
	struct ev_fine *f = &ev->u.fine;
	ev->type = EV_FINE;
	ev->t = 1767225610;
	f->rows = arena_alloc(&ev->mem, 3 * sizeof(*f->rows));
	if (!full)
		return;
	f->scope = FINE_SPAN;
	f->n_rows = 3;
	const char *a = arena_strdup(&ev->mem, "execute"), *p = arena_strdup(&ev->mem, "P");
	f->rows[0] = (struct fine_row){ a, p, arena_strdup(&ev->mem, "thread-cpu"),
					arena_strdup(&ev->mem, "seconds"), 1.25 };
	f->rows[1] = (struct fine_row){ a, p, arena_strdup(&ev->mem, "disk-read"),
					arena_strdup(&ev->mem, "bytes"), 0 };
	f->rows[2] = (struct fine_row){ arena_strdup(&ev->mem, "gather-dep"), p,
					arena_strdup(&ev->mem, "deserialize"),
					arena_strdup(&ev->mem, "seconds"), 1.25e-3 };
}

static inline void fx_status(struct event *ev, bool full)
{
	struct ev_status *s = &ev->u.status;
	ev->type = EV_STATUS;
	ev->t = 1767225700;
	s->source = arena_strdup(&ev->mem, "scheduler");
	s->state = full ? SRC_DEGRADED : SRC_LOST;
	if (full)
		s->reason = arena_strdup(&ev->mem, "slow: 2.5 s");
}

static inline void fx_task(struct event *ev, bool full)
{
	struct ev_task *k = &ev->u.task;
	ev->type = EV_TASK;
	ev->t = 1767225701;
	k->key = arena_strdup(&ev->mem, "[\"sum-082f3fca5b79e16de971fafa73b5ddf1\",0,1]");
	k->prefix = arena_strdup(&ev->mem, "sum");
	k->action = arena_strdup(&ev->mem, "compute");
	k->start = optnum_of(1767225700.25);
	k->stop = optnum_of(1767225700.75);
	if (full) {
		k->worker = arena_strdup(&ev->mem, "tcp://10.0.0.7:40877");
		k->status = arena_strdup(&ev->mem, "OK");
	}
}

/* Fills ev (event_init'ed) with type t; full: every field, else the required ones. */
/* A chunk_start: the envelope alone, or every field its table has. */
static inline void fx_chunk_start(struct event *ev, bool full)
{
	struct ev_chunk *c = &ev->u.chunk;
	ev->type = EV_CHUNK_START;
	ev->t = 1767225590.625;
	c->host = arena_strdup(&ev->mem, "n\xc3\xb6" "de-01");
	c->pid = optnum_of(4242);
	c->seq = optnum_of(17);
	if (!full)
		return;
	c->t_start = optnum_of(1767225590.5);
	c->entry_start = optnum_of(100);
	c->entry_stop = optnum_of(134290);
	c->dataset = arena_strdup(&ev->mem, "DY\"Jets\"");
	c->file = arena_strdup(&ev->mem, "root://eos/a b/\xc3\xbc.root");
	c->uuid = arena_strdup(&ev->mem, "ab-12");
	c->worker = arena_strdup(&ev->mem, "tcp://10.0.0.1:40000");
	c->run_id = arena_strdup(&ev->mem, "gen-0001");
}

/* A heartbeat: host and pid alone, or every field. */
static inline void fx_heartbeat(struct event *ev, bool full)
{
	struct ev_heartbeat *h = &ev->u.heartbeat;
	ev->type = EV_HEARTBEAT;
	ev->t = 1767225591.25;
	h->host = arena_strdup(&ev->mem, "n\xc3\xb6" "de-01");
	h->pid = optnum_of(4242);
	h->seq = optnum_of(18);
	if (!full)
		return;
	h->worker = arena_strdup(&ev->mem, "tcp://10.0.0.1:40000");
	h->rss_bytes = optnum_of(734003200);
	h->cpu_time = optnum_of(12.375);
	h->chunks_in_flight = optnum_of(3);
	h->interval = optnum_of(1);
}

/* A log line: its text alone (level info), or a warning. */
static inline void fx_log(struct event *ev, bool full)
{
	ev->type = EV_LOG;
	ev->t = 1767225702.5;
	ev->u.log.level = full ? LOG_WARN : LOG_INFO;
	ev->u.log.text = arena_strdup(&ev->mem, full ? "datagrams lost: 2 more, \"2\" in \xc3\xa4ll"
						     : "x");
}

/* A source's counters: its name alone, or a state and grouped counters. */
static inline void fx_counters(struct event *ev, bool full)
{
	struct ev_counters *k = &ev->u.counters;
	ev->type = EV_COUNTERS;
	ev->t = 1767225703;
	k->source = arena_strdup(&ev->mem, "udp");
	if (!full)
		return;
	k->state_key = arena_strdup(&ev->mem, "listen");
	k->state = arena_strdup(&ev->mem, "127.0.0.1:9999");
	struct source_counter *c = arena_alloc(&ev->mem, 3 * sizeof(*c));
	c[0] = (struct source_counter){ NULL, arena_strdup(&ev->mem, "datagrams"), 9007199254740991u };
	c[1] = (struct source_counter){ arena_strdup(&ev->mem, "rejected"),
					arena_strdup(&ev->mem, "bad_tag"), 3 };
	c[2] = (struct source_counter){ arena_strdup(&ev->mem, "rejected"),
					arena_strdup(&ev->mem, "total"), 0 };
	k->counters = c;
	k->n_counters = 3;
}

static inline void fx_event(struct event *ev, enum event_type t, bool full)
{
	event_reset(ev);
	switch (t) {
	case EV_CHUNK: fx_chunk(ev, full); break;
	case EV_CHUNK_START: fx_chunk_start(ev, full); break;
	case EV_SAMPLE: fx_sample(ev, full); break;
	case EV_RUN_START: fx_run_start(ev, full); break;
	case EV_RUN_END: fx_run_end(ev, full); break;
	case EV_REPORT: fx_report(ev, full); break;
	case EV_FINE: fx_fine(ev, full); break;
	case EV_STATUS: fx_status(ev, full); break;
	case EV_HEARTBEAT: fx_heartbeat(ev, full); break;
	case EV_TASK: fx_task(ev, full); break;
	case EV_LOG: fx_log(ev, full); break;
	case EV_COUNTERS: fx_counters(ev, full); break;
	default: break;
	}
}

/* ---- field-by-field comparison: the first difference goes into why ---- */

struct fx_cmp {
	char *why;
	size_t size;
	bool same;
};

static inline void fx_diff(struct fx_cmp *c, const char *what)
{
	if (c->same)
		snprintf(c->why, c->size, "%s differs", what);
	c->same = false;
}

static inline void fx_num(struct fx_cmp *c, const char *what, optnum a, optnum b)
{
	if (a.valid != b.valid || (a.valid && a.value != b.value))
		fx_diff(c, what);
}

static inline void fx_dbl(struct fx_cmp *c, const char *what, double a, double b)
{
	if (a != b)
		fx_diff(c, what);
}

static inline void fx_str(struct fx_cmp *c, const char *what, const char *a, const char *b)
{
	if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
		fx_diff(c, what);
}

static inline void fx_strlist(struct fx_cmp *c, const char *what, const char *const *a, size_t na,
			      const char *const *b, size_t nb)
{
	if (na != nb || (a == NULL) != (b == NULL)) {
		fx_diff(c, what);
		return;
	}
	for (size_t i = 0; i < na; i++)
		fx_str(c, what, a[i], b[i]);
}

static inline void fx_kvs(struct fx_cmp *c, const char *what, const struct kv_num *a, size_t na,
			  const struct kv_num *b, size_t nb)
{
	if (na != nb) {
		fx_diff(c, what);
		return;
	}
	for (size_t i = 0; i < na; i++) {
		fx_str(c, what, a[i].key, b[i].key);
		fx_dbl(c, what, a[i].value, b[i].value);
	}
}

static inline void fx_cmp_chunk(struct fx_cmp *c, const struct ev_chunk *a, const struct ev_chunk *b)
{
	fx_num(c, "t_start", a->t_start, b->t_start);
	fx_num(c, "t_end", a->t_end, b->t_end);
	fx_num(c, "duration", a->duration, b->duration);
	fx_num(c, "mem_before_mb", a->mem_before_mb, b->mem_before_mb);
	fx_num(c, "mem_after_mb", a->mem_after_mb, b->mem_after_mb);
	fx_num(c, "mem_delta_mb", a->mem_delta_mb, b->mem_delta_mb);
	fx_num(c, "bytes_read", a->bytes_read, b->bytes_read);
	fx_num(c, "timestamp", a->timestamp, b->timestamp);
	fx_num(c, "num_events", a->num_events, b->num_events);
	fx_num(c, "entry_start", a->entry_start, b->entry_start);
	fx_num(c, "entry_stop", a->entry_stop, b->entry_stop);
	fx_num(c, "num_branches_accessed", a->num_branches_accessed, b->num_branches_accessed);
	fx_num(c, "accessed_bytes", a->accessed_bytes, b->accessed_bytes);
	fx_num(c, "accessed_uncompressed_bytes", a->accessed_uncompressed_bytes,
	       b->accessed_uncompressed_bytes);
	fx_num(c, "branches_read_percent", a->branches_read_percent, b->branches_read_percent);
	fx_num(c, "bytes_read_percent", a->bytes_read_percent, b->bytes_read_percent);
	fx_num(c, "cpu_time", a->cpu_time, b->cpu_time);
	fx_num(c, "pid", a->pid, b->pid);
	fx_num(c, "seq", a->seq, b->seq);
	fx_num(c, "start_seq", a->start_seq, b->start_seq);
	fx_str(c, "dataset", a->dataset, b->dataset);
	fx_str(c, "file", a->file, b->file);
	fx_str(c, "uuid", a->uuid, b->uuid);
	fx_str(c, "worker", a->worker, b->worker);
	fx_str(c, "host", a->host, b->host);
	fx_str(c, "error", a->error, b->error);
	fx_str(c, "run_id", a->run_id, b->run_id);
	fx_strlist(c, "accessed_branches", a->accessed_branches, a->n_branches,
		   b->accessed_branches, b->n_branches);
	fx_kvs(c, "timing", a->timing, a->n_timing, b->timing, b->n_timing);
	fx_kvs(c, "memory", a->memory, a->n_memory, b->memory, b->n_memory);
	fx_kvs(c, "bytes", a->bytes, a->n_bytes, b->bytes, b->n_bytes);
	if (a->has_file_metadata != b->has_file_metadata)
		fx_diff(c, "has_file_metadata");
	if (a->has_file_metadata && b->has_file_metadata) {
		fx_str(c, "file_metadata.filename", a->file_metadata.filename,
		       b->file_metadata.filename);
		fx_num(c, "file_metadata.compression_ratio", a->file_metadata.compression_ratio,
		       b->file_metadata.compression_ratio);
		fx_num(c, "file_metadata.total_branches", a->file_metadata.total_branches,
		       b->file_metadata.total_branches);
		fx_num(c, "file_metadata.total_tree_bytes", a->file_metadata.total_tree_bytes,
		       b->file_metadata.total_tree_bytes);
	}
	fx_str(c, "custom_json", a->custom_json, b->custom_json);
}

static inline void fx_cmp_worker(struct fx_cmp *c, const struct worker_sample *a,
				 const struct worker_sample *b)
{
	fx_str(c, "worker.id", a->id, b->id);
	fx_str(c, "worker.name", a->name, b->name);
	fx_str(c, "worker.host", a->host, b->host);
	fx_str(c, "worker.status", a->status, b->status);
	fx_num(c, "worker.nthreads", a->nthreads, b->nthreads);
	fx_num(c, "worker.memory_bytes", a->memory_bytes, b->memory_bytes);
	fx_num(c, "worker.memory_limit", a->memory_limit, b->memory_limit);
	fx_num(c, "worker.cpu_percent", a->cpu_percent, b->cpu_percent);
	fx_num(c, "worker.executing", a->executing, b->executing);
	fx_num(c, "worker.processing", a->processing, b->processing);
	fx_num(c, "worker.managed_bytes", a->managed_bytes, b->managed_bytes);
	fx_num(c, "worker.spilled_bytes", a->spilled_bytes, b->spilled_bytes);
	fx_num(c, "worker.pid", a->pid, b->pid);
}

static inline void fx_cmp_sample(struct fx_cmp *c, const struct ev_sample *a,
				 const struct ev_sample *b)
{
	fx_str(c, "source", a->source, b->source);
	fx_str(c, "scheduler_id", a->scheduler_id, b->scheduler_id);
	fx_str(c, "dask_version", a->dask_version, b->dask_version);
	if (a->worker_count != b->worker_count)
		fx_diff(c, "worker_count");
	fx_num(c, "total_threads", a->total_threads, b->total_threads);
	fx_num(c, "tasks_processing", a->tasks_processing, b->tasks_processing);
	if (a->n_workers != b->n_workers) {
		fx_diff(c, "n_workers");
		return;
	}
	for (size_t i = 0; i < a->n_workers; i++)
		fx_cmp_worker(c, &a->workers[i], &b->workers[i]);
}

static inline void fx_cmp_rest(struct fx_cmp *c, const struct event *a, const struct event *b)
{
	switch (a->type) {
	case EV_RUN_START: {
		const struct ev_run_start *x = &a->u.run_start, *y = &b->u.run_start;
		fx_str(c, "run_id", x->run_id, y->run_id);
		fx_str(c, "name", x->name, y->name);
		fx_str(c, "processor", x->processor, y->processor);
		fx_strlist(c, "datasets", x->datasets, x->n_datasets, y->datasets, y->n_datasets);
		fx_num(c, "expected_events", x->expected_events, y->expected_events);
		fx_str(c, "client_host", x->client_host, y->client_host);
		fx_num(c, "client_pid", x->client_pid, y->client_pid);
		break;
	}
	case EV_RUN_END:
		fx_str(c, "run_id", a->u.run_end.run_id, b->u.run_end.run_id);
		fx_str(c, "status", a->u.run_end.status, b->u.run_end.status);
		fx_str(c, "error_type", a->u.run_end.error_type, b->u.run_end.error_type);
		fx_str(c, "error_message", a->u.run_end.error_message, b->u.run_end.error_message);
		fx_str(c, "reason", a->u.run_end.reason, b->u.run_end.reason);
		break;
	case EV_REPORT: {
		const struct ev_report *x = &a->u.report, *y = &b->u.report;
		fx_num(c, "bytesread", x->bytesread, y->bytesread);
		fx_num(c, "entries", x->entries, y->entries);
		fx_num(c, "processtime", x->processtime, y->processtime);
		fx_num(c, "chunks", x->chunks, y->chunks);
		fx_str(c, "run_id", x->run_id, y->run_id);
		fx_strlist(c, "columns", x->columns, x->n_columns, y->columns, y->n_columns);
		break;
	}
	case EV_FINE: {
		const struct ev_fine *x = &a->u.fine, *y = &b->u.fine;
		if (x->scope != y->scope || x->n_rows != y->n_rows) {
			fx_diff(c, "fine scope or rows");
			break;
		}
		for (size_t i = 0; i < x->n_rows; i++) {
			fx_str(c, "row.context", x->rows[i].context, y->rows[i].context);
			fx_str(c, "row.prefix", x->rows[i].prefix, y->rows[i].prefix);
			fx_str(c, "row.activity", x->rows[i].activity, y->rows[i].activity);
			fx_str(c, "row.unit", x->rows[i].unit, y->rows[i].unit);
			fx_dbl(c, "row.value", x->rows[i].value, y->rows[i].value);
		}
		break;
	}
	case EV_STATUS:
		fx_str(c, "source", a->u.status.source, b->u.status.source);
		fx_str(c, "reason", a->u.status.reason, b->u.status.reason);
		if (a->u.status.state != b->u.status.state)
			fx_diff(c, "state");
		break;
	case EV_HEARTBEAT: {
		const struct ev_heartbeat *x = &a->u.heartbeat, *y = &b->u.heartbeat;
		fx_str(c, "host", x->host, y->host);
		fx_str(c, "worker", x->worker, y->worker);
		fx_num(c, "pid", x->pid, y->pid);
		fx_num(c, "seq", x->seq, y->seq);
		fx_num(c, "rss_bytes", x->rss_bytes, y->rss_bytes);
		fx_num(c, "cpu_time", x->cpu_time, y->cpu_time);
		fx_num(c, "chunks_in_flight", x->chunks_in_flight, y->chunks_in_flight);
		fx_num(c, "interval", x->interval, y->interval);
		break;
	}
	case EV_TASK: {
		const struct ev_task *x = &a->u.task, *y = &b->u.task;
		fx_str(c, "key", x->key, y->key);
		fx_str(c, "prefix", x->prefix, y->prefix);
		fx_str(c, "worker", x->worker, y->worker);
		fx_str(c, "action", x->action, y->action);
		fx_str(c, "status", x->status, y->status);
		fx_num(c, "start", x->start, y->start);
		fx_num(c, "stop", x->stop, y->stop);
		break;
	}
	case EV_LOG:
		fx_str(c, "text", a->u.log.text, b->u.log.text);
		if (a->u.log.level != b->u.log.level)
			fx_diff(c, "level");
		break;
	case EV_COUNTERS: {
		const struct ev_counters *x = &a->u.counters, *y = &b->u.counters;
		fx_str(c, "source", x->source, y->source);
		fx_str(c, "state_key", x->state_key, y->state_key);
		fx_str(c, "state", x->state, y->state);
		if (x->n_counters != y->n_counters) {
			fx_diff(c, "n_counters");
			break;
		}
		for (size_t i = 0; i < x->n_counters; i++) {
			fx_str(c, "counter.group", x->counters[i].group, y->counters[i].group);
			fx_str(c, "counter.name", x->counters[i].name, y->counters[i].name);
			fx_dbl(c, "counter.value", (double)x->counters[i].value,
			       (double)y->counters[i].value);
		}
		break;
	}
	default: break;
	}
}

/* true when a and b hold the same event; else why names the first field. */
static inline bool fx_equal(const struct event *a, const struct event *b, char *why, size_t size)
{
	struct fx_cmp c = { why, size, true };
	if (a->type != b->type) {
		snprintf(why, size, "type %d vs %d", a->type, b->type);
		return false;
	}
	fx_dbl(&c, "t", a->t, b->t);
	if (a->type == EV_CHUNK || a->type == EV_CHUNK_START)
		fx_cmp_chunk(&c, &a->u.chunk, &b->u.chunk);
	else if (a->type == EV_SAMPLE)
		fx_cmp_sample(&c, &a->u.sample, &b->u.sample);
	else
		fx_cmp_rest(&c, a, b);
	return c.same;
}

#endif
