/* Each rule of docs/diagnosis.md on runs built through run_apply: it fires
 * on a run made to show it, naming the file, site or worker, and not on a
 * healthy run (uniform files, one chunk per thread at a time). */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "roastop/diagnosis.h"
#include "roastop/metrics_json.h"
#include "roastop/report_text.h"

#define T0 1000.0

static struct run R;
/* process()'s CPU time as a share of its duration in chunk(); 0: none sent */
static double cpu_share;
/* its wait for a CPU, likewise; negative: none sent */
static double wait_share;

static int setup(void **state)
{
	*state = &R;
	cpu_share = 0;
	wait_share = -1;
	return run_init(&R);
}

static int teardown(void **state)
{
	run_destroy(*state);
	return 0;
}

static void apply(struct event ev)
{
	assert_int_equal(run_apply(&R, &ev), 0);
}

static void start(void)
{
	struct event ev = test_event(EV_RUN_START, T0);
	ev.u.run_start.run_id = "r";
	ev.u.run_start.processor = "P";
	apply(ev);
}

static void end(double t)
{
	apply(test_event(EV_RUN_END, t));
}

struct ck {
	const char *file, *worker;
	double t0, dur, events, mem_before, mem_after;
};

/* A chunk whose process() spent cpu seconds on the CPU (none: not sent). */
static void chunk_cpu(struct ck c, optnum cpu)
{
	struct event ev = test_event(EV_CHUNK, c.t0 + c.dur);
	struct ev_chunk *e = &ev.u.chunk;
	e->dataset = "ds";
	e->file = c.file;
	e->worker = c.worker;
	e->t_start = optnum_of(c.t0);
	e->t_end = optnum_of(c.t0 + c.dur);
	e->duration = optnum_of(c.dur);
	e->num_events = optnum_of(c.events);
	e->mem_before_mb = optnum_of(c.mem_before > 0 ? c.mem_before : 500);
	e->mem_after_mb = optnum_of(c.mem_after > 0 ? c.mem_after : 500);
	e->cpu_time = cpu;
	e->cpu_wait = wait_share >= 0 ? optnum_of(wait_share * c.dur) : optnum_none();
	apply(ev);
}

static void chunk(struct ck c)
{
	chunk_cpu(c, cpu_share > 0 ? optnum_of(cpu_share * c.dur) : optnum_none());
}

/* An attempt at the chunk [entry, entry + 1000) of file on worker at t:
 * failed with error, or successful (error NULL). */
static void attempt(const char *file, const char *worker, double t, double entry,
		    const char *error)
{
	struct event ev = test_event(EV_CHUNK, t + 1);
	struct ev_chunk *e = &ev.u.chunk;
	e->dataset = "ds";
	e->file = file;
	e->worker = worker;
	e->error = error;
	e->t_start = optnum_of(t);
	e->t_end = optnum_of(t + 1);
	e->duration = optnum_of(1);
	e->entry_start = optnum_of(entry);
	e->entry_stop = optnum_of(entry + 1000);
	if (!error)
		e->num_events = optnum_of(1000);
	apply(ev);
}

/* Two workers w0 and w1 of 2 threads, `executing` tasks each, memory mem
 * of a 1000-byte limit, status st. */
static void sample(double t, double executing, double mem, const char *st)
{
	struct worker_sample s[2] = {
		{ .id = "w0", .name = "w0", .status = st },
		{ .id = "w1", .name = "w1", .status = "running" },
	};
	for (int i = 0; i < 2; i++) {
		s[i].nthreads = optnum_of(2);
		s[i].memory_bytes = optnum_of(i == 0 ? mem : 400);
		s[i].memory_limit = optnum_of(1000);
		s[i].executing = optnum_of(executing);
	}
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample = (struct ev_sample){ .worker_count = 2, .n_workers = 2, .workers = s };
	apply(ev);
}

/* Process() time and the tasks' time in all (fine metrics, span scope). */
static void fine(double t, double task_seconds)
{
	struct fine_row row = { "execute", "P", "thread-cpu", "seconds", task_seconds };
	struct event ev = test_event(EV_FINE, t);
	ev.u.fine = (struct ev_fine){ FINE_SPAN, 1, &row };
	apply(ev);
}

static const char *const FILES[4] = { "/data/f0.root", "/data/f1.root", "/data/f2.root",
				      "/data/f3.root" };

/* waves x 4 chunks, one per thread at a time: 1 s and 1000 events each,
 * the files in turn, two chunks per worker; slow_file's chunks (or every
 * chunk of slow_worker) take `factor` times longer. */
static double waves(int n, const char *slow_file, const char *slow_worker, double factor)
{
	double t = T0 + 1;
	for (int w = 0; w < n; w++) {
		double longest = 0;
		for (int k = 0; k < 4; k++) {
			const char *file = FILES[(w + k) % 4], *worker = k % 2 ? "w1" : "w0";
			bool slow = (slow_file && strcmp(file, slow_file) == 0) ||
				    (slow_worker && strcmp(worker, slow_worker) == 0);
			double d = slow ? factor : 1.0;
			chunk((struct ck){ file, worker, t, d, 1000, 0, 0 });
			longest = fmax(longest, d);
		}
		sample(t + longest, 2, 500, "running");
		t += longest;
	}
	return t;
}

static void evaluate(double now, bool listening, struct findings *fs)
{
	struct metrics m;
	metrics_compute(&R, now, NULL, &m);
	struct diagnosis_context ctx = { .now = now, .listening = listening };
	diagnosis_evaluate(&R, &m, &ctx, fs);
}

static const struct finding *find(const struct findings *fs, enum finding_id id)
{
	for (size_t i = 0; i < fs->n; i++)
		if (fs->f[i].id == id)
			return &fs->f[i];
	return NULL;
}

/* The finding id, which must be there (a blank one when not, after the
 * failure is recorded). */
static const struct finding *must(const struct findings *fs, enum finding_id id)
{
	static const struct finding blank;
	const struct finding *f = find(fs, id);
	if (!f)
		print_message("no %s finding among %zu\n", diagnosis_id_name(id), fs->n);
	assert_non_null(f);
	return f ? f : &blank;
}

static void healthy_run_has_no_finding(void **state)
{
	(void)state;
	start();
	cpu_share = 0.9; /* CPU bound: the I/O rule speaks, and must stay silent */
	sample(T0 + 0.5, 0, 500, "running");
	double t = waves(8, NULL, NULL, 1);
	fine(t, 34); /* process() 32 s of 34 s of task time */
	struct findings fs;
	evaluate(t, true, &fs); /* live */
	assert_int_equal(fs.n, 0);
	end(t + 0.2);
	evaluate(t + 5, true, &fs); /* final */
	for (size_t i = 0; i < fs.n; i++)
		print_message("fired: %s: %s\n", diagnosis_id_name(fs.f[i].id), fs.f[i].evidence);
	assert_int_equal(fs.n, 0);
	assert_null(diagnosis_top(&fs));
}

static void slow_file_is_named(void **state)
{
	(void)state;
	start();
	double t = waves(8, FILES[3], NULL, 10);
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_SLOW_FILE);
	assert_non_null(strstr(f->title, "f3.root"));
	assert_non_null(strstr(f->evidence, "/data/f3.root"));
	assert_non_null(strstr(f->evidence, "10.0x slower"));
	assert_true(f->cost > 0.5 && f->cost < 1);
	assert_true(f->since >= T0 + 1 && f->since < t);
	assert_null(find(&fs, FIND_BAD_WORKER)); /* the file's chunks ran on both */
}

/* slower_than_before: the slow-file run against a healthy one of 8 waves
 * of 1 s (4,000 events in about 8 s): the fall, the previous run named, the
 * slow file as what this run has and that one had not; silent within 25 %,
 * and without a previous run. */
static void slower_than_before_names_what_is_new(void **state)
{
	(void)state;
	start();
	double t = waves(8, FILES[3], NULL, 10);
	end(t);
	struct metrics m;
	metrics_compute(&R, t, NULL, &m);
	struct diagnosis_previous prev = { .dir = "2026-01-01_10-00-00_first", .n_ids = 1,
					   .ids = { "tail" } };
	prev.rate_khz = optnum_of(m.event_rate_elapsed_khz.value * 3);
	prev.workers = m.avg_workers;
	struct diagnosis_context ctx = { .now = t, .previous = &prev };
	struct findings fs;
	diagnosis_evaluate(&R, &m, &ctx, &fs);
	const struct finding *f = must(&fs, FIND_SLOWER_THAN_BEFORE);
	assert_non_null(strstr(f->title, "67 % slower than the last run, 2026-01-01_10-00-00_first"));
	assert_non_null(strstr(f->evidence, "new since: slow_file (slow file: "));
	assert_near(f->cost, 2.0 / 3, 1e-9);
	prev.rate_khz = optnum_of(m.event_rate_elapsed_khz.value * 1.2); /* within the spread */
	diagnosis_evaluate(&R, &m, &ctx, &fs);
	assert_null(find(&fs, FIND_SLOWER_THAN_BEFORE));
	ctx.previous = NULL;
	prev.rate_khz = optnum_of(m.event_rate_elapsed_khz.value * 3);
	diagnosis_evaluate(&R, &m, &ctx, &fs);
	assert_null(find(&fs, FIND_SLOWER_THAN_BEFORE));
}

static void slow_site_is_named(void **state)
{
	(void)state;
	static const char *const urls[5] = { "root://fast.example//a1.root", "root://fast.example//a2.root",
					     "root://other.example:1094//a3.root",
					     "root://u@slow.example//b1.root", "root://slow.example//b2.root" };
	start();
	double t = T0 + 1;
	for (int i = 0; i < 20; i++, t += 1) {
		bool slow = i % 5 >= 3;
		chunk((struct ck){ urls[i % 5], i % 2 ? "w1" : "w0", t, slow ? 5 : 1, 1000, 0, 0 });
	}
	end(t + 5);
	struct findings fs;
	evaluate(t + 5, true, &fs);
	const struct finding *f = must(&fs, FIND_SLOW_SITE);
	assert_string_equal(f->title, "slow site: slow.example");
	assert_non_null(strstr(f->evidence, "over 2 files"));
}

/* URLs longer than a chunk record keeps (its end, the file name): the
 * site is read off the run's whole name. */
static void slow_site_of_long_urls(void **state)
{
	(void)state;
	static const char *const hosts[4] = { "root://fast.example//", "root://other.example//",
					      "root://slow.example//", "root://slow.example//" };
	char urls[4][300];
	char dir[200];
	memset(dir, 'd', sizeof(dir) - 1);
	dir[sizeof(dir) - 1] = '\0';
	for (int k = 0; k < 4; k++)
		snprintf(urls[k], sizeof(urls[k]), "%s%s/f%d.root", hosts[k], dir, k);
	start();
	double t = T0 + 1;
	for (int i = 0; i < 16; i++, t += 1)
		chunk((struct ck){ urls[i % 4], i % 2 ? "w1" : "w0", t, i % 4 >= 2 ? 5 : 1, 1000, 0, 0 });
	end(t + 5);
	struct findings fs;
	evaluate(t + 5, true, &fs);
	assert_string_equal(must(&fs, FIND_SLOW_SITE)->title, "slow site: slow.example");
	/* f2 and f3 alike, 5x: the costlier named by its whole URL */
	assert_non_null(strstr(must(&fs, FIND_SLOW_FILE)->evidence, "root://slow.example//ddd"));
}

static void bad_worker_is_named(void **state)
{
	(void)state;
	start();
	double t = waves(8, NULL, "w1", 4);
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_BAD_WORKER);
	assert_string_equal(f->title, "slow worker: w1");
	assert_non_null(strstr(f->evidence, "4.0x slower"));
	assert_null(find(&fs, FIND_SLOW_FILE)); /* every file is slowed alike */
}

/* w1's chunks take 4 s where w0's take 1, all of it waiting for a CPU (the
 * same 0.9 s on it): a node short of cores, not a slow worker. */
static void waiting_for_a_cpu_is_no_slow_worker(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 32; i++, t += 1) {
		bool w1 = i % 2;
		double d = w1 ? 4 : 1;
		cpu_share = 0.9 / d;
		wait_share = w1 ? 3.0 / d : 0;
		chunk((struct ck){ FILES[i % 4], w1 ? "w1" : "w0", t, d, 1000, 0, 0 });
	}
	end(t + 4);
	struct findings fs;
	evaluate(t + 4, true, &fs);
	assert_null(find(&fs, FIND_BAD_WORKER));
	assert_null(find(&fs, FIND_SLOW_FILE));
	must(&fs, FIND_CPU_STARVED);
}

/* n chunks of 1 s and 1000 events from t, a second apart: the files in
 * turn, on w0 and w1 in turn (each reads every file); the next free time. */
static double even_chunks(int n, double t)
{
	for (int i = 0; i < n; i++, t += 1)
		chunk((struct ck){ FILES[i % 4], i % 2 ? "w1" : "w0", t, 1, 1000, 0, 0 });
	return t;
}

static void no_place_named(const struct findings *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		print_message("fired: %s: %s\n", diagnosis_id_name(fs->f[i].id), fs->f[i].evidence);
	assert_null(find(fs, FIND_BAD_WORKER));
	assert_null(find(fs, FIND_SLOW_FILE));
	assert_null(find(fs, FIND_SLOW_SITE));
}

/* Dask gives a slow worker few chunks because it is slow: w2 ran 2 of 18,
 * 5 s each, where every other chunk took 1 to 1.6 s. */
static void few_slow_chunks_name_the_worker(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 16; i++, t += 1)
		chunk((struct ck){ FILES[i % 4], i % 2 ? "w1" : "w0", t, 1 + 0.04 * i, 1000, 0, 0 });
	chunk((struct ck){ FILES[1], "w2", T0 + 1, 5, 1000, 0, 0 });
	chunk((struct ck){ FILES[2], "w2", T0 + 6, 5.5, 1000, 0, 0 });
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_BAD_WORKER);
	assert_string_equal(f->title, "slow worker: w2");
	/* the others' 90th percentile: the 15th of 16, 1.56 s; 5 / 1.56 = 3.2 */
	assert_non_null(strstr(f->evidence, "w2: 2 chunks at 200 ev/s, 182 ev/s (3.2x slower or more "
					    "each) against the other workers' slowest, 641 ev/s "
					    "(the 90th percentile of their 16 chunks)"));
	assert_non_null(strstr(f->evidence, "its slow chunks read 2 files, 2 of them read by "
					    "other workers"));
	assert_true(fabs(f->since - (T0 + 6)) < 1e-9); /* its first chunk's end */
	assert_null(find(&fs, FIND_SLOW_FILE));
}

/* w2's two slow chunks are both of f0, whose other two chunks ran on w0
 * and w1 as fast as any: the worker's, not the file's. */
static void slow_worker_on_one_file_is_the_worker(void **state)
{
	(void)state;
	start();
	double t = even_chunks(14, T0 + 1);
	chunk((struct ck){ FILES[0], "w2", T0 + 1, 6, 1000, 0, 0 });
	chunk((struct ck){ FILES[0], "w2", T0 + 7, 6, 1000, 0, 0 });
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_BAD_WORKER);
	assert_string_equal(f->title, "slow worker: w2");
	assert_non_null(strstr(f->evidence, "6.0x slower or more each"));
	assert_non_null(strstr(f->evidence, "read 1 file, 1 of them read by other workers"));
	assert_null(find(&fs, FIND_SLOW_FILE));
}

/* A loaded machine: the durations spread from 1 to 3 s whatever the
 * worker, but w2's 2 chunks spent 1 s of CPU each where every other chunk
 * spent 0.2 s: judged on the CPU time, w2 is slow. */
static void slow_on_the_cpu_under_load(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 16; i++, t += 1)
		chunk_cpu((struct ck){ FILES[i % 4], i % 2 ? "w1" : "w0", t, 1 + (i / 2) % 3, 1000, 0, 0 },
			  optnum_of(0.2 + 0.001 * i));
	chunk_cpu((struct ck){ FILES[1], "w2", T0 + 1, 3, 1000, 0, 0 }, optnum_of(1.0));
	chunk_cpu((struct ck){ FILES[2], "w2", T0 + 4, 3.5, 1000, 0, 0 }, optnum_of(1.0));
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_BAD_WORKER);
	assert_string_equal(f->title, "slow worker: w2");
	/* 1 / 0.214 (the 15th of 16 CPU times) = 4.7 */
	assert_non_null(strstr(f->evidence, "w2: 2 chunks at 1.00 kev/s, 1.00 kev/s of CPU time (4.7x "
					    "slower or more each)"));
	assert_non_null(strstr(f->evidence, "of CPU time beyond the other workers' median pace"));
	run_destroy(&R); /* the same durations without CPU times: not enough */
	assert_int_equal(run_init(&R), 0);
	start();
	for (int i = 0; i < 16; i++)
		chunk((struct ck){ FILES[i % 4], i % 2 ? "w1" : "w0", T0 + 1 + i, 1 + (i / 2) % 3, 1000,
				   0, 0 });
	chunk((struct ck){ FILES[1], "w2", T0 + 1, 3, 1000, 0, 0 });
	chunk((struct ck){ FILES[2], "w2", T0 + 4, 3.5, 1000, 0, 0 });
	end(t);
	evaluate(t, true, &fs);
	no_place_named(&fs);
}

/* One chunk of f1 takes 40 s; its 7 siblings and every other chunk 1 s: a
 * straggler, neither a slow file nor a slow worker. */
static void one_straggler_is_no_slow_file(void **state)
{
	(void)state;
	start();
	double t = even_chunks(32, T0 + 1);
	chunk((struct ck){ FILES[1], "w1", t, 40, 1000, 0, 0 });
	end(t + 40);
	struct findings fs;
	evaluate(t + 40, true, &fs);
	no_place_named(&fs);
}

/* Ten chunks of w1, each 1.5 times the others': barely slower, nothing. */
static void barely_slower_worker_is_nothing(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 20; i++, t += 1)
		chunk((struct ck){ FILES[i % 4], i % 2 ? "w1" : "w0", t, i % 2 ? 1.5 : 1, 1000, 0, 0 });
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	no_place_named(&fs);
}

/* A loaded machine: w0's chunks take 1 s, or 3 s when the load peaks (a
 * third of them, of every file); w1's 4 chunks 2.2 s each. Twice w0's
 * median, within its spread: not a slow worker. */
static void worker_within_the_others_spread_is_nothing(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 12; i++, t += 1)
		chunk((struct ck){ FILES[i % 4], "w0", t, i % 3 == 2 ? 3 : 1, 1000, 0, 0 });
	for (int i = 0; i < 4; i++)
		chunk((struct ck){ FILES[i], "w1", T0 + 1 + 2.2 * i, 2.2, 1000, 0, 0 });
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	no_place_named(&fs);
}

/* f3 is slow on every worker that reads it; w2 got only 2 chunks, both of
 * f3: the file is named, not w2. */
static void slow_file_read_by_a_worker_of_few_chunks(void **state)
{
	(void)state;
	start();
	double t = waves(6, FILES[3], NULL, 10);
	chunk((struct ck){ FILES[3], "w2", T0 + 1, 10, 1000, 0, 0 });
	chunk((struct ck){ FILES[3], "w2", T0 + 11, 10, 1000, 0, 0 });
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_SLOW_FILE);
	assert_string_equal(f->title, "slow file: f3.root");
	assert_non_null(strstr(f->evidence, "/data/f3.root: 8 of its 8 chunks at 3x the other "
					    "files' median pace or slower, on 3 of the 3 workers "
					    "that read it"));
	assert_null(find(&fs, FIND_BAD_WORKER));
}

/* w2 read f3 alone and nothing else, slow; f3 was read by no other worker:
 * the file's finding says the two cannot be told apart. */
static void file_and_worker_told_apart_or_said(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 12; i++, t += 1)
		chunk((struct ck){ FILES[i % 3], i % 2 ? "w1" : "w0", t, 1, 1000, 0, 0 });
	for (int i = 0; i < 3; i++)
		chunk((struct ck){ FILES[3], "w2", T0 + 1 + 6 * i, 6, 1000, 0, 0 });
	end(t + 8);
	struct findings fs;
	evaluate(t + 8, true, &fs);
	const struct finding *f = must(&fs, FIND_SLOW_FILE);
	assert_string_equal(f->title, "slow file: f3.root");
	assert_non_null(strstr(f->evidence, "; all its chunks ran on w2, which read nothing "
					    "else: the file and that worker cannot be told apart"));
	assert_null(find(&fs, FIND_BAD_WORKER));
}

/* f3's chunks are slow on w0 only and fast on w1: not the file. */
static void file_slow_on_one_reader_is_no_slow_file(void **state)
{
	(void)state;
	start();
	double t = even_chunks(24, T0 + 1);
	for (int i = 0; i < 3; i++)
		chunk((struct ck){ FILES[3], "w0", t + 10 * i, 10, 1000, 0, 0 });
	chunk((struct ck){ FILES[3], "w1", t, 1, 1000, 0, 0 });
	end(t + 30);
	struct findings fs;
	evaluate(t + 30, true, &fs);
	assert_null(find(&fs, FIND_SLOW_FILE));
}

/* w1 is 4 times slower on every file and f3 10 times on every worker:
 * both are named, each for its own chunks. */
static void slow_worker_and_slow_file_both_named(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 32; i++, t += 1) {
		bool w1 = i % 2, f3 = i % 4 == 3 || i % 8 == 2;
		double d = (w1 ? 4 : 1) * (f3 ? 10 : 1);
		chunk((struct ck){ FILES[f3 ? 3 : i % 3], w1 ? "w1" : "w0", t, d, 1000, 0, 0 });
	}
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	assert_string_equal(must(&fs, FIND_BAD_WORKER)->title, "slow worker: w1");
	assert_non_null(strstr(must(&fs, FIND_BAD_WORKER)->evidence, "(4.0x slower)"));
	assert_string_equal(must(&fs, FIND_SLOW_FILE)->title, "slow file: f3.root");
}

/* 6 waves, then a last one whose chunk on f0 takes 12 s: 3 threads idle. */
static void tail_is_told_once_ended(void **state)
{
	(void)state;
	start();
	double t = waves(6, NULL, NULL, 1);
	chunk((struct ck){ FILES[0], "w0", t, 12, 1000, 0, 0 });
	for (int k = 1; k < 4; k++)
		chunk((struct ck){ FILES[k], k % 2 ? "w1" : "w0", t, 1, 1000, 0, 0 });
	struct findings fs;
	evaluate(t + 12, true, &fs);
	assert_null(find(&fs, FIND_TAIL)); /* live: no chunk in flight is known */
	end(t + 12);
	evaluate(t + 12, true, &fs);
	const struct finding *f = must(&fs, FIND_TAIL);
	assert_true(fabs(f->since - (t + 1)) < 1e-6); /* when the other three ended */
	assert_non_null(strstr(f->evidence, "f0.root"));
	assert_true(f->cost > 0.4); /* 33 idle thread-seconds of 4 threads over 19 s */
}

/* The chunk that held the tail is named, not the one queued behind it,
 * which ends last in a moment. */
static void tail_names_the_chunk_that_held_it(void **state)
{
	(void)state;
	start();
	double t = waves(6, NULL, NULL, 1);
	chunk((struct ck){ FILES[2], "w0", t - 1, 12, 1000, 0, 0 });
	chunk((struct ck){ FILES[1], "w0", t + 11, 1, 1000, 0, 0 });
	end(t + 12);
	struct findings fs;
	evaluate(t + 12, true, &fs);
	const struct finding *f = must(&fs, FIND_TAIL);
	assert_non_null(strstr(f->evidence, "its longest chunk: 12 s on w0, file /data/f2.root"));
}

/* One wave fills the 4 threads (no CPU time sent), then 40 chunks of
 * 1 ms, 50 ms apart, on the CPU `cpu` and waiting for one `wait` of their
 * time: the threads were between tasks, not waiting on a chunk (no tail),
 * and process() held them too little for io_bound or cpu_starved to judge
 * it. */
static void tiny_chunks_after_a_wave(double cpu, double wait)
{
	start();
	double t = waves(1, NULL, NULL, 1);
	cpu_share = cpu;
	wait_share = wait;
	for (int i = 0; i < 40; i++, t += 0.05)
		chunk((struct ck){ FILES[i % 4], i % 2 ? "w1" : "w0", t, 0.001, 1000, 0, 0 });
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	assert_null(find(&fs, FIND_TAIL));
	assert_null(find(&fs, FIND_IO_BOUND));
	assert_null(find(&fs, FIND_CPU_STARVED));
}

static void gaps_between_tiny_chunks_are_no_tail(void **state)
{
	(void)state;
	tiny_chunks_after_a_wave(0.1, 0.85); /* starved, over 40 ms */
}

static void tiny_chunks_off_the_cpu_are_not_io(void **state)
{
	(void)state;
	tiny_chunks_after_a_wave(0.1, -1); /* 90 % off the CPU, over 40 ms */
}

/* 16 waves of 4 chunks of 0.1 s, a second apart: the threads idle 0.9 s
 * between chunks. */
static void small_chunks_suggest_a_size(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int w = 0; w < 16; w++, t += 1) {
		for (int k = 0; k < 4; k++)
			chunk((struct ck){ FILES[(w + k) % 4], k % 2 ? "w1" : "w0", t, 0.1, 1000, 0, 0 });
		sample(t + 0.1, 2, 500, "running");
	}
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_SMALL_CHUNKS);
	/* 4 threads over 15.1 s, 6.4 s of it in chunks: 54 s idle, 89 % */
	assert_true(fabs(f->cost - 54.0 / 60.4) < 1e-9);
	assert_true(fabs(f->since - (T0 + 1)) < 1e-9);
	/* 54 / 64 s outside a chunk, 0.1 ms an event: 0.84375 x 0.8 / (0.2 x 1e-4) */
	assert_non_null(strstr(f->suggestion, "33,750 events"));
	assert_null(find(&fs, FIND_TAIL)); /* the waves end together: no tail */
}

/* Two 2-thread workers, each with `executing` tasks running and
 * `processing` assigned (running or queued on it). */
static void sample_tasks(double t, double executing, double processing)
{
	struct worker_sample s[2] = {
		{ .id = "w0", .name = "w0", .status = "running" },
		{ .id = "w1", .name = "w1", .status = "running" },
	};
	for (int i = 0; i < 2; i++) {
		s[i].nthreads = optnum_of(2);
		s[i].executing = optnum_of(executing);
		s[i].processing = optnum_of(processing);
	}
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample = (struct ev_sample){ .worker_count = 2, .n_workers = 2, .workers = s };
	apply(ev);
}

/* Short tasks end between the scheduler's samples, which then see few
 * executing: the tasks queued on the workers say they had work (as on a
 * real run of 100-event chunks: executing 0 or 1, processing 2 on 1-thread
 * workers). With nothing assigned, they idled for want of work: no finding. */
static void small_chunks_judged_by_tasks_assigned(void **state)
{
	(void)state;
	for (int busy = 1; busy >= 0; busy--) {
		run_destroy(&R);
		assert_int_equal(run_init(&R), 0);
		start();
		double t = T0 + 1;
		for (int w = 0; w < 16; w++, t += 1) {
			for (int k = 0; k < 4; k++)
				chunk((struct ck){ FILES[(w + k) % 4], k % 2 ? "w1" : "w0", t, 0.1, 1000, 0, 0 });
			sample_tasks(t + 0.5, 0, busy ? 3 : 0);
		}
		struct findings fs;
		evaluate(t, true, &fs);
		if (busy)
			assert_true(fabs(must(&fs, FIND_SMALL_CHUNKS)->cost - 54.0 / 60.4) < 1e-9);
		else
			assert_null(find(&fs, FIND_SMALL_CHUNKS));
	}
}

/* Past the chunk records' cap (a sample): judged on the core efficiency.
 * 5,000 chunks of 0.1 s, 4 at a time a second apart: 4 threads 10 % busy. */
static void small_chunks_past_the_records_cap(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int w = 0; w < 1250; w++, t += 1) {
		for (int k = 0; k < 4; k++)
			chunk((struct ck){ FILES[(w + k) % 4], k % 2 ? "w1" : "w0", t, 0.1, 1000, 0, 0 });
		sample(t + 0.1, 2, 500, "running");
	}
	assert_true(rawchunks_sampled(&R.raw));
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_SMALL_CHUNKS);
	assert_true(f->cost > 0.85 && f->cost < 0.95);
	assert_non_null(strstr(f->suggestion, "events would bring it under 20%"));
}

static void memory_growth_names_the_worker(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 10; i++, t += 1) { /* w0 keeps 60 MB a chunk, w1 stays */
		chunk((struct ck){ FILES[i % 4], "w0", t, 1, 1000, 500 + 60.0 * i, 560 + 60.0 * i });
		chunk((struct ck){ FILES[(i + 1) % 4], "w1", t, 1, 1000, 500, 500 });
	}
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_MEMORY_GROWTH);
	assert_string_equal(f->title, "memory grows chunk after chunk on w0");
	assert_non_null(strstr(f->evidence, "up after 9 of them"));
}

static void memory_plateau_is_no_growth(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 10; i++, t += 1) /* a 400 MB cache filled by the first chunks */
		chunk((struct ck){ FILES[i % 4], "w0", t, 1, 1000, i < 2 ? 500 + 200.0 * i : 900,
				   i < 2 ? 700 + 200.0 * i : 900 });
	struct findings fs;
	evaluate(t, true, &fs);
	assert_null(find(&fs, FIND_MEMORY_GROWTH));
}

/* One chunk fills a 1.5 GB cache at once; after it the memory creeps up
 * 1 MB a chunk: up after every chunk, and by far more than 256 MB in all,
 * but not chunk after chunk. */
static void memory_filled_at_once_is_no_growth(void **state)
{
	(void)state;
	start();
	double t = T0 + 1, mem = 500;
	for (int i = 0; i < 10; i++, t += 1) {
		double after = mem + (i == 1 ? 1500 : 1);
		chunk((struct ck){ FILES[i % 4], "w0", t, 1, 1000, mem, after });
		mem = after;
	}
	struct findings fs;
	evaluate(t, true, &fs);
	assert_null(find(&fs, FIND_MEMORY_GROWTH));
}

static void memory_pressure_and_paused(void **state)
{
	(void)state;
	start();
	sample(T0 + 1, 1, 500, "running");
	struct findings fs;
	evaluate(T0 + 1, true, &fs);
	assert_null(find(&fs, FIND_MEMORY_PRESSURE));
	sample(T0 + 2, 1, 900, "running");
	evaluate(T0 + 2, true, &fs);
	const struct finding *f = must(&fs, FIND_MEMORY_PRESSURE);
	assert_int_equal(f->severity, SEV_WARNING);
	assert_string_equal(f->title, "memory pressure on w0");
	sample(T0 + 3, 1, 990, "paused");
	evaluate(T0 + 3, true, &fs);
	assert_int_equal(diagnosis_top(&fs)->id, FIND_MEMORY_PRESSURE);
	assert_int_equal(diagnosis_top(&fs)->severity, SEV_CRITICAL);
}

static void silent_run_after_15_seconds_of_tasks(void **state)
{
	(void)state;
	start();
	for (int i = 1; i <= 20; i++)
		sample(T0 + i, 1, 500, "running");
	struct findings fs;
	evaluate(T0 + 10, true, &fs);
	assert_null(find(&fs, FIND_SILENT_RUN)); /* not yet held 15 s */
	evaluate(T0 + 20, false, &fs);
	assert_null(find(&fs, FIND_SILENT_RUN)); /* no listener: nothing to send to */
	evaluate(T0 + 20, true, &fs);
	const struct finding *f = must(&fs, FIND_SILENT_RUN);
	assert_int_equal(f->severity, SEV_CRITICAL);
	assert_true(fabs(f->since - (T0 + 1)) < 1e-9);
	assert_string_equal(f->title, "2 tasks run, no chunk came");
	struct findings rec; /* the files' and /metrics': the silent run is the screen's */
	diagnosis_of_record(&fs, &rec);
	assert_int_equal(rec.n, fs.n - 1);
	assert_null(find(&rec, FIND_SILENT_RUN));
}

static void silent_scheduler(void **state)
{
	(void)state;
	start();
	double t = T0 + 1;
	for (int i = 0; i < 12; i++, t += 1) {
		chunk((struct ck){ FILES[i % 4], "w0", t, 1, 1000, 0, 0 });
		sample(t + 1, 0, 500, "running");
	}
	struct findings fs;
	evaluate(t, true, &fs);
	assert_non_null(find(&fs, FIND_SILENT_SCHEDULER));
	assert_null(find(&fs, FIND_SILENT_RUN));
}

/* metrics.json's roastop.findings and summary.txt's section, as written. */
static void written_with_the_measurement(void **state)
{
	(void)state;
	start();
	double t = waves(8, FILES[3], NULL, 10);
	end(t);
	struct metrics m;
	metrics_compute(&R, t, NULL, &m);
	struct findings all, rec;
	struct diagnosis_context ctx = { .now = t };
	diagnosis_evaluate(&R, &m, &ctx, &all);
	diagnosis_of_record(&all, &rec);
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(metrics_write_json(&m, &R, &rec, NULL, &sb), 0);
	cJSON *j = cJSON_Parse(sb.data);
	const cJSON *fs = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "roastop"), "findings");
	assert_true(cJSON_IsArray(fs));
	const cJSON *slow = NULL;
	for (const cJSON *f = fs->child; f; f = f->next)
		if (strcmp(cJSON_GetObjectItem(f, "id")->valuestring, "slow_file") == 0)
			slow = f;
	assert_non_null(slow);
	assert_string_equal(cJSON_GetObjectItem(slow, "title")->valuestring, "slow file: f3.root");
	assert_true(cJSON_GetObjectItem(slow, "since_run_seconds")->valuedouble > 0);
	cJSON_Delete(j);
	strbuf_free(&sb);
	strbuf_init(&sb);
	text_summary(&m, &R, &rec, &sb);
	assert_non_null(strstr(sb.data, "\nFindings\n--------\n[warning] slow file: f3.root (slow_file)\n"));
	strbuf_free(&sb);
}

static void healthy_writes_no_finding(void **state)
{
	(void)state;
	start();
	double t = waves(8, NULL, NULL, 1);
	end(t);
	struct metrics m;
	metrics_compute(&R, t, NULL, &m);
	struct findings all, rec;
	struct diagnosis_context ctx = { .now = t };
	diagnosis_evaluate(&R, &m, &ctx, &all);
	diagnosis_of_record(&all, &rec);
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(metrics_write_json(&m, &R, &rec, NULL, &sb), 0);
	cJSON *j = cJSON_Parse(sb.data);
	const cJSON *fs = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "roastop"), "findings");
	assert_true(cJSON_IsArray(fs) && cJSON_GetArraySize(fs) == 0); /* [], not absent */
	cJSON_Delete(j);
	strbuf_free(&sb);
	strbuf_init(&sb);
	text_summary(&m, &R, &rec, &sb);
	assert_non_null(strstr(sb.data, "\nFindings\n--------\nNo finding"));
	strbuf_free(&sb);
}

static void io_bound_when_process_waits(void **state)
{
	(void)state;
	start();
	cpu_share = 0.1; /* 2 threads a worker: 0.2 of a core per process */
	double t = waves(8, NULL, NULL, 1);
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_IO_BOUND);
	assert_non_null(strstr(f->title, "90% of its time off the CPU"));
	assert_non_null(strstr(f->evidence, "of 2 threads used 0.20 cores"));
	assert_non_null(strstr(f->evidence, "(90% off the CPU, its wait for a CPU not measured)"));
	assert_true(fabs(f->cost - 0.9) < 1e-9);
	assert_true(f->since >= T0 + 1 && f->since < t);
}

/* 8 waves whose process() is on the CPU cpu and waits for one wait of its
 * time, evaluated once ended. */
static void cpu_waves(double cpu, double wait, struct findings *fs)
{
	start();
	cpu_share = cpu;
	wait_share = wait;
	double t = waves(8, NULL, NULL, 1);
	end(t);
	evaluate(t, true, fs);
}

/* Off the CPU because other threads had it: starved, not I/O bound. */
static void starved_when_process_waits_for_a_cpu(void **state)
{
	(void)state;
	struct findings fs;
	cpu_waves(0.1, 0.85, &fs);
	assert_null(find(&fs, FIND_IO_BOUND));
	const struct finding *f = must(&fs, FIND_CPU_STARVED);
	assert_string_equal(f->title, "CPU starved: process() waits 85% of its time for a CPU");
	assert_non_null(strstr(f->evidence, "(85%), on the CPU 10%, off it for other reasons "
					    "(I/O, locks) 5%"));
	assert_true(fabs(f->cost - 0.85) < 1e-9);
}

/* A process() that sleeps on a node short of cores: after each sleep its
 * thread waits for a CPU. Both hold: 39 % off the CPU is 87 % of the time
 * it was not queued for one. */
static void sleeping_on_a_starved_node_is_both(void **state)
{
	(void)state;
	struct findings fs;
	cpu_waves(0.06, 0.55, &fs);
	must(&fs, FIND_CPU_STARVED);
	const struct finding *f = must(&fs, FIND_IO_BOUND);
	assert_non_null(strstr(f->title, "waits 87% of its time off the CPU"));
	assert_non_null(strstr(f->evidence, "(39% off the CPU, 55% waiting for a CPU; 87% of the rest off it)"));
	assert_true(fabs(f->cost - 0.39) < 1e-9);
}

/* A process() that sleeps waits for no CPU: I/O bound, not starved. */
static void sleeping_process_is_io_not_starved(void **state)
{
	(void)state;
	struct findings fs;
	cpu_waves(0.1, 0.02, &fs);
	assert_null(find(&fs, FIND_CPU_STARVED));
	const struct finding *f = must(&fs, FIND_IO_BOUND);
	assert_non_null(strstr(f->title, "90% of its time off the CPU"));
	assert_non_null(strstr(f->evidence, "(88% off the CPU, 2% waiting for a CPU; 90% of the rest off it)"));
}

static void gil_contention_is_not_io(void **state)
{
	(void)state;
	start();
	cpu_share = 0.3; /* 70% off the CPU, yet 0.6 of a core per process: the GIL */
	double t = waves(8, NULL, NULL, 1);
	end(t);
	struct findings fs;
	evaluate(t, true, &fs);
	assert_null(find(&fs, FIND_IO_BOUND));
}

static void idle_cluster_when_fewer_chunks_than_threads(void **state)
{
	(void)state;
	start();
	sample(T0 + 0.5, 1, 500, "running"); /* 4 threads */
	chunk((struct ck){ FILES[0], "w0", T0 + 1, 5, 1000, 0, 0 });
	struct findings fs;
	evaluate(T0 + 6, true, &fs);
	assert_null(find(&fs, FIND_IDLE_CLUSTER)); /* not known before the end */
	end(T0 + 6);
	evaluate(T0 + 6, true, &fs);
	const struct finding *f = must(&fs, FIND_IDLE_CLUSTER);
	assert_string_equal(f->title, "idle cluster: 1 chunk for 4 threads");
	assert_string_equal(f->evidence, "the run had 1 chunk (1,000 events) and the cluster 4 "
					 "threads: at least 3 threads (75%) never had a chunk");
	assert_non_null(strstr(f->suggestion, "at most 250 events"));
	assert_true(fabs(f->cost - 0.75) < 1e-9);
}

/* w0's 2 threads execute nothing while 3 tasks wait queued on w1. */
static void idle_cluster_while_tasks_wait_elsewhere(void **state)
{
	(void)state;
	start();
	double t = waves(8, NULL, NULL, 1);
	struct worker_sample s[2] = {
		{ .id = "w0", .name = "w0", .status = "running" },
		{ .id = "w1", .name = "w1", .status = "running" },
	};
	for (int i = 0; i < 2; i++) {
		s[i].nthreads = optnum_of(2);
		s[i].executing = optnum_of(i ? 2 : 0);
		s[i].processing = optnum_of(i ? 5 : 0);
	}
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample = (struct ev_sample){ .worker_count = 2, .n_workers = 2, .workers = s };
	apply(ev);
	struct findings fs;
	evaluate(t, true, &fs);
	const struct finding *f = must(&fs, FIND_IDLE_CLUSTER);
	assert_string_equal(f->title, "idle cluster: 2 threads without a task, 3 tasks wait");
	assert_non_null(strstr(f->evidence, "(3 on w1)"));
}

static void lost_chunks_named_by_file(void **state)
{
	(void)state;
	start();
	double t = waves(8, NULL, NULL, 1);
	for (int i = 0; i < 3; i++) /* three chunks of f2, each failing on both workers */
		for (int a = 0; a < 2; a++)
			attempt(FILES[2], a ? "w1" : "w0", t + 2 * i + a, 1000.0 * i, "OSError");
	end(t + 8);
	struct findings fs;
	evaluate(t + 8, true, &fs);
	const struct finding *f = must(&fs, FIND_FAILURES);
	assert_int_equal(f->severity, SEV_WARNING);
	assert_string_equal(f->title, "failures: 3 chunks lost, 6 of 6 on file f2.root");
	assert_non_null(strstr(f->evidence, "failed attempts 6: retried by a later attempt 3 "
					    "(chunks recovered 0), chunks lost (their last attempt failed) 3"));
	assert_true(f->since == t + 1); /* the first failed attempt's arrival */
}

/* Each file's first chunk fails once and succeeds on its retry: nothing
 * lost, no file or worker holds them, their type does. */
static void retries_told_apart_from_losses(void **state)
{
	(void)state;
	start();
	double t = waves(8, NULL, NULL, 1);
	for (int i = 0; i < 4; i++) {
		attempt(FILES[i], i % 2 ? "w1" : "w0", t + i, 0, "OSError");
		attempt(FILES[i], i % 2 ? "w0" : "w1", t + i + 0.5, 0, NULL);
	}
	end(t + 6);
	struct findings fs;
	evaluate(t + 6, true, &fs);
	const struct finding *f = must(&fs, FIND_FAILURES);
	assert_int_equal(f->severity, SEV_INFO);
	assert_string_equal(f->title,
			    "retries: 4 attempts retried, no chunk lost; 4 of 4 on exception type OSError");
	assert_true(f->cost == 0);
}

static void names_are_stable(void **state)
{
	(void)state;
	assert_string_equal(diagnosis_id_name(FIND_TAIL), "tail");
	assert_string_equal(diagnosis_id_name(FIND_SLOW_FILE), "slow_file");
	assert_string_equal(diagnosis_id_name(FIND_IO_BOUND), "io_bound");
	assert_string_equal(diagnosis_id_name(FIND_IDLE_CLUSTER), "idle_cluster");
	assert_string_equal(diagnosis_id_name(FIND_FAILURES), "failures");
	assert_string_equal(diagnosis_id_name(FIND_CPU_STARVED), "cpu_starved");
	assert_string_equal(diagnosis_id_name(FIND__COUNT), "unknown");
	assert_string_equal(diagnosis_severity_name(SEV_CRITICAL), "critical");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(healthy_run_has_no_finding, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_file_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(slower_than_before_names_what_is_new, setup,
						teardown),
		cmocka_unit_test_setup_teardown(slow_site_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_site_of_long_urls, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_worker_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(waiting_for_a_cpu_is_no_slow_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(few_slow_chunks_name_the_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_worker_on_one_file_is_the_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_on_the_cpu_under_load, setup, teardown),
		cmocka_unit_test_setup_teardown(one_straggler_is_no_slow_file, setup, teardown),
		cmocka_unit_test_setup_teardown(barely_slower_worker_is_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(worker_within_the_others_spread_is_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(slow_file_read_by_a_worker_of_few_chunks, setup, teardown),
		cmocka_unit_test_setup_teardown(file_and_worker_told_apart_or_said, setup, teardown),
		cmocka_unit_test_setup_teardown(file_slow_on_one_reader_is_no_slow_file, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_worker_and_slow_file_both_named, setup, teardown),
		cmocka_unit_test_setup_teardown(tail_is_told_once_ended, setup, teardown),
		cmocka_unit_test_setup_teardown(tail_names_the_chunk_that_held_it, setup, teardown),
		cmocka_unit_test_setup_teardown(gaps_between_tiny_chunks_are_no_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(tiny_chunks_off_the_cpu_are_not_io, setup, teardown),
		cmocka_unit_test_setup_teardown(small_chunks_suggest_a_size, setup, teardown),
		cmocka_unit_test_setup_teardown(small_chunks_past_the_records_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(small_chunks_judged_by_tasks_assigned, setup, teardown),
		cmocka_unit_test_setup_teardown(memory_growth_names_the_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(memory_plateau_is_no_growth, setup, teardown),
		cmocka_unit_test_setup_teardown(memory_filled_at_once_is_no_growth, setup, teardown),
		cmocka_unit_test_setup_teardown(memory_pressure_and_paused, setup, teardown),
		cmocka_unit_test_setup_teardown(silent_run_after_15_seconds_of_tasks, setup, teardown),
		cmocka_unit_test_setup_teardown(silent_scheduler, setup, teardown),
		cmocka_unit_test_setup_teardown(written_with_the_measurement, setup, teardown),
		cmocka_unit_test_setup_teardown(healthy_writes_no_finding, setup, teardown),
		cmocka_unit_test_setup_teardown(io_bound_when_process_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(gil_contention_is_not_io, setup, teardown),
		cmocka_unit_test_setup_teardown(sleeping_on_a_starved_node_is_both, setup, teardown),
		cmocka_unit_test_setup_teardown(starved_when_process_waits_for_a_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(sleeping_process_is_io_not_starved, setup, teardown),
		cmocka_unit_test_setup_teardown(idle_cluster_when_fewer_chunks_than_threads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(idle_cluster_while_tasks_wait_elsewhere, setup, teardown),
		cmocka_unit_test_setup_teardown(lost_chunks_named_by_file, setup, teardown),
		cmocka_unit_test_setup_teardown(retries_told_apart_from_losses, setup, teardown),
		cmocka_unit_test(names_are_stable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
