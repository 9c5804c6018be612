/* Chunks in flight: starts matched by their chunks, the index through
 * removals, the cap, workers leaving, the order shown; and, through the
 * run and the metrics module, the straggler rule. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

#include "roastop/inflight.h"
#include "roastop/metrics.h"
#include "roastop/report_text.h"
#include "roastop/run.h"

static struct ev_chunk start_of(const char *host, double pid, double seq, const char *worker)
{
	struct ev_chunk c;
	memset(&c, 0, sizeof(c));
	c.host = host;
	c.pid = optnum_of(pid);
	c.seq = optnum_of(seq);
	c.worker = worker;
	c.file = "root://eos/store/nano_7.root";
	c.entry_start = optnum_of(0);
	c.entry_stop = optnum_of(100000);
	return c;
}

static struct ev_chunk end_of(const char *host, double pid, double start_seq)
{
	struct ev_chunk c = start_of(host, pid, start_seq + 1, NULL);
	c.start_seq = optnum_of(start_seq);
	return c;
}

static void start_then_end_matches(void **state)
{
	(void)state;
	struct inflight f;
	inflight_init(&f);
	struct ev_chunk s = start_of("h", 1, 5, "w1");
	assert_int_equal(inflight_start(&f, 100, &s), 0);
	assert_int_equal(f.n, 1);
	struct ev_chunk other = end_of("h", 2, 5); /* another process's seq 5 */
	assert_false(inflight_end(&f, &other));
	assert_int_equal(f.unmatched, 1);
	struct ev_chunk e = end_of("h", 1, 5);
	assert_true(inflight_end(&f, &e));
	assert_int_equal(f.n, 0);
	assert_int_equal(f.matched, 1);
	struct ev_chunk old = end_of("h", 1, 5); /* ended already */
	old.start_seq = optnum_none(); /* an emitter without starts: not counted */
	assert_false(inflight_end(&f, &old));
	assert_int_equal(f.unmatched, 1);
	inflight_free(&f);
}

/* A start announced by the sender's heartbeat arrives after its chunk
 * began: the age counts from its t_start, moved back by at most
 * INFLIGHT_BACKDATE_MAX (a sender's clock behind), never forward. */
static void age_counts_from_t_start(void **state)
{
	(void)state;
	struct inflight f;
	inflight_init(&f);
	const double t_start[] = { 99.25, 50, 101, NAN };
	const double began[] = { 99.25, 100 - INFLIGHT_BACKDATE_MAX, 100, 100 };
	for (int i = 0; i < 4; i++) {
		struct ev_chunk s = start_of("h", 1, i, "w1");
		s.t_start = isnan(t_start[i]) ? optnum_none() : optnum_of(t_start[i]);
		assert_int_equal(inflight_start(&f, 100, &s), 0);
	}
	const struct inflight_chunk *out[4];
	assert_int_equal(inflight_oldest(&f, out, 4), 4);
	for (int i = 0; i < 4; i++)
		assert_true(out[i]->t_seen == began[(size_t)out[i]->seq]);
	assert_true(out[0]->seq == 1 && out[0]->t_seen == 98.5); /* oldest first */
	inflight_free(&f);
}

/* Thousands of starts ended in a shuffled order: each is found through
 * the index whatever was removed before it. */
static void index_survives_removals(void **state)
{
	(void)state;
	struct inflight f;
	inflight_init(&f);
	enum { N = 5000 };
	static int order[N];
	for (int i = 0; i < N; i++) {
		struct ev_chunk s = start_of(i % 2 ? "a" : "b", i % 7, i, NULL);
		assert_int_equal(inflight_start(&f, i, &s), 0);
		order[i] = i;
	}
	srand(7);
	for (int i = N - 1; i > 0; i--) {
		int j = rand() % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int k = 0; k < N; k++) {
		int i = order[k];
		struct ev_chunk e = end_of(i % 2 ? "a" : "b", i % 7, i);
		if (!inflight_end(&f, &e))
			fail_msg("start %d not found after %d removals", i, k);
	}
	assert_int_equal(f.n, 0);
	assert_int_equal(f.matched, N);
	inflight_free(&f);
}

static void cap_counts_overflow(void **state)
{
	(void)state;
	struct inflight f;
	inflight_init(&f);
	for (unsigned i = 0; i < INFLIGHT_MAX + 10; i++) {
		struct ev_chunk s = start_of("h", 1, i, NULL);
		inflight_start(&f, i, &s);
	}
	assert_int_equal(f.n, INFLIGHT_MAX);
	assert_int_equal(f.overflow, 10);
	struct ev_chunk s = start_of("h", 1, 3, NULL); /* held: taken again, not refused */
	assert_int_equal(inflight_start(&f, 1e6, &s), 0);
	assert_int_equal(f.replaced, 1);
	struct ev_chunk no_sender = start_of(NULL, 1, 1, NULL);
	assert_int_equal(inflight_start(&f, 1, &no_sender), 1);
	inflight_free(&f);
}

/* The set's memory is charged to the session's pool: growth the pool
 * cannot take is refused and counted, and freeing gives it all back. */
static void pool_bounds_the_set(void **state)
{
	(void)state;
	struct strmap_pool pool = { .used = 0, .cap = 100 * 1024 };
	struct inflight f;
	inflight_init(&f);
	inflight_set_pool(&f, &pool);
	for (unsigned i = 0; i < 1000; i++) {
		struct ev_chunk s = start_of("h", 1, i, NULL);
		inflight_start(&f, i, &s);
	}
	assert_true(f.n >= 64 && f.n < 1000);
	assert_int_equal(f.overflow, 1000 - f.n);
	assert_true(pool.used > 0 && pool.used <= pool.cap);
	inflight_free(&f);
	assert_int_equal(pool.used, 0);
}

static size_t told_count;
static void told(void *ctx, const struct inflight_chunk *c)
{
	(void)ctx;
	assert_true(c->t_lost == 50);
	told_count++;
}

static void worker_leaving_loses_its_chunks(void **state)
{
	(void)state;
	struct inflight f;
	inflight_init(&f);
	struct ev_chunk a = start_of("h", 1, 1, "w1"), b = start_of("h", 1, 2, "tcp://10.0.0.2:4000"),
			c = start_of("h", 1, 3, "w3");
	inflight_start(&f, 10, &a);
	inflight_start(&f, 20, &b);
	inflight_start(&f, 30, &c);
	told_count = 0;
	/* w1 restarted: the process that left is another than its chunk's */
	assert_int_equal(inflight_lose_worker(&f, 50, "w1", "tcp://10.0.0.9:4000", optnum_of(99),
					      told, NULL), 0);
	assert_int_equal(inflight_lose_worker(&f, 50, "w1", "tcp://10.0.0.1:4000", optnum_of(1),
					      told, NULL), 1);
	assert_int_equal(inflight_lose_worker(&f, 50, NULL, "tcp://10.0.0.2:4000", optnum_none(),
					      told, NULL), 1);
	assert_int_equal(told_count, 2);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.lost, 2);
	assert_string_equal(inflight_lost_get(&f, 0)->worker, "tcp://10.0.0.2:4000");
	assert_string_equal(inflight_lost_get(&f, 1)->worker, "w1");
	assert_null(inflight_lost_get(&f, 2));
	struct ev_chunk late = end_of("h", 1, 1); /* its end after the loss: nothing held */
	assert_false(inflight_end(&f, &late));
	inflight_free(&f);
}

static void oldest_first(void **state)
{
	(void)state;
	struct inflight f;
	inflight_init(&f);
	double seen[] = { 30, 10, 50, 20, 40 };
	for (int i = 0; i < 5; i++) {
		struct ev_chunk s = start_of("h", 1, i, NULL);
		inflight_start(&f, seen[i], &s);
	}
	const struct inflight_chunk *out[5];
	assert_int_equal(inflight_oldest(&f, out, 5), 5);
	for (int i = 0; i < 5; i++)
		assert_true(out[i]->t_seen == 10 + 10 * i);
	assert_int_equal(inflight_oldest(&f, out, 2), 2);
	assert_true(out[0]->t_seen == 10 && out[1]->t_seen == 20);
	inflight_free(&f);
}

/* A long path keeps its end: the file name. */
static void long_path_keeps_its_name(void **state)
{
	(void)state;
	struct inflight f;
	inflight_init(&f);
	char path[600];
	memset(path, 'd', sizeof(path));
	snprintf(path + 500, 100, "/nano_7.root");
	struct ev_chunk s = start_of("h", 1, 1, NULL);
	s.file = path;
	inflight_start(&f, 1, &s);
	const char *kept = f.items[0].file;
	assert_true(strlen(kept) == INFLIGHT_FILE_LEN - 1);
	assert_string_equal(kept + strlen(kept) - 12, "/nano_7.root");
	inflight_free(&f);
}

static void apply(struct run *r, enum event_type type, double t, const struct ev_chunk *c)
{
	struct event ev = test_event(type, t);
	ev.u.chunk = *c;
	run_apply(r, &ev);
}

/* Through the run: twenty 1 s chunks, then one start that runs on. It is
 * a straggler past max(3 x p90, p99) of the finished ones, not before,
 * and lost with its worker when a sample no longer has it. */
static void straggler_then_lost_with_worker(void **state)
{
	(void)state;
	struct run r;
	assert_int_equal(run_init(&r), 0);
	for (int i = 0; i < 20; i++) {
		struct ev_chunk s = start_of("h", 1, 2 * i, "w1");
		apply(&r, EV_CHUNK_START, 100 + i, &s);
		struct ev_chunk e = end_of("h", 1, 2 * i);
		e.duration = optnum_of(1.0);
		apply(&r, EV_CHUNK, 101 + i, &e);
	}
	struct ev_chunk stuck = start_of("h", 1, 1000, "w1");
	apply(&r, EV_CHUNK_START, 200, &stuck);
	struct metrics m;
	metrics_compute(&r, 201, NULL, &m);
	assert_true(m.inflight_running.valid && m.inflight_running.value == 1);
	assert_true(m.straggler_after.valid);
	double after = m.straggler_after.value;
	assert_true(after >= 3 * 0.9 && after <= 3 * 1.2); /* 3 x p90 of 1 s chunks, bucketed */
	assert_true(m.inflight_stragglers.value == 0);
	metrics_compute(&r, 200 + after + 0.5, NULL, &m);
	assert_true(m.inflight_stragglers.value == 1);
	assert_near(m.inflight_oldest_age.value, after + 0.5, 1e-9);

	struct worker_sample w = { .id = "tcp://10.0.0.1:4000", .name = "w1" };
	struct event smp = test_event(EV_SAMPLE, 210);
	smp.u.sample.worker_count = 1;
	smp.u.sample.n_workers = 1;
	smp.u.sample.workers = &w;
	run_apply(&r, &smp);
	smp = test_event(EV_SAMPLE, 211); /* w1 gone */
	run_apply(&r, &smp);
	metrics_compute(&r, 212, NULL, &m);
	assert_true(m.inflight_running.value == 0 && m.inflight_lost.value == 1);
	assert_near(metrics_inflight_age(&m, inflight_lost_get(&r.inflight, 0)), 11, 1e-9);
	assert_non_null(strstr(run_log_get(&r, 0)->text, "chunk lost with worker w1: "
					     "root://eos/store/nano_7.root 0-100000"));
	run_destroy(&r);
}

/* summary.txt names what a run left running, also when no chunk ended. */
static void summary_lists_what_is_running(void **state)
{
	(void)state;
	struct run r;
	assert_int_equal(run_init(&r), 0);
	struct ev_chunk s = start_of("h", 1, 1, "w\x01");
	apply(&r, EV_CHUNK_START, 100, &s);
	struct event end = test_event(EV_RUN_END, 130);
	run_apply(&r, &end);
	struct metrics m;
	metrics_compute(&r, 500, NULL, &m);
	struct strbuf sb;
	strbuf_init(&sb);
	text_summary(&m, &r, NULL, &sb);
	assert_non_null(strstr(sb.data, "Chunks Running at the End"));
	assert_non_null(strstr(sb.data, "30.0s root://eos/store/nano_7.root on w?\n"));
	assert_non_null(strstr(sb.data, "Chunk records"));
	strbuf_free(&sb);
	run_destroy(&r);
}

/* Without a chunk_start the in-flight figures are unmeasured, not 0. */
static void no_starts_is_not_zero(void **state)
{
	(void)state;
	struct run r;
	assert_int_equal(run_init(&r), 0);
	struct ev_chunk e = end_of("h", 1, 0);
	e.start_seq = optnum_none();
	e.duration = optnum_of(1.0);
	apply(&r, EV_CHUNK, 101, &e);
	struct metrics m;
	metrics_compute(&r, 102, NULL, &m);
	assert_false(m.inflight_running.valid);
	assert_false(m.inflight_oldest_age.valid);
	assert_false(m.inflight_lost.valid);
	assert_false(m.straggler_after.valid); /* one finished chunk: too few to judge */
	run_destroy(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(start_then_end_matches),
		cmocka_unit_test(age_counts_from_t_start),
		cmocka_unit_test(index_survives_removals),
		cmocka_unit_test(cap_counts_overflow),
		cmocka_unit_test(pool_bounds_the_set),
		cmocka_unit_test(worker_leaving_loses_its_chunks),
		cmocka_unit_test(oldest_first),
		cmocka_unit_test(long_path_keeps_its_name),
		cmocka_unit_test(straggler_then_lost_with_worker),
		cmocka_unit_test(no_starts_is_not_zero),
		cmocka_unit_test(summary_lists_what_is_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
