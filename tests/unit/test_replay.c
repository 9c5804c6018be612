/* Recording writer and reader together: what is recorded replays exactly;
 * bad lines are skipped and counted by reason. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roastop/event_json.h"
#include "roastop/record.h"
#include "roastop/replay.h"

static char path[64];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/roastop-test-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void write_text(const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void recorded_events_replay_exactly(void **state)
{
	(void)state;
	char err[256];
	struct recorder *rec = recorder_open(path, err, sizeof(err));
	assert_non_null(rec);
	struct event ev;
	event_init(&ev);
	struct kv_num kv[] = { { "sel", 0.5 } };
	for (int i = 0; i < 3000; i++) {
		event_reset(&ev);
		ev.type = EV_CHUNK;
		ev.t = 1767225600.0 + i;
		ev.u.chunk.duration = optnum_of(i * 0.001);
		ev.u.chunk.num_events = optnum_of(i);
		ev.u.chunk.dataset = i % 2 ? "odd" : "even";
		ev.u.chunk.timing = kv;
		ev.u.chunk.n_timing = 1;
		assert_int_equal(recorder_write(rec, &ev), 0);
	}
	assert_int_equal(recorder_events(rec), 3000);
	assert_int_equal(recorder_close(rec), 0);

	struct replay *rd = replay_open(path, err, sizeof(err));
	assert_non_null(rd);
	int n = 0, rc;
	while ((rc = replay_next(rd, &ev)) == 1) {
		assert_int_equal(ev.type, EV_CHUNK);
		assert_near(ev.t, 1767225600.0 + n, 0);
		assert_near(ev.u.chunk.num_events.value, n, 0);
		assert_string_equal(ev.u.chunk.dataset, n % 2 ? "odd" : "even");
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 3000);
	assert_true(replay_had_header(rd));
	assert_int_equal(replay_rejects(rd)->total, 0);
	replay_close(rd);
	event_free(&ev);
}

static void bad_lines_counted_good_ones_kept(void **state)
{
	(void)state;
	write_text("{\"type\":\"chunk\",\"t\":5,\"duration\":1}\n"
		   "garbage\n"
		   "\n"
		   "{\"type\":\"chunk\",\"t\":6,\"duration\":-1}\n"
		   "{\"type\":\"chunk\",\"t\":7,\"duration\":2}"); /* no final newline */
	char err[256];
	struct replay *rd = replay_open(path, err, sizeof(err));
	struct event ev;
	event_init(&ev);
	int n = 0;
	while (replay_next(rd, &ev) == 1)
		n++;
	assert_int_equal(n, 2);
	assert_false(replay_had_header(rd));
	const struct reject_counts *rc = replay_rejects(rd);
	assert_int_equal(rc->total, 2);
	assert_int_equal(rc->by_reason[DEC_NOT_JSON], 1);
	assert_int_equal(rc->by_reason[DEC_OUT_OF_RANGE], 1);
	assert_int_equal(replay_lines(rd), 5);
	replay_close(rd);
	event_free(&ev);
}

static void overlong_line_skipped_whole(void **state)
{
	(void)state;
	size_t big = EVENT_JSON_MAX + 5000;
	char *text = malloc(big + 200);
	size_t n = (size_t)sprintf(text, "{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":\"");
	memset(text + n, 'a', big);
	strcpy(text + n + big, "\"}\n{\"type\":\"chunk\",\"t\":6,\"duration\":3}\n");
	write_text(text);
	free(text);
	char err[256];
	struct replay *rd = replay_open(path, err, sizeof(err));
	struct event ev;
	event_init(&ev);
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_near(ev.u.chunk.duration.value, 3, 0); /* the line after it */
	assert_int_equal(replay_next(rd, &ev), 0);
	assert_int_equal(replay_rejects(rd)->by_reason[DEC_TOO_LARGE], 1);
	replay_close(rd);
	event_free(&ev);
}

static void missing_file_is_an_error(void **state)
{
	(void)state;
	char err[256];
	assert_null(replay_open("/nonexistent/recording.jsonl", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/recording.jsonl"));
	assert_null(recorder_open("/nonexistent/dir/rec.jsonl", err, sizeof(err)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(recorded_events_replay_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_lines_counted_good_ones_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(overlong_line_skipped_whole, setup, teardown),
		cmocka_unit_test(missing_file_is_an_error),
	};
	return cmocka_run_group_tests_name("replay", tests, NULL, NULL);
}
