/* The whole dashboard drawn into a real ncurses screen on /dev/null, every
 * view at sizes from too small to very large, with an empty run and a busy
 * one: under make asan this finds any write past a buffer or a grid. */
#include "test_util.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "roastop/metrics.h"
#include "roastop/run.h"
#include "roastop/session.h"
#include "roastop/ui.h"

static struct run R;

static void apply(struct event ev)
{
	assert_int_equal(run_apply(&R, &ev), 0);
}

static void busy_run(void)
{
	struct event ev = test_event(EV_RUN_START, 1000);
	ev.u.run_start.run_id = "r";
	ev.u.run_start.name = "a run with a long name \xc3\xa9\xe2\x82\xac and \x01 control bytes";
	ev.u.run_start.processor = "Proc";
	ev.u.run_start.expected_events = optnum_of(1e6);
	apply(ev);
	static char ids[300][40];
	static struct worker_sample ws[300];
	for (int s = 0; s < 50; s++) {
		for (int i = 0; i < 300; i++) {
			snprintf(ids[i], sizeof(ids[i]), "tcp://10.0.%d.%d:1234", i / 256, i % 256);
			ws[i] = (struct worker_sample){ .id = ids[i], .name = ids[i] + 6,
							.nthreads = optnum_of(4),
							.memory_bytes = optnum_of(1e9 * (1 + (i % 7))),
							.memory_limit = optnum_of(4e9),
							.cpu_percent = optnum_of(i % 100),
							.executing = optnum_of(i % 3) };
		}
		ev = test_event(EV_SAMPLE, 1000 + s * 5);
		ev.u.sample = (struct ev_sample){ .worker_count = 300 - (s > 40 ? 100 : 0),
						  .n_workers = 300 - (s > 40 ? 100 : 0),
						  .workers = ws };
		apply(ev);
	}
	for (int i = 0; i < 5000; i++) {
		ev = test_event(EV_CHUNK, 1000 + i * 0.05);
		ev.u.chunk.duration = optnum_of(0.01 * (1 + i % 977));
		ev.u.chunk.num_events = optnum_of(1000 + i % 50);
		ev.u.chunk.dataset = i % 2 ? "ds-a" : "ds-\xe2\x82\xac";
		ev.u.chunk.file = i % 3 ? "root://a/very/long/path/to/a/file/that/goes/on/and/on.root" : "f";
		ev.u.chunk.worker = ids[i % 300];
		ev.u.chunk.error = i % 500 == 0 ? "OSError" : NULL;
		apply(ev);
	}
	struct fine_row rows[2] = { { "execute", "Proc", "thread-cpu", "seconds", 100 },
				    { "execute", "x", "thread-noncpu", "seconds", 50 } };
	ev = test_event(EV_FINE, 1300);
	ev.u.fine = (struct ev_fine){ FINE_SPAN, 2, rows };
	apply(ev);
}

/* A UI drawing into /dev/null at cols x rows; test_ui_close closes it. */
static FILE *ui_out, *ui_in;

static struct ui *test_ui_open(int cols, int rows, bool ascii, bool no_color)
{
	ui_out = fopen("/dev/null", "w");
	ui_in = fopen("/dev/null", "r");
	assert_non_null(ui_out);
	assert_non_null(ui_in);
	struct ui_config cfg = { .out = ui_out, .in = ui_in, .cols = cols, .rows = rows,
				 .ascii = ascii, .no_color = no_color,
				 .theme = "themes/high-contrast.theme" };
	char err[256];
	struct ui *ui = ui_open(&cfg, err, sizeof(err));
	if (!ui)
		fail_msg("ui_open: %s", err);
	return ui;
}

static void test_ui_close(struct ui *ui)
{
	ui_close(ui);
	fclose(ui_out);
	fclose(ui_in);
}

static void draw_everything(int cols, int rows, bool ascii, bool no_color)
{
	struct ui *ui = test_ui_open(cols, rows, ascii, no_color);
	struct metrics m;
	metrics_compute(&R, R.t_last, NULL, &m);
	struct source_stats st = { .state_key = "listen", .state = "127.0.0.1:8790" };
	st.typed = (struct source_typed){ .role = SOURCE_LISTENER, .datagrams = 123456789,
					  .missing = 3,
					  .senders_full = 20000 }; /* the udp line's alert, at every size */
	struct source_stats polled = { .state_key = "mode", .state = "prometheus" };
	struct ui_source src[] = { { "udp", &st, NULL },
				   { "scheduler", &polled, "http://localhost:8787" } };
	struct ui_frame f = { .run = &R, .m = &m, .sources = src, .n_sources = 2, .out_dir = "/tmp/x",
			      .emitter_hint = "export ROASTOP_ADDR=127.0.0.1:8790", .now = R.t_last };
	for (int v = 0; v < UI_VIEW__COUNT; v++) {
		ui_set_view(ui, (enum ui_view)v);
		ui_draw(ui, &f);
	}
	/* the findings line and view: none, then more than the rows hold, each
	 * with text longer than any line */
	static struct findings fs;
	memset(&fs, 0, sizeof(fs));
	f.findings = &fs;
	for (size_t k = 0; k <= FIND__COUNT; k += FIND__COUNT) {
		for (size_t i = 0; i < k; i++) {
			struct finding *g = &fs.f[i];
			*g = (struct finding){ .id = (enum finding_id)i, .severity = (enum finding_severity)(i % 3),
					       .since = i % 2 ? NAN : R.t_last - 5 };
			snprintf(g->title, sizeof(g->title), "slow file: %0250d", (int)i);
			snprintf(g->evidence, sizeof(g->evidence), "%0300d words after it %0300d", 1, 2);
			snprintf(g->suggestion, sizeof(g->suggestion), "do something %0150d", 3);
		}
		fs.n = k;
		ui_set_view(ui, UI_VIEW_MAIN);
		ui_draw(ui, &f);
		ui_set_view(ui, UI_VIEW_FINDINGS);
		ui_draw(ui, &f);
	}
	ui_message(ui, "a message longer than any line: %0400d", 7);
	ui_draw(ui, &f);
	test_ui_close(ui);
}

static const int sizes[][2] = { { 1, 1 },   { 10, 5 },	 { 59, 17 },  { 60, 18 },  { 80, 24 },
				{ 81, 25 }, { 120, 40 }, { 200, 60 }, { 333, 97 }, { 1000, 300 } };

static void empty_run_every_view_every_size(void **state)
{
	(void)state;
	assert_int_equal(run_init(&R), 0);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(sizes); i++)
		draw_everything(sizes[i][0], sizes[i][1], i % 2, i % 3 == 0);
	run_destroy(&R);
}

static void busy_run_every_view_every_size(void **state)
{
	(void)state;
	assert_int_equal(run_init(&R), 0);
	busy_run();
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(sizes); i++) {
		draw_everything(sizes[i][0], sizes[i][1], false, false);
		draw_everything(sizes[i][0], sizes[i][1], true, true);
	}
	run_destroy(&R);
}

/* ---- the main view read back from the curses screen (ASCII mode) ---- */

#define SCREEN_MAX_ROWS 64
#define SCREEN_MAX_COLS 256
static char shown[SCREEN_MAX_ROWS][SCREEN_MAX_COLS];

static void draw_main_with(int cols, int rows, const struct ui_source *src, size_t n_src)
{
	struct ui *ui = test_ui_open(cols, rows, true, true);
	struct metrics m;
	metrics_compute(&R, R.t_last, NULL, &m);
	struct ui_frame f = { .run = &R, .m = &m, .out_dir = "/tmp/x", .now = R.t_last,
			      .sources = src, .n_sources = n_src };
	ui_set_view(ui, UI_VIEW_MAIN);
	ui_draw(ui, &f);
	for (int y = 0; y < rows && y < SCREEN_MAX_ROWS; y++)
		mvinnstr(y, 0, shown[y], cols < SCREEN_MAX_COLS - 1 ? cols : SCREEN_MAX_COLS - 1);
	test_ui_close(ui);
}

static void draw_main(int cols, int rows)
{
	draw_main_with(cols, rows, NULL, 0);
}

/* Is text on one of the first rows (the header)? */
static bool in_header(const char *text)
{
	for (int y = 0; y < 3; y++)
		if (strstr(shown[y], text))
			return true;
	return false;
}

/* Issue 34: the udp line says how many senders use each path once one
 * sends through the scheduler, and nothing of paths before. */
static void header_says_the_senders_paths(void **state)
{
	(void)state;
	assert_int_equal(run_init(&R), 0);
	struct source_stats st = { .state_key = "listen", .state = "127.0.0.1:8790" };
	st.typed = (struct source_typed){ .role = SOURCE_LISTENER, .datagrams = 40,
					  .senders_direct = 1 };
	struct ui_source src[] = { { "udp", &st, NULL } };
	draw_main_with(200, 60, src, 1);
	assert_false(in_header("senders udp"));
	st.typed.senders_relayed = 2;
	draw_main_with(200, 60, src, 1);
	assert_true(in_header("senders udp 1 dask 2"));
	run_destroy(&R);
}

/* The runtime histogram's axis row (inside its box, which starts at column
 * 0): the row above the border that says "log scale". */
static const char *runtime_axis(int rows, char *buf, size_t n)
{
	for (int y = 1; y < rows && y < SCREEN_MAX_ROWS; y++) {
		if (strncmp(shown[y], "+- log scale -", 14) != 0)
			continue;
		const char *row = shown[y - 1] + 1, *end = strchr(row, '|');
		assert_non_null(end);
		snprintf(buf, n, "%.*s", (int)(end - row), row);
		return buf;
	}
	fail_msg("no \"log scale\" border on screen");
	return NULL;
}

/* Axis labels ("10.0 ms", "9.8s"), apart by two spaces or more, counted. */
static int label_count(const char *axis)
{
	int n = 0;
	for (const char *p = axis; *p; p++)
		n += *p != ' ' && (p == axis || (p[-1] == ' ' && (p - 1 == axis || p[-2] == ' ')));
	return n;
}

/* A title cut by its border ends in a character right before the dashes
 * that run into the box's corner ("max 1-+"); a whole one ends in a space. */
static void no_title_cut(int rows)
{
	for (int y = 0; y < rows && y < SCREEN_MAX_ROWS; y++) {
		const char *row = shown[y];
		for (const char *p = strstr(row, "+- "); p; p = strstr(p + 1, "+- ")) {
			const char *corner = strchr(p + 3, '+');
			if (!corner)
				break;
			const char *q = corner;
			while (q > p && q[-1] == '-')
				q--;
			if (q < corner && q > p + 3 && q[-1] != ' ')
				fail_msg("title cut on row %d: %s", y, row);
			p = corner - 1;
		}
	}
}

static void no_zero_for_nonzero(const char *axis)
{
	if (strstr(axis, "0.0s") || strstr(axis, "0.00 ms") || strstr(axis, " 0s"))
		fail_msg("a zero label on the axis: %s", axis);
}

static void chunks(int n, double t0, double d0, double step)
{
	for (int i = 0; i < n; i++) {
		struct event ev = test_event(EV_CHUNK, t0 + i * 0.05);
		ev.u.chunk.duration = optnum_of(d0 + step * (i % 977));
		ev.u.chunk.num_events = optnum_of(1000 + i % 50);
		ev.u.chunk.dataset = "ds";
		ev.u.chunk.worker = "w";
		apply(ev);
	}
}

/* Issue 19 item 6: the axis says it is logarithmic and its ends are the real
 * range (10 ms .. 9.77 s in ms under a second), with inner ticks when there
 * is room; the titles drop parts rather than end mid-word. */
static void histogram_axis_marked_and_labelled(void **state)
{
	(void)state;
	assert_int_equal(run_init(&R), 0);
	busy_run();
	char axis[SCREEN_MAX_COLS];
	static const int at[][2] = { { 80, 24 }, { 120, 40 }, { 200, 60 } };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(at); i++) {
		draw_main(at[i][0], at[i][1]);
		runtime_axis(at[i][1], axis, sizeof(axis));
		assert_true(strncmp(axis, "10.0 ms ", 8) == 0);
		assert_non_null(strstr(axis, " 9.8s"));
		assert_true(label_count(axis) >= 3); /* a middle tick even at 80 columns */
		no_zero_for_nonzero(axis);
		no_title_cut(at[i][1]);
	}
	assert_int_equal(label_count(axis), 5); /* 200 columns: three inner ticks */
	bool full = false;
	for (int y = 0; y < 60; y++)
		full |= strstr(shown[y], "chunk runtime  p50 ") != NULL &&
			strstr(shown[y], "events per chunk  mean ") != NULL;
	assert_true(full);
	run_destroy(&R);
}

static bool on_screen(int rows, const char *text)
{
	for (int y = 0; y < rows && y < SCREEN_MAX_ROWS; y++)
		if (strstr(shown[y], text))
			return true;
	return false;
}

/* A chunk that failed once and succeeded on its retry: the progress line
 * says 0 failed, and 1 retried where there is room (issue 35, item 3). */
static void retried_chunk_is_not_failed_on_screen(void **state)
{
	(void)state;
	assert_int_equal(run_init(&R), 0);
	for (int i = 0; i < 2; i++) {
		struct event ev = test_event(EV_CHUNK, 1000 + i);
		ev.u.chunk.duration = optnum_of(0.5);
		ev.u.chunk.num_events = optnum_of(1000);
		ev.u.chunk.dataset = "ds";
		ev.u.chunk.file = "f.root";
		ev.u.chunk.entry_start = optnum_of(0);
		ev.u.chunk.entry_stop = optnum_of(1000);
		ev.u.chunk.error = i == 0 ? "OSError" : NULL;
		apply(ev);
	}
	draw_main(200, 60);
	assert_true(on_screen(60, "chunks 1 done, 0 failed | 1 retried")); /* ascii */
	draw_main(80, 24);
	assert_true(on_screen(24, "0 failed"));
	run_destroy(&R);
}

/* 0 s chunks cannot sit on a log axis: they count in the first bin, whose
 * label says "<=", and the axis starts at the data, not at 1 us. Tiny
 * durations still print as nonzero. */
static void histogram_axis_with_zero_and_tiny_durations(void **state)
{
	(void)state;
	assert_int_equal(run_init(&R), 0);
	chunks(50, 1000, 0, 0);
	chunks(200, 1010, 0.2, 0.01);
	char axis[SCREEN_MAX_COLS];
	draw_main(80, 24);
	runtime_axis(24, axis, sizeof(axis));
	/* the lower edge of the 200 ms chunk's bucket (2 % wide) */
	assert_true(strncmp(axis, "<=198 ms ", 9) == 0);
	no_zero_for_nonzero(axis);
	run_destroy(&R);
	assert_int_equal(run_init(&R), 0);
	chunks(200, 1000, 2e-6, 5e-8); /* 2 us to 12 us */
	draw_main(200, 60);
	runtime_axis(60, axis, sizeof(axis));
	assert_true(strncmp(axis, "0.002 ms ", 9) == 0); /* 2 us, the shortest chunk */
	no_zero_for_nonzero(axis);
	run_destroy(&R);
}

/* No terminal description: ui_open refuses with a reason, the app goes headless. */
static void no_cursor_addressing_is_refused(void **state)
{
	(void)state;
	FILE *out = fopen("/dev/null", "w");
	assert_non_null(out);
	char *old = getenv("TERM") ? strdup(getenv("TERM")) : NULL;
	setenv("TERM", "dumb", 1);
	struct ui_config cfg = { .out = out, .in = out, .cols = 80, .rows = 24 };
	char err[256] = "";
	assert_null(ui_open(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "no cursor addressing"));
	setenv("TERM", "no-such-terminal-type", 1);
	assert_null(ui_open(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown terminal type"));
	if (old)
		setenv("TERM", old, 1);
	else
		setenv("TERM", "xterm-256color", 1);
	free(old);
	fclose(out);
}

/* View 8: Down and Enter pick the second run; rows dropped from the
 * session's front later move the pick up, and past it, back to the newest. */
static void picked_run_moves_with_dropped_rows(void **state)
{
	(void)state;
	struct session s;
	assert_int_equal(session_init(&s, NULL, NULL), 0);
	const char *ids[] = { "a", "b", "c" };
	for (int i = 0; i < 3; i++) {
		struct event ev = test_event(EV_RUN_START, 10.0 + i);
		ev.u.run_start.run_id = ids[i];
		assert_int_equal(session_apply(&s, &ev), 0);
	}
	int keys[2];
	assert_int_equal(pipe(keys), 0);
	FILE *out = fopen("/dev/null", "w"), *in = fdopen(keys[0], "r");
	struct ui_config cfg = { .out = out, .in = in, .cols = 80, .rows = 24, .ascii = true,
				 .no_color = true, .theme = "themes/high-contrast.theme" };
	char err[256];
	struct ui *ui = ui_open(&cfg, err, sizeof(err));
	if (!ui)
		fail_msg("ui_open: %s", err);
	struct metrics m;
	metrics_compute(session_newest(&s), 20, NULL, &m);
	struct ui_frame f = { .run = session_newest(&s), .session = &s, .m = &m, .now = 20 };
	ui_set_view(ui, UI_VIEW_RUNS);
	ui_draw(ui, &f); /* opens on the first row: ui_set_view is not the 8 key */
	assert_int_equal(write(keys[1], "j\n", 2), 2);
	ui_input(ui);
	assert_int_equal(ui_picked_run(ui, &s), 2);
	s.rows_dropped = 1;
	assert_int_equal(ui_picked_run(ui, &s), 1);
	s.rows_dropped = 2;
	assert_int_equal(ui_picked_run(ui, &s), 0);
	ui_close(ui);
	close(keys[1]);
	fclose(in);
	fclose(out);
	session_destroy(&s);
}

/* View 8's side by side (issue 35, item 4): m marks a run, the selected
 * one is compared with it under the list, the change from the rows' own
 * figures; n/a where a run lacks one, at 80x24 and 200x60. */
static void marked_run_compared_with_the_selected_one(void **state)
{
	(void)state;
	struct session s;
	assert_int_equal(session_init(&s, NULL, NULL), 0);
	const char *ids[] = { "a", "b" };
	for (int i = 0; i < 2; i++) {
		struct event ev = test_event(EV_RUN_START, 10.0 + i);
		ev.u.run_start.run_id = ids[i];
		assert_int_equal(session_apply(&s, &ev), 0);
	}
	s.rows[0].fig = (struct session_figures){ .elapsed = optnum_of(10), .chunks = optnum_of(4),
						   .failed = optnum_of(0), .events = optnum_of(80000),
						   .event_rate_hz = optnum_of(8000) };
	s.rows[1].fig = (struct session_figures){ .elapsed = optnum_of(5), .chunks = optnum_of(80),
						   .events = optnum_of(80000),
						   .event_rate_hz = optnum_of(16000) };
	static const int at[][2] = { { 80, 24 }, { 200, 60 } };
	for (size_t k = 0; k < ROASTOP_ARRAY_LEN(at); k++) {
		int keys[2];
		assert_int_equal(pipe(keys), 0);
		FILE *out = fopen("/dev/null", "w"), *in = fdopen(keys[0], "r");
		struct ui_config cfg = { .out = out, .in = in, .cols = at[k][0], .rows = at[k][1],
					 .ascii = true, .no_color = true,
					 .theme = "themes/high-contrast.theme" };
		char err[256];
		struct ui *ui = ui_open(&cfg, err, sizeof(err));
		if (!ui)
			fail_msg("ui_open: %s", err);
		struct metrics m;
		metrics_compute(session_newest(&s), 20, NULL, &m);
		struct ui_frame f = { .run = session_newest(&s), .session = &s, .m = &m, .now = 20 };
		ui_set_view(ui, UI_VIEW_RUNS);
		ui_draw(ui, &f);
		assert_int_equal(write(keys[1], "mj", 2), 2); /* mark run 1, select run 2 */
		ui_input(ui);
		ui_input(ui);
		ui_draw(ui, &f);
		int rows = at[k][1], cols = at[k][0];
		for (int y = 0; y < rows && y < SCREEN_MAX_ROWS; y++)
			mvinnstr(y, 0, shown[y], cols < SCREEN_MAX_COLS - 1 ? cols : SCREEN_MAX_COLS - 1);
		assert_true(on_screen(rows, "compare: A run 1 (marked, m) with B run 2 (selected)"));
		assert_true(on_screen(rows, "m1 "));
		assert_true(on_screen(rows, "event rate       8.00 kHz     16.0 kHz  +8.00 kHz (+100.0 %)"));
		assert_true(on_screen(rows, "chunks                  4           80  +76 (+1900.0 %)"));
		assert_true(on_screen(rows, "failed                  0          n/a  n/a"));
		ui_close(ui);
		close(keys[1]);
		fclose(in);
		fclose(out);
	}
	session_destroy(&s);
}

int main(void)
{
	setenv("TERM", "xterm-256color", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_run_every_view_every_size),
		cmocka_unit_test(busy_run_every_view_every_size),
		cmocka_unit_test(no_cursor_addressing_is_refused),
		cmocka_unit_test(histogram_axis_marked_and_labelled),
		cmocka_unit_test(header_says_the_senders_paths),
		cmocka_unit_test(histogram_axis_with_zero_and_tiny_durations),
		cmocka_unit_test(picked_run_moves_with_dropped_rows),
		cmocka_unit_test(retried_chunk_is_not_failed_on_screen),
		cmocka_unit_test(marked_run_compared_with_the_selected_one),
	};
	return cmocka_run_group_tests_name("ui", tests, NULL, NULL);
}
