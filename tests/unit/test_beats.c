/* Heartbeats into worker timelines (beats.h): a process per host:pid, its
 * CPU rate, samples at most once a second, departure after missed beats,
 * a scheduler's samples winning, and the table's bound. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/beats.h"
#include "roastop/session.h"

static struct ev_heartbeat beat(const char *host, double pid, double rss, double cpu)
{
	struct ev_heartbeat h = { .host = host, .worker = NULL };
	h.pid = optnum_of(pid);
	h.rss_bytes = optnum_of(rss);
	h.cpu_time = optnum_of(cpu);
	h.chunks_in_flight = optnum_of(1);
	h.interval = optnum_of(1);
	return h;
}

static const struct worker_sample *worker_of(const struct event *s, const char *id)
{
	for (size_t i = 0; i < s->u.sample.n_workers; i++)
		if (strcmp(s->u.sample.workers[i].id, id) == 0)
			return &s->u.sample.workers[i];
	return NULL;
}

static void samples_from_beats(void **state)
{
	(void)state;
	struct beats b;
	beats_init(&b);
	struct ev_heartbeat a = beat("n1", 10, 100e6, 1.0), c = beat("n1", 11, 200e6, 0.0);
	const struct event *s = beats_apply(&b, &a, 1000.0);
	assert_non_null(s); /* the first beat: a sample at once */
	assert_int_equal(s->type, EV_SAMPLE);
	assert_string_equal(s->u.sample.source, "heartbeat");
	assert_int_equal(s->u.sample.worker_count, 1);
	assert_false(worker_of(s, "n1:10")->cpu_percent.valid); /* one beat: no rate yet */
	s = beats_apply(&b, &c, 1000.5); /* a process joins: a sample at once */
	assert_non_null(s);
	assert_int_equal(s->u.sample.worker_count, 2);
	assert_null(beats_apply(&b, &c, 1000.9)); /* within the second: none */
	a.cpu_time = optnum_of(1.75);
	s = beats_apply(&b, &a, 1001.5);
	assert_non_null(s);
	assert_int_equal(s->u.sample.n_workers, 2);
	const struct worker_sample *w = worker_of(s, "n1:10");
	assert_true(w->memory_bytes.value == 100e6 && w->executing.value == 1);
	assert_true(fabs(w->cpu_percent.value - 50.0) < 1e-9); /* 0.75 s CPU in 1.5 s */
	assert_true(w->pid.value == 10);
	assert_string_equal(w->host, "n1");
	assert_true(worker_of(s, "n1:11")->memory_bytes.value == 200e6);
	beats_free(&b);
}

static void silent_process_departs(void **state)
{
	(void)state;
	struct beats b;
	beats_init(&b);
	struct ev_heartbeat a = beat("n1", 10, 1e8, 1), c = beat("n2", 10, 1e8, 1);
	beats_apply(&b, &a, 100.0);
	beats_apply(&b, &c, 101.0);
	for (double t = 102; t <= 105; t++)
		beats_apply(&b, &c, t);
	const struct event *s = beats_apply(&b, &c, 106.0); /* n1 silent 6 s > 5 beats */
	assert_non_null(s);
	assert_int_equal(s->u.sample.worker_count, 1);
	assert_non_null(worker_of(s, "n2:10"));
	assert_int_equal(b.departed, 1);
	s = beats_apply(&b, NULL, 112.0); /* no beat at all: n2 departs on time passing */
	assert_non_null(s);
	assert_int_equal(s->u.sample.worker_count, 0);
	assert_null(beats_apply(&b, NULL, 113.0));
	beats_free(&b);
}

static void scheduler_wins(void **state)
{
	(void)state;
	struct beats b;
	beats_init(&b);
	struct ev_heartbeat a = beat("n1", 10, 1e8, 1);
	beats_saw_scheduler(&b, 50.0);
	assert_null(beats_apply(&b, &a, 55.0));
	assert_int_equal(b.procs.count, 1); /* kept, not drawn */
	assert_non_null(beats_apply(&b, &a, 60.5)); /* the scheduler quiet 10 s: beats count */
	beats_free(&b);
}

static void table_bounded(void **state)
{
	(void)state;
	struct beats b;
	struct strmap_pool pool = { 0, 1u << 30 };
	beats_init(&b);
	beats_set_pool(&b, &pool);
	for (unsigned i = 0; i < BEATS_MAX + 10; i++) {
		struct ev_heartbeat h = beat("n", i + 1, 1e8, 1);
		beats_apply(&b, &h, 10.0 + i * 1e-3);
	}
	assert_int_equal(b.procs.count, BEATS_MAX);
	assert_int_equal(b.overflow, 10);
	assert_true(pool.used > BEATS_MAX * sizeof(struct beat_proc));
	beats_free(&b);
	assert_int_equal(pool.used, 0);
}

static void session_draws_beats(void **state)
{
	(void)state;
	struct session s;
	assert_int_equal(session_init(&s, NULL, NULL), 0);
	struct event ev = test_event(EV_HEARTBEAT, 1000);
	ev.u.heartbeat = beat("n1", 10, 300e6, 1);
	assert_int_equal(session_apply(&s, &ev), 0);
	ev.t = 1001;
	ev.u.heartbeat = beat("n1", 11, 100e6, 1);
	session_apply(&s, &ev);
	const struct run *r = session_newest(&s);
	assert_int_equal(r->workers_now, 2);
	assert_int_equal(r->workers.count, 2);
	assert_true(r->tl_mem_used.v_last == 400e6);
	/* a scheduler's sample: it wins, the beats draw nothing for a while */
	struct event smp = test_event(EV_SAMPLE, 1002);
	smp.u.sample.worker_count = 5;
	session_apply(&s, &smp);
	ev.t = 1003;
	session_apply(&s, &ev);
	assert_int_equal(r->workers_now, 5);
	session_destroy(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(samples_from_beats),
		cmocka_unit_test(silent_process_departs),
		cmocka_unit_test(scheduler_wins),
		cmocka_unit_test(table_bounded),
		cmocka_unit_test(session_draws_beats),
	};
	return cmocka_run_group_tests_name("beats", tests, NULL, NULL);
}
