/* The recorder: what it writes replays back exactly; the file it makes;
 * errors come back as -1 with errno, never a crash. */
#include "test_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "event_fixtures.h"
#include "roastop/record.h"
#include "roastop/replay.h"

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/roastop-record-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/rec.jsonl", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char p[160];
	snprintf(p, sizeof(p), "%s/link.jsonl", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/target", dir);
	unlink(p);
	unlink(path);
	rmdir(dir);
	return 0;
}

static long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* Every type, with every field and with the required ones only, then a
 * few thousand chunks: replay_next returns each, field for field (a chunk's
 * and a report's run_id too: a replay routes them to their runs as the live
 * session did). */
static void recorded_events_replay_exactly(void **state)
{
	(void)state;
	char err[256], why[128];
	struct recorder *rec = recorder_open(path, err, sizeof(err));
	assert_non_null(rec);
	struct event ev, back;
	event_init(&ev);
	event_init(&back);
	for (int t = EV_SAMPLE; t < EV__COUNT; t++) {
		for (int full = 0; full <= 1; full++) {
			fx_event(&ev, t, full);
			assert_int_equal(recorder_write(rec, &ev), 0);
		}
	}
	for (int i = 0; i < 3000; i++) {
		fx_event(&ev, EV_CHUNK, i % 2);
		ev.t += i;
		ev.u.chunk.num_events = optnum_of(i);
		assert_int_equal(recorder_write(rec, &ev), 0);
	}
	assert_int_equal(recorder_close(rec), 0);

	struct replay *rd = replay_open(path, err, sizeof(err));
	assert_non_null(rd);
	for (int t = EV_SAMPLE; t < EV__COUNT; t++) {
		for (int full = 0; full <= 1; full++) {
			assert_int_equal(replay_next(rd, &back), 1);
			fx_event(&ev, t, full);
			if (!fx_equal(&ev, &back, why, sizeof(why)))
				fail_msg("%s (full %d): %s", event_type_name(t), full, why);
			if (full && t == EV_REPORT)
				assert_string_equal(back.u.report.run_id, "gen-0001");
			if (t == EV_CHUNK && !full)
				assert_null(back.u.chunk.run_id);
		}
	}
	for (int i = 0; i < 3000; i++) {
		assert_int_equal(replay_next(rd, &back), 1);
		fx_event(&ev, EV_CHUNK, i % 2);
		ev.t += i;
		ev.u.chunk.num_events = optnum_of(i);
		if (!fx_equal(&ev, &back, why, sizeof(why)))
			fail_msg("chunk %d: %s", i, why);
	}
	assert_int_equal(replay_next(rd, &back), 0);
	assert_int_equal(replay_rejects(rd)->total, 0);
	assert_int_equal(replay_lines(rd), 1 + 2 * (EV__COUNT - 1) + 3000);
	replay_close(rd);
	event_free(&ev);
	event_free(&back);
}

/* The first line says what the file is; the file is 0644 and truncated. */
static void header_and_file(void **state)
{
	(void)state;
	char err[256], line[512];
	FILE *f = fopen(path, "w");
	fputs("old content that must go\n", f);
	fclose(f);
	mode_t old = umask(022);
	time_t before = time(NULL);
	struct recorder *rec = recorder_open(path, err, sizeof(err));
	umask(old);
	assert_non_null(rec);
	assert_int_equal(recorder_close(rec), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	f = fopen(path, "r");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_null(fgets(line + 256, 256, f)); /* nothing after the header */
	fclose(f);
	assert_int_equal(line[strlen(line) - 1], '\n');
	cJSON *h = cJSON_Parse(line);
	assert_non_null(h);
	assert_string_equal(cJSON_GetObjectItem(h, "type")->valuestring, "recording");
	assert_string_equal(cJSON_GetObjectItem(h, "format")->valuestring, "roastop-recording");
	assert_true(cJSON_GetObjectItem(h, "version")->valuedouble == 1);
	assert_string_equal(cJSON_GetObjectItem(h, "roastop")->valuestring, ROASTOP_VERSION);
	double created = cJSON_GetObjectItem(h, "created")->valuedouble;
	assert_true(created >= (double)before && created <= (double)time(NULL));
	cJSON_Delete(h);
}

/* Lines wait in memory until 64 KiB have gathered, or a flush; the header
 * is on disk from the start. */
static void buffered_until_64k(void **state)
{
	(void)state;
	char err[256];
	struct recorder *rec = recorder_open(path, err, sizeof(err));
	long header = file_size(path);
	assert_true(header > 50 && header < 200);
	struct event ev;
	event_init(&ev);
	fx_event(&ev, EV_CHUNK, false); /* ~55 bytes a line */
	assert_int_equal(recorder_write(rec, &ev), 0);
	assert_int_equal(file_size(path), header);
	assert_int_equal(recorder_flush(rec), 0);
	long one = file_size(path);
	assert_true(one > 100 && one < 300); /* header + one line */
	int n = 0;
	while (file_size(path) == one) {
		assert_int_equal(recorder_write(rec, &ev), 0);
		n++;
		assert_true(n < 2000);
	}
	assert_true(file_size(path) >= one + 64 * 1024);
	assert_true(file_size(path) < one + 64 * 1024 + 200);
	assert_int_equal(recorder_close(rec), 0);
	event_free(&ev);
}

/* A run's start and end reach the file at once, with what was buffered
 * before them: a SIGKILL right after still leaves the run's outline. */
static void run_boundaries_written_at_once(void **state)
{
	(void)state;
	char err[256];
	struct recorder *rec = recorder_open(path, err, sizeof(err));
	long header = file_size(path);
	struct event ev;
	event_init(&ev);
	static const int boundaries[] = { EV_RUN_START, EV_RUN_END };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(boundaries); i++) {
		fx_event(&ev, EV_CHUNK, false);
		assert_int_equal(recorder_write(rec, &ev), 0);
		long before = file_size(path);
		fx_event(&ev, boundaries[i], true);
		assert_int_equal(recorder_write(rec, &ev), 0);
		assert_true(file_size(path) > before + 30); /* the chunk and the boundary */
	}
	assert_true(file_size(path) > header);
	assert_int_equal(recorder_close(rec), 0);
	event_free(&ev);
}

static void refuses_symlinks(void **state)
{
	(void)state;
	char err[256], link[160], target[160];
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link.jsonl", dir);
	FILE *f = fopen(target, "w");
	fputs("precious\n", f);
	fclose(f);
	assert_int_equal(symlink(target, link), 0);
	assert_null(recorder_open(link, err, sizeof(err)));
	assert_non_null(strstr(err, link));
	assert_int_equal(file_size(target), 9); /* untouched */
	assert_null(recorder_open("/nonexistent/dir/rec.jsonl", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/dir/rec.jsonl"));
}

/* A disk full from the start: said at open, not after the run. The file
 * may not grow at all (RLIMIT_FSIZE 0, as a full quota): the header's write
 * fails inside recorder_open. A device such as /dev/full is no recording
 * target at all (recorder_open takes regular files only). */
static void full_disk_at_open(void **state)
{
	(void)state;
	char err[256];
	struct rlimit old, lim;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 0;
	void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	struct recorder *rec = recorder_open(path, err, sizeof(err));
	int e = errno;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, was);
	assert_null(rec);
	assert_int_equal(e, EFBIG);
	assert_non_null(strstr(err, strerror(EFBIG)));
	if (access("/dev/full", W_OK) != 0)
		return;
	assert_null(recorder_open("/dev/full", err, sizeof(err)));
	assert_non_null(strstr(err, "not a regular file"));
}

/* The file may grow only so far (RLIMIT_FSIZE, as a quota would): -1 with
 * the reason from the write that flushes and from every call after it;
 * closing reports the loss; the write cut mid-line is cut back, so the file
 * ends with a whole line and replays without a rejection. */
static void write_errors_leave_whole_lines(void **state)
{
	(void)state;
	char err[256];
	struct rlimit old, lim;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 100000; /* not a multiple of any line */
	void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	struct recorder *rec = recorder_open(path, err, sizeof(err));
	assert_non_null(rec);
	struct event ev;
	event_init(&ev);
	fx_event(&ev, EV_CHUNK, true);
	int rc = 0, n = 0;
	while (rc == 0 && n < 100000) {
		rc = recorder_write(rec, &ev);
		n++;
	}
	assert_int_equal(rc, -1);
	assert_int_equal(errno, EFBIG);
	assert_true(n > 10); /* buffered first */
	errno = 0;
	assert_int_equal(recorder_write(rec, &ev), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(recorder_flush(rec), -1);
	assert_int_equal(recorder_close(rec), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, was);

	long size = file_size(path);
	assert_true(size > 0 && size < 100000);
	FILE *f = fopen(path, "r");
	assert_int_equal(fseek(f, -1, SEEK_END), 0);
	assert_int_equal(fgetc(f), '\n');
	fclose(f);
	struct replay *rd = replay_open(path, err, sizeof(err));
	assert_non_null(rd);
	while (replay_next(rd, &ev) == 1)
		;
	assert_int_equal(replay_rejects(rd)->total, 0);
	replay_close(rd);
	event_free(&ev);
}

/* An event without a type is refused, and the recording goes on. */
static void typeless_event_refused(void **state)
{
	(void)state;
	char err[256];
	struct recorder *rec = recorder_open(path, err, sizeof(err));
	struct event ev;
	event_init(&ev);
	errno = 0;
	assert_int_equal(recorder_write(rec, &ev), -1);
	assert_int_equal(errno, EINVAL);
	fx_event(&ev, EV_RUN_END, true);
	assert_int_equal(recorder_write(rec, &ev), 0);
	assert_int_equal(recorder_close(rec), 0);
	struct replay *rd = replay_open(path, err, sizeof(err));
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_int_equal(ev.type, EV_RUN_END);
	assert_int_equal(replay_next(rd, &ev), 0);
	replay_close(rd);
	event_free(&ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(recorded_events_replay_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(header_and_file, setup, teardown),
		cmocka_unit_test_setup_teardown(buffered_until_64k, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(run_boundaries_written_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(full_disk_at_open, setup, teardown),
		cmocka_unit_test_setup_teardown(write_errors_leave_whole_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(typeless_event_refused, setup, teardown),
	};
	return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}
