/* The whole dashboard drawn into a real ncurses screen on /dev/null, every
 * view at sizes from too small to very large, with an empty run and a busy
 * one: under make asan this finds any write past a buffer or a grid. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

#include "roastop/metrics.h"
#include "roastop/run.h"
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

static void draw_everything(int cols, int rows, bool ascii, bool no_color)
{
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	assert_non_null(out);
	assert_non_null(in);
	struct ui_config cfg = { .out = out, .in = in, .cols = cols, .rows = rows, .ascii = ascii,
				 .no_color = no_color, .theme = "themes/high-contrast.theme" };
	char err[256];
	struct ui *ui = ui_open(&cfg, err, sizeof(err));
	if (!ui)
		fail_msg("ui_open: %s", err);
	struct metrics m;
	metrics_compute(&R, R.t_last, NULL, &m);
	struct udp_stats st = { .datagrams = 123456789, .missing = 3 };
	st.rejected[UDP_SENDERS_FULL] = 20000; /* the udp line's alert, at every size */
	struct ui_frame f = { .run = &R, .m = &m, .scheduler_url = "http://localhost:8787",
			      .udp_address = "127.0.0.1:8790", .udp = &st, .out_dir = "/tmp/x",
			      .emitter_hint = "export ROASTOP_ADDR=127.0.0.1:8790", .now = R.t_last };
	for (int v = 0; v < UI_VIEW__COUNT; v++) {
		ui_set_view(ui, (enum ui_view)v);
		ui_draw(ui, &f);
	}
	ui_message(ui, "a message longer than any line: %0400d", 7);
	ui_draw(ui, &f);
	ui_close(ui);
	fclose(out);
	fclose(in);
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

int main(void)
{
	setenv("TERM", "xterm-256color", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_run_every_view_every_size),
		cmocka_unit_test(busy_run_every_view_every_size),
		cmocka_unit_test(no_cursor_addressing_is_refused),
	};
	return cmocka_run_group_tests_name("ui", tests, NULL, NULL);
}
