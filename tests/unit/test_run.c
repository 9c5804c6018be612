/* run_apply(): each event kind changes exactly what it should. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/run.h"
#include "roastop/strutil.h"

static struct event chunk(double t, double dur, double events, const char *ds, const char *file)
{
	struct event ev = test_event(EV_CHUNK, t);
	ev.u.chunk.duration = optnum_of(dur);
	ev.u.chunk.num_events = optnum_of(events);
	ev.u.chunk.dataset = ds;
	ev.u.chunk.file = file;
	return ev;
}

static int setup(void **state)
{
	static struct run r;
	if (run_init(&r) != 0)
		return -1;
	*state = &r;
	return 0;
}

static int teardown(void **state)
{
	run_destroy(*state);
	return 0;
}

static void chunks_aggregate_per_dataset_and_file(void **state)
{
	struct run *r = *state;
	struct event a = chunk(100, 2.0, 1000, "ttbar", "f1.root");
	struct event b = chunk(101, 4.0, 3000, "ttbar", "f2.root");
	struct event c = chunk(102, 6.0, 500, "dy", "f1.root");
	assert_int_equal(run_apply(r, &a), 0);
	assert_int_equal(run_apply(r, &b), 0);
	assert_int_equal(run_apply(r, &c), 0);
	assert_int_equal(r->n_chunks, 3);
	assert_int_equal(r->chunk_duration.n, 3);
	assert_true(fabs(r->chunk_duration.sum - 12.0) < 1e-12);
	assert_true(fabs(r->chunk_events.sum - 4500.0) < 1e-12);
	const struct dataset_agg *tt = strmap_get(&r->datasets, "ttbar");
	assert_non_null(tt);
	assert_int_equal(tt->n_chunks, 2);
	assert_true(fabs(tt->total_events - 4000.0) < 1e-12);
	assert_true(fabs(tt->total_duration - 6.0) < 1e-12);
	const struct file_agg *f1 = strmap_get(&r->files, "f1.root");
	assert_int_equal(f1->n_chunks, 2);
	assert_true(fabs(r->t_first - 100) < 1e-12 && fabs(r->t_last - 102) < 1e-12);
	struct topk_item top[TOPK_CAP];
	assert_int_equal(topk_sorted(&r->slowest, top, TOPK_CAP), 3);
	assert_true(fabs(top[0].duration - 6.0) < 1e-12);
	assert_string_equal(top[0].dataset, "dy");
}

static void failed_chunk_counts_but_stays_out_of_statistics(void **state)
{
	struct run *r = *state;
	struct event ok = chunk(10, 1.0, 100, "d", "f");
	struct event bad = chunk(11, 50.0, 100, "d", "f");
	bad.u.chunk.error = "OSError";
	run_apply(r, &ok);
	run_apply(r, &bad);
	run_apply(r, &bad);
	assert_int_equal(r->n_chunks, 3);
	assert_int_equal(r->n_failed, 2);
	assert_int_equal(r->chunk_duration.n, 1);
	assert_true(fabs(r->chunk_duration.max - 1.0) < 1e-12);
	const uint64_t *n = strmap_get(&r->errors, "OSError");
	assert_non_null(n);
	assert_int_equal(*n, 2);
	const struct dataset_agg *d = strmap_get(&r->datasets, "d");
	assert_int_equal(d->n_failed, 2);
	assert_non_null(strstr(run_log_get(r, 0)->text, "OSError"));
}

static void duration_from_start_and_end_when_absent(void **state)
{
	struct run *r = *state;
	struct event ev = test_event(EV_CHUNK, 5);
	ev.u.chunk.t_start = optnum_of(1000.5);
	ev.u.chunk.t_end = optnum_of(1003.0);
	ev.u.chunk.mem_before_mb = optnum_of(100);
	ev.u.chunk.mem_after_mb = optnum_of(130);
	run_apply(r, &ev);
	assert_true(fabs(r->chunk_duration.sum - 2.5) < 1e-12);
	assert_true(fabs(r->chunk_mem_delta.sum - 30.0) < 1e-12);
	assert_int_equal(r->chunk_events.n, 0); /* not given: not counted as 0 */
}

static void sections_branches_and_file_metadata(void **state)
{
	struct run *r = *state;
	const char *br[] = { "Muon_pt", "Muon_eta" };
	struct kv_num timing[] = { { "jets", 0.5 }, { "hists", 0.25 } };
	struct event a = chunk(1, 1.0, 10, "d", "f.root");
	a.u.chunk.accessed_branches = br;
	a.u.chunk.n_branches = 2;
	a.u.chunk.timing = timing;
	a.u.chunk.n_timing = 2;
	a.u.chunk.has_file_metadata = true;
	a.u.chunk.file_metadata = (struct file_meta){ "f.root", optnum_of(0.25), optnum_of(100),
						      optnum_of(1e6) };
	a.u.chunk.bytes_read_percent = optnum_of(12.0);
	struct event b = a;
	b.u.chunk.file_metadata.compression_ratio = optnum_of(0.9); /* later copy: ignored */
	b.u.chunk.bytes_read_percent = optnum_of(50.0);
	run_apply(r, &a);
	run_apply(r, &b);
	assert_int_equal(r->branches.count, 2);
	const struct section_agg *jets = strmap_get(&r->sec_time, "jets");
	assert_int_equal(jets->s.n, 2);
	assert_true(fabs(jets->s.sum - 1.0) < 1e-12);
	const struct file_agg *f = strmap_get(&r->files, "f.root");
	assert_true(f->has_meta && fabs(f->compression_ratio.value - 0.25) < 1e-12);
	assert_true(fabs(f->bytes_read_percent.value - 12.0) < 1e-12); /* first chunk wins */
}

/* Each branch list is told apart from those seen before: lists that differ
 * only where one name ends, or in one byte past the first word, all add
 * their names. */
static void similar_branch_lists_all_merged(void **state)
{
	struct run *r = *state;
	const char *lists[][2] = { { "ab", "c" },
				   { "a", "bc" },
				   { "Muon_pt_corrected", "x" },
				   { "Muon_pt_correcteD", "x" },
				   { "Muon_pt_corrected_", "x" } };
	size_t want[] = { 2, 4, 6, 7, 8 };
	for (size_t i = 0; i < 5; i++) {
		struct event ev = chunk(1, 1.0, 10, "d", "f.root");
		ev.u.chunk.accessed_branches = lists[i];
		ev.u.chunk.n_branches = 2;
		run_apply(r, &ev);
		run_apply(r, &ev); /* the same list again adds nothing */
		assert_int_equal(r->branches.count, want[i]);
	}
}

static struct worker_sample worker(const char *id, double threads, double mem, double limit)
{
	struct worker_sample w;
	memset(&w, 0, sizeof(w));
	w.id = id;
	w.nthreads = optnum_of(threads);
	w.memory_bytes = optnum_of(mem);
	w.memory_limit = optnum_of(limit);
	w.cpu_percent = optnum_of(50);
	return w;
}

static void apply_sample(struct run *r, double t, struct worker_sample *ws, size_t n)
{
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample.worker_count = (uint32_t)n;
	ev.u.sample.n_workers = n;
	ev.u.sample.workers = ws;
	ev.u.sample.scheduler_id = "S1";
	assert_int_equal(run_apply(r, &ev), 0);
}

/* Two workers, then one leaves: counts, trapezoids, joins and departures. */
static void samples_track_workers_joining_and_leaving(void **state)
{
	struct run *r = *state;
	struct worker_sample two[] = { worker("a", 4, 100, 1000), worker("b", 2, 300, 1000) };
	apply_sample(r, 0, two, 2);
	apply_sample(r, 10, two, 2);
	apply_sample(r, 20, two, 1);
	assert_int_equal(r->workers.count, 2);
	assert_int_equal(r->workers_now, 1);
	/* worker count 2,2,1 over 0..20: (2*10 + 1.5*10) / 20 = 1.75 */
	assert_true(fabs(timeline_time_avg(&r->tl_workers).value - 1.75) < 1e-12);
	/* threads 6,6,4: (60 + 50) / 20 = 5.5 */
	assert_true(fabs(timeline_time_avg(&r->tl_threads).value - 5.5) < 1e-12);
	const struct worker_agg *b = strmap_get(&r->workers, "b");
	assert_false(b->present);
	assert_non_null(strstr(run_log_get(r, 0)->text, "worker left"));
	assert_true(fabs(r->worker_mem_bytes.max - 300) < 1e-12);
	assert_true(fabs(r->worker_mem_pct.max - 30.0) < 1e-12);
	const struct worker_agg *a = strmap_get(&r->workers, "a");
	assert_true(fabs(a->mem_integral / a->mem_covered - 100.0) < 1e-12);
}

/* Names past RUN_KEY_MAX: bounded keys, still distinct, counted and logged
 * once; the same long name finds its own entry again. */
static void long_names_become_bounded_distinct_keys(void **state)
{
	struct run *r = *state;
	static char a[4096], b[4096];
	memset(a, 'x', sizeof(a) - 1);
	memcpy(b, a, sizeof(b));
	b[sizeof(b) - 2] = 'y'; /* differs only past the kept prefix */
	struct event ea = chunk(1, 1.0, 10, "d", a), eb = chunk(2, 1.0, 10, "d", b);
	run_apply(r, &ea);
	run_apply(r, &eb);
	ea.t = 3; /* in order: an earlier time is a regression, logged too */
	run_apply(r, &ea);
	assert_int_equal(r->files.count, 2);
	assert_int_equal(r->keys_shortened, 3);
	for (size_t i = 0; i < 2; i++)
		assert_true(strlen(strmap_key_at(&r->files, i)) <= RUN_KEY_MAX);
	assert_int_equal(((const struct file_agg *)strmap_val_at(&r->files, 0))->n_chunks, 2);
	assert_non_null(strstr(run_log_get(r, 0)->text, "keys_shortened"));
	assert_int_equal(r->log_count, 1);
}

/* Error types past the cap add up under "(other)"; the log says so once. */
static void error_types_past_the_cap_fold_into_other(void **state)
{
	struct run *r = *state;
	char type[32];
	for (int i = 0; i < RUN_MAX_SECTIONS + 5; i++) {
		snprintf(type, sizeof(type), "Error%d", i);
		struct event ev = chunk(i + 1, 1.0, 10, "d", "f");
		ev.u.chunk.error = type;
		run_apply(r, &ev);
	}
	assert_int_equal(r->errors.count, RUN_MAX_SECTIONS + 1);
	assert_int_equal(*(const uint64_t *)strmap_get(&r->errors, "(other)"), 5);
	assert_int_equal(r->overflow_errors, 5);
	uint64_t total = 0;
	for (size_t i = 0; i < r->errors.count; i++)
		total += *(const uint64_t *)strmap_val_at(&r->errors, i);
	assert_int_equal(total, r->n_failed);
	bool logged = false;
	for (size_t i = 0; run_log_get(r, i); i++)
		logged = logged || strstr(run_log_get(r, i)->text, "roastop.overflow.errors");
	assert_true(logged);
}

/* Churn past RUN_MAX_WORKERS: departed workers leave the live table, the
 * per-worker means still cover every worker ever seen. */
static void departed_workers_are_evicted_with_their_totals_kept(void **state)
{
	struct run *r = *state;
	static struct worker_sample ws[RUN_MAX_WORKERS];
	static char ids[RUN_MAX_WORKERS][16];
	size_t batch = RUN_MAX_WORKERS / 2;
	for (int round = 0; round < 4; round++) {
		for (size_t i = 0; i < batch; i++) {
			snprintf(ids[i], sizeof(ids[i]), "w%d-%zu", round, i);
			ws[i] = worker(ids[i], round + 1, 100.0 * (round + 1), 1000);
		}
		apply_sample(r, 10.0 * round, ws, batch);
		apply_sample(r, 10.0 * round + 5, ws, batch);
	}
	assert_true(r->workers.count <= RUN_MAX_WORKERS);
	assert_int_equal(r->overflow_workers, 0);
	assert_int_equal(r->workers.count + r->workers_evicted, 4 * batch);
	assert_true(r->workers_evicted >= batch);
	/* nthreads 1..4 and memory 100..400, each for a quarter of the workers */
	assert_true(fabs(run_cores_per_worker(r).value - 2.5) < 1e-9);
	assert_true(fabs(run_avg_memory_per_worker(r).value - 250.0) < 1e-9);
	/* all present at once and one more: refused, counted, logged */
	for (size_t i = 0; i < RUN_MAX_WORKERS; i++) {
		snprintf(ids[i], sizeof(ids[i]), "z%zu", i);
		ws[i] = worker(ids[i], 1, 1, 1000);
	}
	apply_sample(r, 100, ws, RUN_MAX_WORKERS); /* half fit: round 3 was still present */
	assert_int_equal(r->overflow_workers, batch);
	apply_sample(r, 101, ws, RUN_MAX_WORKERS);
	assert_int_equal(r->workers.count, RUN_MAX_WORKERS);
	snprintf(ids[0], sizeof(ids[0]), "late");
	apply_sample(r, 102, ws, RUN_MAX_WORKERS);
	assert_int_equal(r->overflow_workers, batch + 1);
}

static void scheduler_loss_breaks_trapezoids(void **state)
{
	struct run *r = *state;
	struct worker_sample one[] = { worker("a", 1, 100, 1000) };
	apply_sample(r, 0, one, 1);
	apply_sample(r, 10, one, 1);
	struct event lost = test_event(EV_STATUS, 11);
	lost.u.status = (struct ev_status){ "scheduler", SRC_LOST, "connection refused", { 1, true } };
	assert_int_equal(run_apply(r, &lost), 0);
	struct worker_sample three[] = { worker("a", 1, 100, 1000), worker("b", 1, 1, 9),
					 worker("c", 1, 1, 9) };
	apply_sample(r, 100, three, 3);
	apply_sample(r, 110, three, 3);
	/* 1 worker for 10 s, gap, 3 workers for 10 s: (10 + 30) / 20 = 2 */
	assert_true(fabs(timeline_time_avg(&r->tl_workers).value - 2.0) < 1e-12);
	assert_int_equal(r->sources[0].state, SRC_LOST);
	assert_int_equal(r->sources[0].transitions, 1);
}

static void scheduler_restart_is_counted(void **state)
{
	struct run *r = *state;
	struct event ev = test_event(EV_SAMPLE, 1);
	ev.u.sample.scheduler_id = "S1";
	run_apply(r, &ev);
	ev.t = 2;
	ev.u.sample.scheduler_id = "S2";
	run_apply(r, &ev);
	assert_int_equal(r->scheduler_restarts, 1);
	assert_string_equal(r->scheduler_id, "S2");
}

static void fine(struct run *r, double t, enum fine_scope scope, const char *prefix, double v)
{
	struct fine_row row = { "execute", prefix, "thread-cpu", "seconds", v };
	struct event ev = test_event(EV_FINE, t);
	ev.u.fine = (struct ev_fine){ scope, 1, &row };
	assert_int_equal(run_apply(r, &ev), 0);
}

static const struct fine_agg *fine_get(const struct strmap *m, const char *prefix)
{
	char key[256];
	run_fine_key(key, sizeof(key), "execute", prefix, "thread-cpu", "seconds");
	return strmap_get(m, key);
}

/* Cluster counters: baseline from the first snapshot, rows new later start
 * at 0, a decrease (scheduler restart) carries what was counted. */
static void fine_cluster_baseline_and_restart(void **state)
{
	struct run *r = *state;
	fine(r, 1, FINE_CLUSTER, "old", 100);
	fine(r, 2, FINE_CLUSTER, "old", 130);
	fine(r, 2, FINE_CLUSTER, "Proc", 7);
	fine(r, 3, FINE_CLUSTER, "Proc", 12);
	fine(r, 4, FINE_CLUSTER, "Proc", 3); /* restarted scheduler */
	assert_true(fabs(run_fine_value(fine_get(&r->fine_cluster, "old")) - 30) < 1e-12);
	assert_true(fabs(run_fine_value(fine_get(&r->fine_cluster, "Proc")) - 15) < 1e-12);
	fine(r, 5, FINE_SPAN, "Proc", 40);
	assert_true(fabs(run_fine_value(fine_get(&r->fine_span, "Proc")) - 40) < 1e-12);
	char key[256];
	run_fine_key(key, sizeof(key), "a", "b", "c", "d");
	const char *parts[4];
	assert_true(run_fine_split(key, parts));
	assert_string_equal(parts[2], "c");
}

/* roastcoffea samples from the collector's start to its end: samples
 * before run start and after run end are drawn but not counted. */
static void worker_totals_cover_the_run_only(void **state)
{
	struct run *r = *state;
	struct worker_sample idle[] = { worker("a", 1, 5, 1000) };
	struct worker_sample busy[] = { worker("a", 8, 900, 1000), worker("b", 8, 700, 1000) };
	apply_sample(r, 0, idle, 1);
	apply_sample(r, 100, idle, 1); /* roastop waited 100 s with one idle worker */
	struct event s = test_event(EV_RUN_START, 100.5);
	s.u.run_start.run_id = "r";
	run_apply(r, &s);
	apply_sample(r, 101, busy, 2);
	apply_sample(r, 111, busy, 2);
	struct event e = test_event(EV_RUN_END, 111.5);
	run_apply(r, &e);
	apply_sample(r, 200, idle, 1); /* after the run */
	/* trapezoids cut at 100.5 and 111.5: (1.5 + 2)/2 x 0.5 + 2 x 10
	 * + (2 + (2 - 0.5/89))/2 x 0.5 over 11 s */
	double tail = (2 + (2 - 0.5 / 89)) / 2 * 0.5;
	assert_true(fabs(timeline_time_avg(&r->tl_workers).value - (0.875 + 20 + tail) / 11) <
		    1e-12);
	assert_true(fabs(timeline_max(&r->tl_workers).value - 2) < 1e-12);
	assert_true(fabs(r->worker_mem_bytes.min - 700) < 1e-12); /* idle 5 MB not counted */
	assert_true(fabs(r->worker_mem_bytes.max - 900) < 1e-12);
	const struct worker_agg *a = strmap_get(&r->workers, "a");
	assert_true(fabs(a->mem_integral / a->mem_covered - 900) < 1e-12);
	assert_int_equal(r->tl_workers.len, 5); /* every sample is still drawn */
}

/* avg_workers integrates over the run's own window [5, 25], not from the
 * last poll before the start to the last one before the end. Polls at 0,
 * 10, 20, 30 with 1, 3, 3, 1 workers: the count is 2 at 5 and at 25
 * (interpolated), so (2 + 3)/2 x 5 + 3 x 10 + (3 + 2)/2 x 5 = 55 over 20 s
 * = 2.75; the window from poll to poll (0..20) gave (20 + 30) / 20 = 2.5. */
static void worker_average_clipped_to_the_run(void **state)
{
	struct run *r = *state;
	struct worker_sample one[] = { worker("a", 1, 5, 1000) };
	struct worker_sample three[] = { worker("a", 1, 5, 1000), worker("b", 1, 5, 1000),
					 worker("c", 1, 5, 1000) };
	apply_sample(r, 0, one, 1);
	struct event s = test_event(EV_RUN_START, 5);
	s.u.run_start.run_id = "r";
	run_apply(r, &s);
	apply_sample(r, 10, three, 3);
	apply_sample(r, 20, three, 3);
	struct event e = test_event(EV_RUN_END, 25);
	run_apply(r, &e);
	apply_sample(r, 30, one, 1);
	assert_true(fabs(timeline_time_avg(&r->tl_workers).value - 2.75) < 1e-12);
	assert_true(fabs(r->tl_workers.covered - 20) < 1e-12);
	assert_true(fabs(timeline_max(&r->tl_workers).value - 3) < 1e-12);
	assert_int_equal(r->tl_workers.n_samples, 2); /* polls inside only */
	/* threads: the same shape */
	assert_true(fabs(timeline_time_avg(&r->tl_threads).value - 2.75) < 1e-12);
}

/* Two one-thread workers showed "executing 4": the scheduler's count of
 * tasks processing holds one running and one queued per worker. Executing
 * never exceeds the threads, whichever source says it. */
static void executing_never_exceeds_threads(void **state)
{
	struct run *r = *state;
	struct worker_sample two[] = { worker("a", 1, 5, 1000), worker("b", 1, 5, 1000) };
	two[0].executing = optnum_of(2); /* a seceded task beside the running one */
	two[1].executing = optnum_of(1);
	apply_sample(r, 0, two, 2);
	assert_true(r->tl_executing.v_last == 2);
	struct event ev = test_event(EV_SAMPLE, 1); /* counts.json: no rows */
	ev.u.sample.worker_count = 2;
	ev.u.sample.total_threads = optnum_of(2);
	ev.u.sample.tasks_processing = optnum_of(4);
	assert_int_equal(run_apply(r, &ev), 0);
	assert_true(r->tl_executing.v_last == 2);
	ev.t = 2;
	ev.u.sample.tasks_processing = optnum_of(1);
	assert_int_equal(run_apply(r, &ev), 0);
	assert_true(r->tl_executing.v_last == 1);
	assert_true(timeline_max(&r->tl_executing).value == 2);
}

static bool log_has(const struct run *r, const char *text)
{
	for (size_t i = 0; run_log_get(r, i); i++)
		if (strstr(run_log_get(r, i)->text, text))
			return true;
	return false;
}

/* An event timed before the latest one is counted and told; order-free
 * totals take it, the time series and the "now" values do not. */
static void late_events_counted_and_kept_in_order_free_totals(void **state)
{
	struct run *r = *state;
	struct worker_sample two[] = { worker("a", 1, 100, 1000), worker("b", 1, 100, 1000) };
	struct worker_sample one[] = { worker("a", 1, 100, 1000) };
	struct worker_sample three[] = { worker("a", 1, 100, 1000), worker("b", 1, 100, 1000),
					 worker("c", 1, 900, 1000) };
	apply_sample(r, 10, two, 2);
	struct event c1 = chunk(18, 1, 50, "ds", "f");
	run_apply(r, &c1);
	apply_sample(r, 20, one, 1);
	apply_sample(r, 15, three, 3); /* late */
	struct event c2 = chunk(12, 1, 70, "ds", "f"); /* late */
	run_apply(r, &c2);
	assert_int_equal(r->time_regressions, 2);
	assert_true(log_has(r, "time_regression"));
	assert_true(r->t_last == 20);
	assert_true(timeline_max(&r->tl_workers).value == 3);
	assert_int_equal(r->tl_workers.len, 2);
	assert_true(r->tl_workers.v_last == 1 && r->workers_now == 1);
	assert_true(r->worker_mem_bytes.max == 900);
	assert_non_null(strmap_get(&r->workers, "c"));
	assert_int_equal(r->n_chunks, 2);
	assert_true(r->chunk_events.sum == 120);
	assert_int_equal(r->tl_events.len, 1);
	assert_int_equal(r->n_samples, 3);
}

/* Shuffled markers: a late sample is judged by its own time against the
 * run's window; a late start restarts nothing. */
static void late_samples_judged_by_the_run_window(void **state)
{
	struct run *r = *state;
	struct worker_sample w[7];
	for (size_t i = 0; i < 7; i++)
		w[i] = worker("w", 1, 100.0 * (double)(i + 1), 1000);
	apply_sample(r, 10, w, 1); /* in the run, before its start is known */
	struct event e = test_event(EV_RUN_END, 30);
	run_apply(r, &e);
	struct event tail = test_event(EV_SAMPLE, 40); /* after the run: drawn only */
	tail.u.sample.worker_count = 5;
	run_apply(r, &tail);
	apply_sample(r, 20, w, 3); /* late, inside: counted */
	apply_sample(r, 35, w, 6); /* late, after the end */
	struct event s = test_event(EV_RUN_START, 5);
	s.u.run_start.run_id = "r";
	run_apply(r, &s); /* late: the sample at 10 stays counted */
	apply_sample(r, 2, w, 7); /* late, before the start */
	assert_int_equal(r->time_regressions, 4);
	assert_true(r->t_run_start == 5 && r->t_run_end == 30);
	assert_true(timeline_max(&r->tl_workers).value == 3);
	assert_int_equal(r->tl_workers.n_samples, 2);
	assert_int_equal(r->worker_mem_bytes.n, 1 + 3);
	assert_true(r->worker_mem_bytes.max == 300);
}

static void markers_report_and_ignored(void **state)
{
	struct run *r = *state;
	struct event s = test_event(EV_RUN_START, 50);
	s.u.run_start.run_id = "r1";
	s.u.run_start.processor = "MyProc";
	s.u.run_start.expected_events = optnum_of(1e6);
	struct event rep = test_event(EV_REPORT, 60);
	rep.u.report.entries = optnum_of(10);
	rep.u.report.bytesread = optnum_of(20);
	struct event e = test_event(EV_RUN_END, 70);
	struct event none = test_event(EV_NONE, 80);
	run_apply(r, &s);
	run_apply(r, &rep);
	run_apply(r, &rep);
	run_apply(r, &e);
	assert_int_equal(run_apply(r, &none), 1);
	assert_true(r->started && r->ended);
	assert_true(r->t_run_start == 50 && r->t_run_end == 70);
	assert_string_equal(r->processor, "MyProc");
	assert_true(fabs(r->report.entries.value - 20) < 1e-12); /* two reports add */
	assert_false(r->report.processtime.valid);
	assert_int_equal(r->ignored, 1);
	assert_int_equal(r->applied[EV_REPORT], 2);
}

static struct event run_end(double t, const char *status)
{
	struct event e = test_event(EV_RUN_END, t);
	e.u.run_end.run_id = "r1";
	e.u.run_end.status = status;
	return e;
}

static void start(struct run *r, double t)
{
	struct event s = test_event(EV_RUN_START, t);
	s.u.run_start.run_id = "r1";
	assert_int_equal(run_apply(r, &s), 0);
}

/* An old emitter's run_end has no status: the run completed. */
static void run_end_without_status_is_completed(void **state)
{
	struct run *r = *state;
	start(r, 50);
	assert_int_equal(r->status, RUN_RUNNING);
	struct event e = run_end(70, NULL);
	assert_int_equal(run_apply(r, &e), 0);
	assert_true(r->ended);
	assert_int_equal(r->status, RUN_COMPLETED);
	assert_string_equal(r->status_reason, "");
}

static void failed_run_keeps_type_and_message(void **state)
{
	struct run *r = *state;
	start(r, 50);
	struct event e = run_end(70, "failed");
	e.u.run_end.error_type = "ValueError";
	e.u.run_end.error_message = "bad chunk";
	assert_int_equal(run_apply(r, &e), 0);
	assert_int_equal(r->status, RUN_FAILED);
	assert_string_equal(r->status_reason, "ValueError: bad chunk");
	assert_true(r->t_run_end == 70);
	assert_int_equal(run_log_get(r, 0)->kind, LOG_ERROR);
	/* a message longer than the buffer is cut on a UTF-8 boundary */
	static char big[3 * RUN_REASON_LEN];
	for (size_t i = 0; i + 2 < sizeof(big); i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	e.u.run_end.error_message = big;
	assert_int_equal(run_apply(r, &e), 0);
	assert_true(strlen(r->status_reason) < RUN_REASON_LEN);
	assert_true(strutil_utf8_ok((const unsigned char *)r->status_reason));
	assert_memory_equal(r->status_reason, "ValueError: \xc3\xa9", 14);
}

/* roastop's incomplete ends the run at its client's last datagram; a
 * datagram after it shows the client was only slow; roastop's own end never
 * overrides the collector's. */
static void incomplete_ends_at_last_datagram_and_revives(void **state)
{
	struct run *r = *state;
	start(r, 50);
	struct event c = chunk(60, 1.0, 10, "d", "f");
	run_apply(r, &c);
	struct event sample = test_event(EV_SAMPLE, 200); /* the scheduler is no client */
	run_apply(r, &sample);
	assert_true(r->t_last_client == 60);
	struct event inc = run_end(360, "incomplete");
	inc.u.run_end.reason = "no datagram for 300 s";
	assert_int_equal(run_apply(r, &inc), 0);
	assert_true(r->ended && r->status == RUN_INCOMPLETE && r->t_run_end == 60);
	assert_string_equal(r->status_reason, "no datagram for 300 s");
	struct event late = chunk(400, 1.0, 10, "d", "f");
	run_apply(r, &late);
	assert_false(r->ended);
	assert_int_equal(r->status, RUN_RUNNING);
	struct event done = run_end(410, "completed");
	assert_int_equal(run_apply(r, &done), 0);
	assert_int_equal(r->status, RUN_COMPLETED);
	struct event stop = run_end(420, "stopped");
	assert_int_equal(run_apply(r, &stop), 1); /* ended already: ignored */
	assert_int_equal(r->status, RUN_COMPLETED);
	assert_true(r->t_run_end == 410);
}

static void stopped_and_a_new_run_resets_status(void **state)
{
	struct run *r = *state;
	start(r, 50);
	struct event stop = run_end(80, "stopped");
	stop.u.run_end.reason = "roastop stopped";
	assert_int_equal(run_apply(r, &stop), 0);
	assert_true(r->status == RUN_STOPPED && r->t_run_end == 80);
	struct event bad = run_end(81, "running"); /* never a run_end's status */
	assert_int_equal(run_apply(r, &bad), 1);
	start(r, 90);
	assert_int_equal(r->status, RUN_RUNNING);
	assert_string_equal(r->status_reason, "");
	assert_string_equal(run_status_name(RUN_STOPPED), "stopped");
	assert_int_equal(run_status_from_name("incomplete"), RUN_INCOMPLETE);
	assert_int_equal(run_status_from_name("running"), RUN_STATUS__COUNT);
}

static void progress_sample(struct run *r, double t, double done, double total, double span_done,
			    double span_total)
{
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample.tasks_done_cumulative = optnum_of(done);
	ev.u.sample.tasks_total_cumulative = optnum_of(total);
	if (span_total >= 0) {
		ev.u.sample.tasks_done = optnum_of(span_done);
		ev.u.sample.tasks_total = optnum_of(span_total);
	}
	assert_int_equal(run_apply(r, &ev), 0);
}

static void assert_progress(const struct run *r, double done, double total)
{
	assert_true(r->tasks_done.valid && r->tasks_total.valid);
	assert_near(r->tasks_done.value, done, 0);
	assert_near(r->tasks_total.value, total, 0);
}

/* A reused scheduler showed an earlier run's "324 of 324" for a whole new
 * run: progress is the run's span, or the growth of the scheduler's
 * cumulative counters since the run began, never all-time counts. */
static void task_progress_belongs_to_the_run(void **state)
{
	struct run *r = *state;
	progress_sample(r, 0, 324, 324, 324, 324); /* no run-start: an earlier run's span */
	assert_progress(r, 0, 0);
	progress_sample(r, 1, 330, 340, 324, 324);
	assert_progress(r, 6, 16);
	start(r, 2); /* the collector's run: its span, from the next sample on */
	assert_false(r->tasks_done.valid);
	progress_sample(r, 3, 335, 350, 2, 10);
	assert_progress(r, 2, 10);
	start(r, 4); /* a second run in the session, without a span */
	progress_sample(r, 5, 340, 360, -1, -1);
	assert_progress(r, 5, 10);
	progress_sample(r, 6, 3, 8, -1, -1); /* a new scheduler counts from 0 */
	assert_progress(r, 3, 8);
}

/* A worker's history stays at RUN_WORKER_HISTORY points over any number
 * of samples, covers the whole life, and keeps each span's peak. */
static void worker_history_is_bounded_and_keeps_peaks(void **state)
{
	(void)state;
	struct worker_hist h;
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 1000; i++) {
		struct worker_sample s = { .memory_bytes = optnum_of(i == 500 ? 9e9 : 1e6 * i),
					   .cpu_percent = i == 10 ? optnum_none() : optnum_of(50),
					   .executing = optnum_of(i % 7), .processing = optnum_of(i % 5),
					   .occupancy = i == 20 ? optnum_none() : optnum_of(i % 3 * 0.5) };
		run_worker_hist_add(&h, 100 + i, &s);
	}
	assert_true(h.len <= RUN_WORKER_HISTORY && h.len >= RUN_WORKER_HISTORY / 2);
	assert_true(h.t0 == 100);
	assert_true(h.pts[0].t == 0);
	assert_true(h.pts[h.len - 1].t > 900 && h.pts[h.len - 1].t <= 999);
	float peak = 0;
	for (uint32_t i = 0; i < h.len; i++) {
		peak = fmaxf(peak, h.pts[i].mem);
		assert_true(h.pts[i].cpu == 50); /* one sample not measured: the others stand */
		assert_true(h.pts[i].exec == 6);
		assert_true(h.pts[i].proc == 4); /* the peak of the samples it covers */
		assert_true(h.pts[i].occ == 1.0f);
		if (i)
			assert_true(h.pts[i].t > h.pts[i - 1].t);
	}
	assert_true(peak == 9e9f);
	struct worker_hist one;
	memset(&one, 0, sizeof(one));
	struct worker_sample unmeasured = { .memory_bytes = optnum_of(NAN), .executing = optnum_of(-1) };
	run_worker_hist_add(&one, 5, &unmeasured);
	assert_int_equal(one.len, 1);
	assert_true(isnan(one.pts[0].mem) && one.pts[0].cpu == WORKER_NA && one.pts[0].exec == WORKER_NA);
	assert_true(one.pts[0].proc == WORKER_NA && isnan(one.pts[0].occ));
}

/* 100 x bytes / limit, invalid without both or with no positive limit. */
static void memory_percent(void **state)
{
	(void)state;
	assert_true(run_memory_percent(optnum_of(512), optnum_of(2048)).value == 25);
	assert_false(run_memory_percent(optnum_none(), optnum_of(2048)).valid);
	assert_false(run_memory_percent(optnum_of(512), optnum_none()).valid);
	assert_false(run_memory_percent(optnum_of(512), optnum_of(0)).valid);
}

/* run.changes moves with every apply (an ignored one included) and at
 * run_begin, never for a log line: the metrics read no log, and the app
 * keeps a run's metrics while it stays (app_metrics). Internal kinds are
 * ignored by the run. */
static void changes_count_what_the_metrics_read(void **state)
{
	struct run *r = *state;
	uint64_t c0 = r->changes;
	struct event a = chunk(100, 2.0, 1000, "ttbar", "f1.root");
	assert_int_equal(run_apply(r, &a), 0);
	assert_true(r->changes == c0 + 1);
	struct event note = test_event(EV_LOG, 101);
	note.u.log = (struct ev_log){ .level = LOG_INFO, .text = "a note" };
	assert_int_equal(run_apply(r, &note), 0);
	note.u.log.own = true;
	assert_int_equal(run_apply(r, &note), 0);
	assert_true(r->changes == c0 + 1);
	assert_int_equal(r->applied[EV_LOG], 1); /* roastop's own note is not counted */
	assert_int_equal(r->log_count, 2);
	struct event row = test_event(EV_ROW_WRITE, 102);
	assert_int_equal(run_apply(r, &row), 1);
	assert_true(r->changes == c0 + 2 && r->ignored == 1);
	run_begin(r, 90, false);
	assert_true(r->changes == c0 + 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(worker_history_is_bounded_and_keeps_peaks),
		cmocka_unit_test_setup_teardown(chunks_aggregate_per_dataset_and_file, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_chunk_counts_but_stays_out_of_statistics, setup, teardown),
		cmocka_unit_test_setup_teardown(duration_from_start_and_end_when_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(sections_branches_and_file_metadata, setup, teardown),
		cmocka_unit_test_setup_teardown(similar_branch_lists_all_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(samples_track_workers_joining_and_leaving, setup, teardown),
		cmocka_unit_test_setup_teardown(scheduler_loss_breaks_trapezoids, setup, teardown),
		cmocka_unit_test_setup_teardown(scheduler_restart_is_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(fine_cluster_baseline_and_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(worker_totals_cover_the_run_only, setup, teardown),
		cmocka_unit_test_setup_teardown(worker_average_clipped_to_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(executing_never_exceeds_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(task_progress_belongs_to_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(markers_report_and_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(run_end_without_status_is_completed, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_run_keeps_type_and_message, setup, teardown),
		cmocka_unit_test_setup_teardown(incomplete_ends_at_last_datagram_and_revives, setup, teardown),
		cmocka_unit_test_setup_teardown(stopped_and_a_new_run_resets_status, setup, teardown),
		cmocka_unit_test_setup_teardown(late_events_counted_and_kept_in_order_free_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(late_samples_judged_by_the_run_window, setup, teardown),
		cmocka_unit_test_setup_teardown(long_names_become_bounded_distinct_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(error_types_past_the_cap_fold_into_other, setup, teardown),
		cmocka_unit_test_setup_teardown(departed_workers_are_evicted_with_their_totals_kept, setup, teardown),
		cmocka_unit_test(memory_percent),
		cmocka_unit_test_setup_teardown(changes_count_what_the_metrics_read, setup, teardown),
	};
	return cmocka_run_group_tests_name("run", tests, NULL, NULL);
}
