/* session_apply(): each event reaches the run it belongs to, and the
 * session's memory stays bounded. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/session.h"
#include "roastop/task_figures.h"

/* The figures every output reads (task_figures.h), from the model. */
static const struct task_figures *figs(const struct tasks *t)
{
	static struct task_figures f;
	task_figures_compute(t, &f);
	return &f;
}

struct closed {
	size_t n;
	char ids[16][64];
};

static void on_close(void *ctx, struct session_run *row)
{
	struct closed *c = ctx;
	if (c->n < 16)
		snprintf(c->ids[c->n], sizeof(c->ids[0]), "%s", row->run_id);
	c->n++;
}

static struct event chunk(double t, const char *run_id, double events)
{
	struct event ev = test_event(EV_CHUNK, t);
	ev.u.chunk.duration = optnum_of(1.0);
	ev.u.chunk.num_events = optnum_of(events);
	ev.u.chunk.dataset = "d";
	ev.u.chunk.file = "f.root";
	ev.u.chunk.run_id = run_id;
	return ev;
}

static struct event start(double t, const char *run_id)
{
	struct event ev = test_event(EV_RUN_START, t);
	ev.u.run_start.run_id = run_id;
	ev.u.run_start.name = run_id;
	return ev;
}

static struct event end(double t, const char *run_id, const char *status)
{
	struct event ev = test_event(EV_RUN_END, t);
	ev.u.run_end.run_id = run_id;
	ev.u.run_end.status = status;
	return ev;
}

static struct event sample(double t, uint32_t workers)
{
	struct event ev = test_event(EV_SAMPLE, t);
	ev.u.sample.worker_count = workers;
	ev.u.sample.total_threads = optnum_of(workers);
	return ev;
}

struct fixture {
	struct session s;
	struct closed c;
};

static int setup(void **state)
{
	static struct fixture f;
	memset(&f, 0, sizeof(f));
	if (session_init(&f.s, on_close, &f.c) != 0)
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	session_destroy(&f->s);
	return 0;
}

static void apply(struct session *s, struct event ev)
{
	assert_int_equal(session_apply(s, &ev), 0);
}

/* Two runs one after the other: each its own chunks; a straggler of the
 * first, after the second began, goes to the first, outside its window. */
static void runs_keep_their_own_chunks(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, sample(99, 2));
	apply(s, start(100, "a"));
	apply(s, chunk(101, "a", 10));
	apply(s, chunk(102, "a", 10));
	apply(s, end(103, "a", "completed"));
	apply(s, sample(105, 2)); /* settled: a closes */
	assert_int_equal(f->c.n, 1);
	assert_string_equal(f->c.ids[0], "a");
	apply(s, start(110, "b"));
	apply(s, chunk(111, "b", 7));
	apply(s, chunk(112, "a", 10)); /* a's straggler */
	assert_int_equal(s->n_rows, 2);
	const struct run *a = s->rows[0].run, *b = s->rows[1].run;
	assert_int_equal(a->n_chunks, 3);
	assert_int_equal(a->n_outside, 1);
	assert_true(s->rows[0].dirty); /* written again */
	assert_int_equal(b->n_chunks, 1);
	assert_true(fabs(b->chunk_events.sum - 7) < 1e-12);
	assert_ptr_equal(session_newest(s), b);
}

/* The scheduler's data between runs goes to the watch, which the next run
 * takes over: its samples before the start are drawn, not counted. */
static void the_next_run_takes_the_watch(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	const struct run *watch = session_newest(s);
	apply(s, sample(10, 5));
	apply(s, sample(11, 5));
	apply(s, start(12, "a"));
	assert_ptr_equal(s->rows[0].run, watch);
	assert_null(s->watch);
	apply(s, sample(13, 1));
	assert_true(s->rows[0].run->tl_workers.max <= 5);
	apply(s, end(14, "a", "completed"));
	apply(s, sample(16, 1));
	assert_true(s->rows[0].closed);
	assert_non_null(s->watch); /* nobody else takes the samples */
	apply(s, sample(17, 3));
	assert_int_equal(s->rows[0].run->workers_now, 1); /* closed: frozen */
}

/* Without a collector: chunks begin an implicit run at the first chunk's
 * start; after its end, a chunk begins another. */
static void chunks_without_a_run_begin_implicit_runs(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, sample(50, 1));
	apply(s, chunk(100, NULL, 5));
	assert_int_equal(s->n_rows, 1);
	const struct run *r = s->rows[0].run;
	assert_true(s->rows[0].implicit && r->begun && !r->started);
	assert_true(fabs(r->t_begin - 99) < 1e-12); /* chunk start: t - duration */
	apply(s, chunk(101, NULL, 5));
	assert_int_equal(r->n_chunks, 2);
	apply(s, end(200, NULL, "incomplete"));
	apply(s, sample(202, 1));
	assert_true(s->rows[0].closed);
	apply(s, chunk(300, NULL, 5));
	assert_int_equal(s->n_rows, 2);
	assert_int_equal(s->rows[1].run->n_chunks, 1);
}

/* A chunk of a run never announced (roastop started mid-run) opens a run
 * under its run_id; its run_end finds it. */
static void unannounced_run_is_found_by_id(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, chunk(10, "x", 1));
	apply(s, chunk(11, "x", 1));
	assert_int_equal(s->n_rows, 1);
	assert_string_equal(s->rows[0].run_id, "x");
	apply(s, end(12, "x", "completed"));
	assert_int_equal(s->rows[0].run->status, RUN_COMPLETED);
}

/* Past SESSION_DETAIL_RUNS, the oldest closed runs keep their row only;
 * a late chunk of one is counted, not applied elsewhere. */
static void old_runs_are_summarised_and_late_chunks_counted(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	char ids[SESSION_DETAIL_RUNS + 3][8];
	for (int i = 0; i < SESSION_DETAIL_RUNS + 3; i++) {
		snprintf(ids[i], sizeof(ids[i]), "r%d", i);
		double t = 100.0 * i;
		apply(s, start(t, ids[i]));
		apply(s, chunk(t + 1, ids[i], 1));
		apply(s, end(t + 2, ids[i], "completed"));
		apply(s, sample(t + 4, 1));
	}
	assert_int_equal(s->n_rows, SESSION_DETAIL_RUNS + 3);
	/* each close keeps a detail slot free for the next run: 7 kept */
	assert_int_equal(s->runs_summarised, 4);
	assert_null(s->rows[0].run);
	assert_non_null(s->rows[SESSION_DETAIL_RUNS + 2].run);
	assert_int_equal(f->c.n, SESSION_DETAIL_RUNS + 3); /* each closed, once */
	struct event late = chunk(5000, "r0", 1);
	assert_int_equal(session_apply(s, &late), 1);
	assert_int_equal(s->late_lost, 1);
	assert_int_equal(s->rows[0].late_lost, 1);
	for (size_t i = 1; i < s->n_rows; i++)
		if (s->rows[i].run)
			assert_int_equal(s->rows[i].run->n_chunks, 1);
}

/* The runs' tables share one pool: a run can not grow it past its cap. */
static void tables_share_one_pool(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	s->pool.cap = s->pool.used + 4096; /* room for a few files only */
	char name[64];
	apply(s, start(1, "a"));
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "file-%03d.root", i);
		struct event c = chunk(2 + i, "a", 1);
		c.u.chunk.file = name;
		apply(s, c);
	}
	const struct run *r = s->rows[0].run;
	assert_true(r->files.count > 0 && r->files.count < 200);
	assert_true(r->overflow_files > 0);
	assert_int_equal(r->n_chunks, 200); /* every chunk still counted */
	assert_true(s->pool.used <= s->pool.cap);
}

/* At the exit with no run at all, the watch is the session's one run. */
static void watch_only_session_has_one_run(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, sample(1, 3));
	apply(s, sample(2, 3));
	assert_int_equal(s->n_rows, 0);
	apply(s, test_event(EV_ADOPT_WATCH, 3));
	assert_int_equal(s->n_rows, 1);
	assert_true(s->rows[0].implicit);
	assert_int_equal(s->rows[0].run->n_samples, 2);
	apply(s, end(3, NULL, "stopped"));
	apply(s, test_event(EV_CLOSE_ALL, 3));
	assert_int_equal(f->c.n, 1);
}

/* A Dask task of prefix p received at t after computing sec seconds, on a
 * worker whose clock is an hour ahead: the routing reads roastop's clock. */
static struct event task(double t, const char *prefix, double sec)
{
	struct event ev = test_event(EV_TASK, t);
	ev.u.task = (struct ev_task){ .key = prefix, .prefix = prefix, .worker = "tcp://w:1",
				      .action = "compute", .status = "OK",
				      .start = optnum_of(t + 3600 - sec), .stop = optnum_of(t + 3600) };
	return ev;
}

static uint64_t task_count(const struct run *r, const char *prefix)
{
	for (size_t i = 0; i < r->tasks.n; i++)
		if (!strcmp(r->tasks.prefixes[i].name, prefix))
			return r->tasks.prefixes[i].count;
	return 0;
}

static struct event failed(double t, double since, struct kv_num *erred, size_t n)
{
	struct event ev = sample(t, 1);
	ev.u.sample.erred = erred;
	ev.u.sample.n_erred = n;
	ev.u.sample.erred_left_out = optnum_of(0);
	ev.u.sample.erred_since = optnum_of(since);
	return ev;
}

/* The route's failed tasks are counted from its install, the collector's
 * run start (erred_since): a run that starts while the one before settles
 * counts its own from its first poll, even when they outnumber the run
 * before's by then, and the settling run takes no failure of the next
 * run's install. */
static void erred_of_a_run_started_while_one_settles(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, start(10, "a")); /* a's collector installed the route at 9 */
	struct kv_num a1[] = { { "process", 4 } };
	apply(s, failed(11, 9, NULL, 0));
	apply(s, failed(12, 9, a1, 1));
	const struct run *a = s->rows[0].run;
	assert_true(figs(&a->tasks)->erred.valid);
	assert_int_equal((int)figs(&a->tasks)->erred.value, 4);
	apply(s, end(13, "a", "failed"));
	apply(s, start(13.2, "b")); /* installed again at 13.1 */
	assert_null(s->watch);
	const struct run *b = s->rows[1].run;
	assert_true(b != a && !s->rows[0].closed);
	struct kv_num b1[] = { { "process", 5 } };
	apply(s, failed(13.5, 13.1, b1, 1));
	assert_int_equal((int)figs(&b->tasks)->erred.value, 5);
	assert_int_equal((int)figs(&a->tasks)->erred.value, 4);
}

/* Two explicit runs: each holds the tasks that ran during it. The watch's
 * tasks before a run_start are not the run's; while a settles, a task begun
 * before its end is a's, one begun after it b's; a long task that ends
 * after a closed but began in it is a's (written again). */
static void tasks_belong_to_the_run_that_ran_them(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, task(5, "before", 0.1));
	assert_int_equal(s->watch->tasks.count, 1);
	apply(s, start(10, "a"));
	const struct run *a = s->rows[0].run;
	assert_int_equal(a->tasks.count, 0);
	for (int i = 0; i < 3; i++)
		apply(s, task(11 + i, "one", 0.5));
	apply(s, end(20, "a", "completed"));
	apply(s, start(20.2, "b"));
	const struct run *b = s->rows[1].run;
	apply(s, task(20.5, "one", 1.0)); /* began at 19.5: a's */
	apply(s, task(20.6, "two", 0.2)); /* began at 20.4, after a's end: b's */
	apply(s, task(20.3, "one", 0.2)); /* at 20.1: read late (SESSION_TASK_LAG), a's */
	assert_int_equal(task_count(a, "one"), 5);
	assert_int_equal(task_count(a, "two"), 0);
	assert_int_equal(task_count(b, "two"), 1);
	assert_int_equal(task_count(b, "one"), 0);
	apply(s, sample(22, 1)); /* a settled: closed */
	assert_true(s->rows[0].closed && !s->rows[0].dirty);
	apply(s, task(23, "two", 0.1));
	apply(s, task(24, "one", 5.0)); /* began at 19, in a */
	assert_true(s->rows[0].dirty);
	assert_int_equal(a->tasks.count, 6);
	assert_int_equal(task_count(a, "before"), 0);
	assert_int_equal(b->tasks.count, 2);
	assert_int_equal(task_count(b, "one"), 0);
	apply(s, end(30, "b", "completed"));
	struct event after = task(30.5, "after", 0.1); /* b settles, no watch yet */
	uint64_t unrouted = s->unrouted;
	assert_int_equal(session_apply(s, &after), 1);
	assert_int_equal(b->tasks.count, 2);
	assert_int_equal(s->unrouted, unrouted + 1); /* counted, never silently dropped */
	/* a recording out of order: a line of a's time read after both closed
	 * goes to a (written again), not to b nor the watch */
	apply(s, sample(40, 1));
	assert_true(s->rows[1].closed && s->watch);
	s->rows[0].dirty = false;
	apply(s, task(15, "one", 0.5));
	assert_int_equal(task_count(a, "one"), 7);
	assert_true(s->rows[0].dirty);
	assert_int_equal(b->tasks.count, 2);
	assert_int_equal(s->watch->tasks.count, 0);
}

/* Two runs open at once on one scheduler both take a task: the stream
 * carries no run id. */
static void runs_open_at_once_both_take_a_task(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, start(10, "a"));
	apply(s, start(11, "b"));
	apply(s, task(12, "x", 0.5));
	assert_int_equal(s->rows[0].run->tasks.count, 1);
	assert_int_equal(s->rows[1].run->tasks.count, 1);
}

/* Without a collector, the run a chunk opens keeps what its watch saw, and
 * a session with no run at all keeps every task. */
static void an_implicit_run_keeps_its_watchs_tasks(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, task(5, "w", 0.1));
	apply(s, task(6, "w", 0.1));
	apply(s, chunk(10, NULL, 5));
	const struct run *r = s->rows[0].run;
	assert_true(s->rows[0].implicit);
	apply(s, task(11, "x", 0.1));
	assert_int_equal(task_count(r, "w"), 2);
	assert_int_equal(r->tasks.count, 3);

	struct session solo;
	assert_int_equal(session_init(&solo, NULL, NULL), 0);
	apply(&solo, task(1, "w", 0.1));
	apply(&solo, sample(2, 1));
	apply(&solo, task(3, "w", 0.1));
	apply(&solo, test_event(EV_ADOPT_WATCH, 3));
	assert_int_equal(solo.rows[0].run->tasks.count, 2);
	session_destroy(&solo);
}

/* The task model's table and lanes are charged to the session's pool, the
 * table growing with the prefixes; a growth the pool refuses is counted and
 * the task kept in the totals; the charge goes with the run. */
static void task_model_is_charged_to_the_pool(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, start(1, "a"));
	const struct run *r = s->rows[0].run;
	size_t before = s->pool.used;
	apply(s, task(2, "p0", 0.1));
	size_t first = s->pool.used - before;
	assert_int_equal(first, r->tasks.cap * sizeof(struct tasks_prefix) +
					TASKS_LANES * sizeof(struct tasks_lane));
	assert_true(r->tasks.cap < TASKS_MAX_PREFIXES); /* not the whole table at once */
	s->pool.cap = s->pool.used; /* full */
	char name[32];
	for (size_t i = 1; i < r->tasks.cap + 5; i++) {
		snprintf(name, sizeof(name), "p%zu", i);
		apply(s, task(3, name, 0.1));
	}
	assert_int_equal(r->tasks.n, r->tasks.cap);
	assert_int_equal(r->tasks.pool_refused, 5);
	assert_int_equal(r->tasks.count, r->tasks.cap + 5);
	assert_true(s->pool.used <= s->pool.cap);
	s->pool.cap = SESSION_TABLE_BYTES;
	apply(s, task(4, "p-more", 0.1));
	assert_int_equal(r->tasks.n, r->tasks.cap / 2 + 1); /* the table doubled */
	struct run *x = malloc(sizeof(*x)); /* a run freed gives its charge back */
	assert_non_null(x);
	assert_int_equal(run_init(x), 0);
	size_t without = s->pool.used;
	run_set_pool(x, &s->pool);
	struct event ev = task(6, "x", 0.1);
	assert_int_equal(run_apply(x, &ev), 0);
	assert_true(s->pool.used > without);
	run_destroy(x);
	free(x);
	assert_int_equal(s->pool.used, without);
}

static struct event note(double t, const char *text)
{
	struct event ev = test_event(EV_LOG, t);
	ev.u.log = (struct ev_log){ .level = LOG_WARN, .text = text };
	return ev;
}

/* A log line goes to the newest run's log, at its own time, and moves
 * nothing else of the run: not its clock, not its counts of time; a closed
 * run that gets one is written again. */
static void log_lines_go_to_the_newest_run(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	uint64_t watched = s->watch->log_count;
	apply(s, note(90, "before any run"));
	assert_int_equal(s->watch->log_count, watched + 1);
	assert_string_equal(run_log_get(s->watch, 0)->text, "before any run");
	apply(s, start(100, "a"));
	apply(s, chunk(101, "a", 10));
	apply(s, note(150, "datagrams lost: 2 more"));
	const struct run *a = s->rows[0].run;
	assert_true(a->t_last == 101); /* a note is no clock reading */
	const struct log_line *l = run_log_get(a, 0);
	assert_string_equal(l->text, "datagrams lost: 2 more");
	assert_true(l->t == 150 && l->kind == LOG_WARN);
	assert_int_equal(a->applied[EV_LOG], 2); /* the watch it took had the first */
	apply(s, end(160, "a", "completed"));
	apply(s, sample(170, 2)); /* settled: a closes */
	assert_true(s->rows[0].closed && !s->rows[0].dirty);
	apply(s, note(171, "late"));
	assert_true(s->rows[0].dirty);
	assert_string_equal(run_log_get(a, 0)->text, "late");
}

/* Roastop's own note (a checkpoint failed) goes into the newest run's
 * log at once: not counted as applied, no closed run written again for it,
 * and no run settles at its time (it comes from the close callback too). */
static void own_notes_go_into_the_log_only(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, start(100, "a"));
	apply(s, end(160, "a", "completed"));
	struct event own = note(200, "checkpoint failed: disk full");
	own.u.log.own = true;
	apply(s, own);
	const struct run *a = s->rows[0].run;
	assert_false(s->rows[0].closed); /* 200 is past the settle: no tick */
	assert_string_equal(run_log_get(a, 0)->text, "checkpoint failed: disk full");
	assert_int_equal(a->applied[EV_LOG], 0);
	apply(s, sample(170, 2)); /* settled: a closes */
	assert_true(s->rows[0].closed && !s->rows[0].dirty);
	apply(s, own);
	assert_false(s->rows[0].dirty);
}

/* The app's figures and a write's outcome are events to the row of
 * their run: the figures with the run's status; the directory's name
 * when given; a closed run's row dirty exactly when the write failed. */
static void row_events_change_the_row_of_their_run(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, start(100, "a"));
	const struct run *a = s->rows[0].run;
	struct event fig = test_event(EV_ROW_FIGURES, 101);
	fig.u.row_figures = (struct ev_row_figures){ .run = a, .t_start = 100,
						     .chunks = optnum_of(3),
						     .events = optnum_none() };
	apply(s, fig);
	assert_true(s->rows[0].fig.t_start == 100 && s->rows[0].fig.chunks.value == 3);
	assert_false(s->rows[0].fig.events.valid);
	struct event w = test_event(EV_ROW_WRITE, 102);
	w.u.row_write = (struct ev_row_write){ .run = a, .dir = "2026-a", .write_errno = 28,
					       .failed = true };
	apply(s, w);
	assert_string_equal(s->rows[0].dir, "2026-a");
	assert_int_equal(s->rows[0].write_errno, 28);
	assert_false(s->rows[0].dirty); /* not closed: written at each checkpoint anyway */
	apply(s, end(160, "a", "completed"));
	apply(s, sample(170, 2));
	w.u.row_write = (struct ev_row_write){ .run = a, .write_errno = 28, .failed = true };
	apply(s, w);
	assert_true(s->rows[0].dirty);
	assert_string_equal(s->rows[0].dir, "2026-a");
	w.u.row_write = (struct ev_row_write){ .run = a };
	apply(s, w);
	assert_true(!s->rows[0].dirty && s->rows[0].write_errno == 0);
	w.u.row_write.run = s->watch; /* no row: nothing applied */
	assert_int_equal(session_apply(s, &w), 1);
	assert_int_equal(a->applied[EV_LOG] + a->ignored, 0);
}

static struct event counters(double t, const char *source, const struct source_counter *c,
			     size_t n)
{
	struct event ev = test_event(EV_COUNTERS, t);
	ev.u.counters = (struct ev_counters){ .source = source, .state_key = "listen",
					      .state = "127.0.0.1:1", .n_counters = n,
					      .counters = c };
	return ev;
}

/* The session keeps each source's latest counters in copies of its own
 * (the event's memory is gone after it), in the order the sources first
 * came; sources past the bound are refused and counted. */
static void counters_keep_the_latest_of_each_source(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	char group[16] = "rejected", name[16] = "bad_tag";
	struct source_counter c[2] = { { NULL, "datagrams", 5 }, { group, name, 1 } };
	apply(s, counters(100, "udp", c, 2));
	apply(s, counters(100.5, "scheduler", c, 1));
	c[1].value = 4;
	apply(s, counters(101, "udp", c, 2));
	strcpy(group, "gone");
	strcpy(name, "gone");
	assert_int_equal(s->counters.n, 2);
	struct ev_counters got;
	assert_true(counters_find(&s->counters, "udp", &got));
	assert_string_equal(got.state, "127.0.0.1:1");
	assert_int_equal(got.n_counters, 2);
	assert_null(got.counters[0].group);
	assert_string_equal(got.counters[1].group, "rejected");
	assert_string_equal(got.counters[1].name, "bad_tag");
	assert_true(got.counters[1].value == 4);
	struct event again = counters(102, "udp", got.counters, 2);
	assert_true(counters_same(&got, &again.u.counters));
	again.u.counters.state = "elsewhere";
	assert_false(counters_same(&got, &again.u.counters));
	counters_view(&s->counters, 1, &got);
	assert_string_equal(got.source, "scheduler");
	assert_int_equal(s->n_rows, 0); /* no run began */
	assert_false(s->watch->any_event); /* the watch's clock did not move */
	for (int i = 0; i < COUNTERS_SOURCES_MAX; i++) {
		char src[16];
		snprintf(src, sizeof(src), "s%d", i);
		struct event ev = counters(103, src, c, 1);
		session_apply(s, &ev);
	}
	assert_int_equal(s->counters.n, COUNTERS_SOURCES_MAX);
	assert_int_equal(s->counters.refused, 2);
}

/* A run closes at the first event SESSION_SETTLE after its end, and
 * session_due says so beforehand (the app then brings the sources'
 * counters); a counters event closes no run: it is the session's, applied
 * as of before that close, so the closed run is written with it. */
static void counters_come_before_the_close_they_precede(void **state)
{
	struct fixture *f = *state;
	struct session *s = &f->s;
	apply(s, start(10, "r1"));
	apply(s, chunk(11, "r1", 100));
	apply(s, end(12, "r1", "completed"));
	assert_false(session_due(s, 12 + SESSION_SETTLE / 2));
	assert_true(session_due(s, 12 + SESSION_SETTLE));
	struct source_counter c[1] = { { NULL, "applied", 3 } };
	apply(s, counters(12 + SESSION_SETTLE * 2, "udp", c, 1));
	assert_int_equal(f->c.n, 0); /* not closed by the counters */
	assert_int_equal(s->counters.n, 1);
	apply(s, sample(12 + SESSION_SETTLE * 2, 2));
	assert_int_equal(f->c.n, 1);
	assert_string_equal(f->c.ids[0], "r1");
	assert_false(session_due(s, 12 + SESSION_SETTLE * 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(runs_keep_their_own_chunks, setup, teardown),
		cmocka_unit_test_setup_teardown(the_next_run_takes_the_watch, setup, teardown),
		cmocka_unit_test_setup_teardown(chunks_without_a_run_begin_implicit_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(unannounced_run_is_found_by_id, setup, teardown),
		cmocka_unit_test_setup_teardown(old_runs_are_summarised_and_late_chunks_counted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(tables_share_one_pool, setup, teardown),
		cmocka_unit_test_setup_teardown(watch_only_session_has_one_run, setup, teardown),
		cmocka_unit_test_setup_teardown(log_lines_go_to_the_newest_run, setup, teardown),
		cmocka_unit_test_setup_teardown(erred_of_a_run_started_while_one_settles, setup, teardown),
		cmocka_unit_test_setup_teardown(tasks_belong_to_the_run_that_ran_them, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_open_at_once_both_take_a_task, setup, teardown),
		cmocka_unit_test_setup_teardown(an_implicit_run_keeps_its_watchs_tasks, setup, teardown),
		cmocka_unit_test_setup_teardown(task_model_is_charged_to_the_pool, setup, teardown),
		cmocka_unit_test_setup_teardown(own_notes_go_into_the_log_only, setup, teardown),
		cmocka_unit_test_setup_teardown(row_events_change_the_row_of_their_run, setup,
						teardown),
		cmocka_unit_test_setup_teardown(counters_come_before_the_close_they_precede, setup,
						teardown),
		cmocka_unit_test_setup_teardown(counters_keep_the_latest_of_each_source, setup,
						teardown),
	};
	return cmocka_run_group_tests_name("session", tests, NULL, NULL);
}
