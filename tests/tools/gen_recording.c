/* Generates a synthetic but physically plausible roastop recording on
 * stdout: a run with workers joining and leaving, chunk records with
 * sections, file metadata and failures, span fine metrics and a final coffea
 * report. With --truth FILE it also writes, as JSON, the numbers a correct
 * replay must reproduce, computed here independently of roastop's model.
 * Deterministic for a given --seed. Used by make demo, tests and benches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/event.h"
#include "roastop/event_json.h"
#include "roastop/strbuf.h"

struct gen {
	uint64_t chunks, workers, datasets, files, fail_every;
	double hours, sample_interval, t0;
	uint64_t rng;
	const char *truth_path;
	bool header;
};

struct truth {
	double events_ok, bytes_ok, duration_ok, cpu_ok;
	uint64_t failed, n_samples, peak_workers;
	double workers_integral, threads_integral, t_first_sample, t_last_sample;
	uint64_t last_count, last_threads;
	double *dataset_events;
	uint64_t *dataset_chunks;
	double thread_cpu, thread_noncpu;
	double t_start, t_end;
};

static uint64_t rng_next(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static double rng_unit(struct gen *g)
{
	return (double)(rng_next(g) >> 11) / 9007199254740992.0;
}

static void emit(struct strbuf *sb, const struct event *ev)
{
	strbuf_reset(sb);
	if (event_encode_json(ev, sb) != 0) {
		fprintf(stderr, "gen_recording: encode failed\n");
		exit(1);
	}
	strbuf_append(sb, "\n", 1);
	fwrite(sb->data, 1, sb->len, stdout);
}

/* Workers join during the first 5 % of the run; a quarter leave in the last
 * 10 %: so the time-average differs from the peak, as in real clusters. */
static uint64_t workers_at(const struct gen *g, double frac)
{
	if (frac < 0.05)
		return 1 + (uint64_t)((double)(g->workers - 1) * frac / 0.05);
	if (frac > 0.9)
		return g->workers - g->workers / 4;
	return g->workers;
}


#define MAX_WORKERS 100000u

struct sample_buf {
	struct worker_sample *ws;
	char (*ids)[48];
	char (*names)[24];
};

static void truth_sample(struct truth *tr, double t, uint64_t n, uint64_t threads)
{
	if (tr->n_samples) {
		double dt = t - tr->t_last_sample;
		tr->workers_integral += 0.5 * (double)(tr->last_count + n) * dt;
		tr->threads_integral += 0.5 * (double)(tr->last_threads + threads) * dt;
	} else {
		tr->t_first_sample = t;
	}
	tr->n_samples++;
	tr->t_last_sample = t;
	tr->last_count = n;
	tr->last_threads = threads;
	if (n > tr->peak_workers)
		tr->peak_workers = n;
}

static void worker_fill(struct gen *g, struct sample_buf *b, uint64_t i, double frac)
{
	struct worker_sample *w = &b->ws[i];
	memset(w, 0, sizeof(*w));
	snprintf(b->ids[i], sizeof(b->ids[i]), "tcp://10.1.%u.%u:%u", (unsigned)(i / 250),
		 (unsigned)(i % 250), 40000u + (unsigned)(i % 20000));
	snprintf(b->names[i], sizeof(b->names[i]), "worker-%u", (unsigned)i);
	w->id = b->ids[i];
	w->name = b->names[i];
	w->host = "node";
	w->status = "running";
	w->nthreads = optnum_of(i % 2 ? 2 : 4); /* heterogeneous on purpose */
	w->memory_limit = optnum_of(4e9);
	w->memory_bytes = optnum_of(floor(1e9 + 1.5e9 * frac + 2e8 * rng_unit(g)));
	w->cpu_percent = optnum_of(floor(400 + 600 * rng_unit(g)) / 10);
	w->executing = optnum_of((double)(rng_next(g) % 3));
}

static void emit_sample(struct gen *g, struct strbuf *sb, struct truth *tr, struct sample_buf *b,
			double t, double frac)
{
	uint64_t n = workers_at(g, frac), threads = 0;
	for (uint64_t i = 0; i < n; i++) {
		worker_fill(g, b, i, frac);
		threads += (uint64_t)b->ws[i].nthreads.value;
	}
	struct event ev = { .type = EV_SAMPLE, .t = t };
	ev.u.sample = (struct ev_sample){ .source = "state", .scheduler_id = "Scheduler-gen",
					  .dask_version = "2026.7.0", .worker_count = (uint32_t)n,
					  .n_workers = n, .workers = b->ws };
	emit(sb, &ev);
	truth_sample(tr, t, n, threads);
}

static const char *processor = "DimuonProcessor";

static void emit_fine(struct strbuf *sb, const struct truth *tr, double t)
{
	struct fine_row rows[] = {
		{ "execute", processor, "thread-cpu", "seconds", tr->thread_cpu },
		{ "execute", processor, "thread-noncpu", "seconds", tr->thread_noncpu },
		{ "execute", processor, "disk-read", "bytes", 0.25 * tr->bytes_ok },
		{ "execute", "lambda", "thread-cpu", "seconds", 0.01 * tr->thread_cpu },
		{ "execute", "lambda", "thread-noncpu", "seconds", 0.02 * tr->thread_noncpu },
		{ "gather-dep", processor, "deserialize", "seconds", 0.003 * tr->thread_cpu },
		{ "execute", processor, "serialize", "seconds", 0.002 * tr->thread_cpu },
		{ "execute", processor, "decompress", "seconds", 0.001 * tr->thread_cpu },
	};
	struct event ev = { .type = EV_FINE, .t = t };
	ev.u.fine = (struct ev_fine){ .scope = FINE_SPAN, .n_rows = ROASTOP_ARRAY_LEN(rows),
				      .rows = rows };
	emit(sb, &ev);
}

static const char *const branch_names[] = { "nMuon",	  "Muon_pt",	 "Muon_eta",
					    "Muon_phi",	  "Muon_mass",	 "Muon_charge" };

static void dataset_name(const struct gen *g, uint64_t d, char *buf, size_t size)
{
	static const char *const known[] = { "DYJetsToLL_M-50", "TTToSemiLeptonic",
					     "SingleMuon_Run2018A" };
	if (d < ROASTOP_ARRAY_LEN(known) && g->datasets <= ROASTOP_ARRAY_LEN(known))
		snprintf(buf, size, "%s", known[d]);
	else
		snprintf(buf, size, "dataset_%03u", (unsigned)d);
}

/* Events per chunk are a function of the chunk index alone, so the
 * expected total is known before the run "starts". */
static double chunk_events(uint64_t i)
{
	uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
	h ^= h >> 29;
	return (double)(50000 + h % 100000);
}

static double us(double x)
{
	return round(x * 1e6) / 1e6;
}

static double cents(double x)
{
	return round(x * 100) / 100;
}

struct chunk_ctx {
	uint64_t i, n_workers;
	double t;
};

static void chunk_fill(struct gen *g, const struct chunk_ctx *c, struct ev_chunk *ch, char *ds,
		       char *file, char *worker, struct kv_num *kv)
{
	uint64_t d = c->i % g->datasets, per = g->files / g->datasets ? g->files / g->datasets : 1;
	uint64_t f = (c->i / g->datasets) % per;
	dataset_name(g, d, ds, 64);
	snprintf(file, 160, "root://eos.example.org//store/%s/nano_%04u.root", ds, (unsigned)f);
	snprintf(worker, 24, "worker-%u", (unsigned)((c->i * 7919) % c->n_workers));
	/* values at the precision real clocks give (us, 10 kB): short to write */
	double ev = chunk_events(c->i), dur = us(ev * (2e-5 + 4e-5 * rng_unit(g)));
	double mem0 = cents(900 + 300 * rng_unit(g)), mem1 = cents(mem0 + 40 * rng_unit(g) - 5);
	double bytes = floor(ev * (100 + 40 * rng_unit(g)));
	kv[0] = (struct kv_num){ "muon_selection", us(0.3 * dur) };
	kv[1] = (struct kv_num){ "histogram_filling", us(0.1 * dur) };
	kv[2] = (struct kv_num){ "histogram_filling", floor(100 * 8 * rng_unit(g)) / 100 };
	kv[3] = (struct kv_num){ "muon_loading", floor(0.8 * bytes) };
	*ch = (struct ev_chunk){
		.t_start = optnum_of(us(c->t - dur)), .t_end = optnum_of(c->t), .duration = optnum_of(dur),
		.mem_before_mb = optnum_of(mem0), .mem_after_mb = optnum_of(mem1),
		.mem_delta_mb = optnum_of(cents(mem1 - mem0)), .bytes_read = optnum_of(bytes),
		.timestamp = optnum_of(c->t), .num_events = optnum_of(ev),
		.entry_start = optnum_of(0), .entry_stop = optnum_of(ev),
		.num_branches_accessed = optnum_of(6), .accessed_bytes = optnum_of(floor(bytes * 0.9)),
		.accessed_uncompressed_bytes = optnum_of(floor(bytes * 2.7)),
		.branches_read_percent = optnum_of(0.5), .bytes_read_percent = optnum_of(3.25),
		.cpu_time = optnum_of(us(dur * (0.6 + 0.35 * rng_unit(g)))), .pid = optnum_of(4242),
		.seq = optnum_of((double)c->i), .dataset = ds, .file = file, .worker = worker,
		.host = "node", .n_branches = ROASTOP_ARRAY_LEN(branch_names),
		.accessed_branches = (const char **)branch_names, .n_timing = 2, .timing = kv,
		.n_memory = 1, .memory = kv + 2, .n_bytes = 1, .bytes = kv + 3,
	};
	if (c->i < g->datasets * per) {
		ch->has_file_metadata = true;
		ch->file_metadata = (struct file_meta){ file, optnum_of(0.31 + 0.01 * (double)(f % 7)),
							optnum_of(1200), optnum_of(2.5e9) };
	}
	if (g->fail_every && c->i % g->fail_every == g->fail_every - 1)
		ch->error = "OSError";
}

static void truth_chunk(struct truth *tr, const struct gen *g, const struct ev_chunk *ch,
			uint64_t i)
{
	if (ch->error) {
		tr->failed++;
		return;
	}
	uint64_t d = i % g->datasets;
	tr->events_ok += ch->num_events.value;
	tr->bytes_ok += ch->bytes_read.value;
	tr->duration_ok += ch->duration.value;
	tr->cpu_ok += ch->cpu_time.value;
	tr->dataset_events[d] += ch->num_events.value;
	tr->dataset_chunks[d]++;
	tr->thread_cpu += ch->cpu_time.value;
	tr->thread_noncpu += ch->duration.value - ch->cpu_time.value;
}

static void emit_chunk(struct gen *g, struct strbuf *sb, struct truth *tr,
		       const struct chunk_ctx *c)
{
	char ds[64], file[160], worker[24];
	struct kv_num kv[4];
	struct event ev = { .type = EV_CHUNK, .t = c->t };
	chunk_fill(g, c, &ev.u.chunk, ds, file, worker, kv);
	emit(sb, &ev);
	truth_chunk(tr, g, &ev.u.chunk, c->i);
}

static void emit_markers(struct strbuf *sb, const struct gen *g, double t, bool start,
			 double expected)
{
	static const char *dsn[3] = { "DYJetsToLL_M-50", "TTToSemiLeptonic", "SingleMuon_Run2018A" };
	struct event ev = { .t = t };
	if (start) {
		ev.type = EV_RUN_START;
		ev.u.run_start = (struct ev_run_start){
			.run_id = "gen-0001", .name = "generated dimuon run", .processor = processor,
			.n_datasets = g->datasets <= 3 ? g->datasets : 0, .datasets = dsn,
			.expected_events = optnum_of(expected), .client_host = "login01",
			.client_pid = optnum_of(31337) };
	} else {
		ev.type = EV_RUN_END;
		ev.u.run_end.run_id = "gen-0001";
	}
	emit(sb, &ev);
}

static void emit_report(struct strbuf *sb, const struct truth *tr, uint64_t chunks, double t)
{
	static const char *cols[] = { "nMuon-offsets", "Muon_pt-data", "Muon_eta-data",
				      "Muon_phi-data", "Muon_mass-data", "Muon_charge-data" };
	struct event ev = { .type = EV_REPORT, .t = t };
	ev.u.report = (struct ev_report){ .bytesread = optnum_of(tr->bytes_ok),
					  .entries = optnum_of(tr->events_ok),
					  .processtime = optnum_of(tr->duration_ok),
					  .chunks = optnum_of((double)chunks),
					  .n_columns = ROASTOP_ARRAY_LEN(cols), .columns = cols };
	emit(sb, &ev);
}

static void truth_write(const struct gen *g, const struct truth *tr)
{
	FILE *f = fopen(g->truth_path, "w");
	if (!f) {
		perror(g->truth_path);
		exit(1);
	}
	double span = tr->t_last_sample - tr->t_first_sample;
	uint64_t ok = g->chunks - tr->failed;
	fprintf(f, "{\"num_chunks\": %llu, \"num_failed_chunks\": %llu, "
		   "\"num_successful_chunks\": %llu, \"total_events\": %.17g, "
		   "\"total_bytes_read\": %.17g, \"total_cpu_time\": %.17g, "
		   "\"peak_workers\": %llu, \"avg_workers\": %.17g, \"total_cores\": %.17g, "
		   "\"elapsed_time_seconds\": %.17g, \"chunk_duration_mean\": %.17g, "
		   "\"processor_cpu_time_seconds\": %.17g, "
		   "\"processor_io_wait_time_seconds\": %.17g, \"per_dataset\": {",
		(unsigned long long)g->chunks, (unsigned long long)tr->failed,
		(unsigned long long)ok, tr->events_ok, tr->bytes_ok, tr->duration_ok,
		(unsigned long long)tr->peak_workers, tr->workers_integral / span,
		tr->threads_integral / span, tr->t_end - tr->t_start,
		ok ? tr->duration_ok / (double)ok : 0.0, tr->thread_cpu, tr->thread_noncpu);
	for (uint64_t d = 0; d < g->datasets; d++) {
		char name[64];
		dataset_name(g, d, name, sizeof(name));
		fprintf(f, "%s\"%s\": {\"num_chunks\": %llu, \"total_events\": %.17g}", d ? ", " : "",
			name, (unsigned long long)tr->dataset_chunks[d], tr->dataset_events[d]);
	}
	fprintf(f, "}}\n");
	fclose(f);
}

static void generate(struct gen *g, struct truth *tr)
{
	struct strbuf sb;
	strbuf_init(&sb);
	struct sample_buf b = { calloc(g->workers, sizeof(*b.ws)), calloc(g->workers, sizeof(*b.ids)),
				calloc(g->workers, sizeof(*b.names)) };
	if (!b.ws || !b.ids || !b.names) {
		fprintf(stderr, "gen_recording: out of memory\n");
		exit(1);
	}
	double span = g->hours * 3600.0, expected = 0, next_sample = g->t0;
	for (uint64_t i = 0; i < g->chunks; i++)
		expected += chunk_events(i);
	printf("{\"type\":\"recording\",\"format\":\"roastop-recording\",\"version\":1,"
	       "\"roastop\":\"gen_recording\",\"created\":%.0f}\n", g->t0);
	tr->t_start = g->t0;
	emit_markers(&sb, g, g->t0, true, expected);
	for (uint64_t i = 0; i < g->chunks; i++) {
		double t = us(g->t0 + span * (double)(i + 1) / (double)(g->chunks + 1));
		for (; next_sample <= t; next_sample += g->sample_interval) {
			emit_sample(g, &sb, tr, &b, next_sample, (next_sample - g->t0) / span);
			emit_fine(&sb, tr, next_sample);
		}
		struct chunk_ctx c = { i, workers_at(g, (t - g->t0) / span), t };
		emit_chunk(g, &sb, tr, &c);
	}
	emit_sample(g, &sb, tr, &b, g->t0 + span, 1.0);
	emit_fine(&sb, tr, g->t0 + span);
	emit_report(&sb, tr, g->chunks, g->t0 + span + 0.5);
	tr->t_end = g->t0 + span + 1.0;
	emit_markers(&sb, g, tr->t_end, false, 0);
	free(b.ws);
	free(b.ids);
	free(b.names);
	strbuf_free(&sb);
}

static double arg_num(const char *opt, const char *v, double lo, double hi)
{
	char *end = NULL;
	double x = v ? strtod(v, &end) : NAN;
	if (!v || end == v || *end || !(x >= lo && x <= hi)) {
		fprintf(stderr, "gen_recording: bad value for %s\n", opt);
		exit(2);
	}
	return x;
}

static void parse_args(struct gen *g, int argc, char **argv)
{
	for (int i = 1; i < argc; i += 2) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--chunks") == 0) g->chunks = (uint64_t)arg_num(o, v, 1, 1e9);
		else if (strcmp(o, "--workers") == 0) g->workers = (uint64_t)arg_num(o, v, 1, MAX_WORKERS);
		else if (strcmp(o, "--hours") == 0) g->hours = arg_num(o, v, 1e-3, 1e4);
		else if (strcmp(o, "--sample-interval") == 0) g->sample_interval = arg_num(o, v, 0.01, 1e5);
		else if (strcmp(o, "--datasets") == 0) g->datasets = (uint64_t)arg_num(o, v, 1, 1000);
		else if (strcmp(o, "--files") == 0) g->files = (uint64_t)arg_num(o, v, 1, 1e6);
		else if (strcmp(o, "--fail-every") == 0) g->fail_every = (uint64_t)arg_num(o, v, 0, 1e9);
		else if (strcmp(o, "--seed") == 0) g->rng = (uint64_t)arg_num(o, v, 1, 1e15);
		else if (strcmp(o, "--truth") == 0 && v) g->truth_path = v;
		else {
			fprintf(stderr, "usage: gen_recording [--chunks N] [--workers N] [--hours H] "
					"[--sample-interval S] [--datasets N] [--files N] "
					"[--fail-every K] [--seed N] [--truth FILE]\n");
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	struct gen g = { .chunks = 2000, .workers = 8, .hours = 0.05, .sample_interval = 1.0,
			 .datasets = 3, .files = 30, .fail_every = 0, .t0 = 1767225600.0,
			 .rng = 88172645463325252ull };
	parse_args(&g, argc, argv);
	struct truth tr = { 0 };
	tr.dataset_events = calloc(g.datasets, sizeof(double));
	tr.dataset_chunks = calloc(g.datasets, sizeof(uint64_t));
	if (!tr.dataset_events || !tr.dataset_chunks)
		return 1;
	generate(&g, &tr);
	if (fflush(stdout) != 0)
		return 1;
	if (g.truth_path)
		truth_write(&g, &tr);
	free(tr.dataset_events);
	free(tr.dataset_chunks);
	return 0;
}
