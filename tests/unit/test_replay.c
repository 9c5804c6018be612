/* The recording reader: bad lines skipped and counted by reason with their
 * line numbers, bounded lines, the header rules. */
#include "test_util.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/event_json.h"
#include "roastop/replay.h"

#define HEADER "{\"type\":\"recording\",\"format\":\"roastop-recording\",\"version\":1}\n"
#define CHUNK(t, d) "{\"type\":\"chunk\",\"t\":" #t ",\"duration\":" #d "}"

static char path[64];
static struct event ev;

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/roastop-replay-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	event_init(&ev);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	event_free(&ev);
	return 0;
}

static void write_bytes(const char *text, size_t len)
{
	FILE *f = fopen(path, "w");
	fwrite(text, 1, len, f);
	fclose(f);
}

static void write_text(const char *text)
{
	write_bytes(text, strlen(text));
}

static struct replay *open_quiet(void)
{
	char err[256];
	struct replay *rd = replay_open(path, err, sizeof(err));
	if (!rd)
		fail_msg("replay_open: %s", err);
	replay_set_report(rd, NULL);
	return rd;
}

/* Each bad line is counted under its reason and remembered with its line
 * number; blank lines count as lines but are no events; CRLF is fine. */
static void bad_lines_counted_by_reason(void **state)
{
	(void)state;
	write_text(HEADER                                          /* 1 */
		   CHUNK(5, 1) "\n"                                /* 2 */
		   "garbage\n"                                     /* 3 */
		   "\n"                                            /* 4 */
		   "  \t\r\n"                                      /* 5 */
		   "{\"type\":\"chunk\",\"t\":6,\"duration\":-1}\n"    /* 6 */
		   CHUNK(7, 2) "\r\n"                              /* 7 */
		   "{\"type\":\"nope\",\"t\":1}\n"                     /* 8 */
		   "[1]\n"                                         /* 9 */
		   "{\"type\":\"chunk\",\"t\":8}\n"                    /* 10 */
		   "{\"type\":\"chunk\",\"t\":9,\"duration\":1,\"file\":\"\xff\"}\n" /* 11 */
		   CHUNK(10, 3));                                  /* 12, no final newline */
	struct replay *rd = open_quiet();
	double got[3];
	int n = 0;
	while (replay_next(rd, &ev) == 1) {
		assert_true(n < 3);
		got[n++] = ev.u.chunk.duration.value;
	}
	assert_int_equal(n, 3);
	assert_true(got[0] == 1 && got[1] == 2 && got[2] == 3);
	const struct reject_counts *rc = replay_rejects(rd);
	assert_int_equal(rc->total, 6);
	assert_int_equal(rc->by_reason[DEC_NOT_JSON], 1);
	assert_int_equal(rc->by_reason[DEC_OUT_OF_RANGE], 1);
	assert_int_equal(rc->by_reason[DEC_UNKNOWN_TYPE], 1);
	assert_int_equal(rc->by_reason[DEC_NOT_OBJECT], 1);
	assert_int_equal(rc->by_reason[DEC_MISSING_FIELD], 1);
	assert_int_equal(rc->by_reason[DEC_BAD_UTF8], 1);
	const struct replay_reject *first;
	assert_int_equal(replay_first_rejects(rd, &first), REPLAY_REPORT_MAX);
	const struct replay_reject want[REPLAY_REPORT_MAX] = {
		{ 3, DEC_NOT_JSON },	 { 6, DEC_OUT_OF_RANGE },  { 8, DEC_UNKNOWN_TYPE },
		{ 9, DEC_NOT_OBJECT }, { 10, DEC_MISSING_FIELD },
	};
	for (int i = 0; i < REPLAY_REPORT_MAX; i++) {
		assert_int_equal(first[i].line, want[i].line);
		assert_int_equal(first[i].reason, want[i].reason);
	}
	assert_int_equal(replay_lines(rd), 12);
	assert_int_equal(replay_next(rd, &ev), 0); /* and stays at the end */
	replay_close(rd);
}

/* The first rejections are printed as "file:line: skipped: reason". */
static void rejections_reported(void **state)
{
	(void)state;
	write_text(HEADER "oops\n" CHUNK(5, 1) "\n{\"t\":5}\n");
	char err[256];
	struct replay *rd = replay_open(path, err, sizeof(err));
	FILE *out = tmpfile();
	replay_set_report(rd, out);
	while (replay_next(rd, &ev) == 1)
		;
	rewind(out);
	char line[512], want[512];
	assert_non_null(fgets(line, sizeof(line), out));
	snprintf(want, sizeof(want), "roastop: %s:2: skipped: not_json\n", path);
	assert_string_equal(line, want);
	assert_non_null(fgets(line, sizeof(line), out));
	snprintf(want, sizeof(want), "roastop: %s:4: skipped: no_type\n", path);
	assert_string_equal(line, want);
	assert_null(fgets(line, sizeof(line), out));
	fclose(out);
	replay_close(rd);
}

/* A line over EVENT_JSON_MAX is skipped to its newline, never held whole,
 * and counted as too_large with its line number; a line of exactly the
 * limit is read. */
static void overlong_line_skipped_whole(void **state)
{
	(void)state;
	size_t big = 3 * EVENT_JSON_MAX;
	char *text = malloc(2 * big);
	const char *chunk = CHUNK(5, 1);
	size_t n = (size_t)sprintf(text, "%s%s", HEADER, chunk);
	memset(text + n, ' ', EVENT_JSON_MAX - strlen(chunk)); /* line 2: exactly the limit */
	n += EVENT_JSON_MAX - strlen(chunk);
	n += (size_t)sprintf(text + n, "\n{\"type\":\"chunk\",\"t\":5,\"duration\":1,\"x\":\"");
	memset(text + n, 'a', big); /* line 3: three times the limit */
	n += big;
	n += (size_t)sprintf(text + n, "\"}\n%s\n", CHUNK(6, 3)); /* line 4 */
	memset(text + n, 'b', EVENT_JSON_MAX + 1); /* line 5: one over, at the end, no newline */
	n += EVENT_JSON_MAX + 1;
	write_bytes(text, n);
	free(text);
	struct replay *rd = open_quiet();
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_true(ev.t == 5 && ev.u.chunk.duration.value == 1);
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_true(ev.u.chunk.duration.value == 3); /* the line after the long one */
	assert_int_equal(replay_next(rd, &ev), 0);
	assert_int_equal(replay_rejects(rd)->by_reason[DEC_TOO_LARGE], 2);
	assert_int_equal(replay_rejects(rd)->total, 2);
	const struct replay_reject *first;
	assert_int_equal(replay_first_rejects(rd, &first), 2);
	assert_int_equal(first[0].line, 3);
	assert_int_equal(first[1].line, 5);
	assert_int_equal(replay_lines(rd), 5);
	replay_close(rd);
}

/* No header: read anyway, one counted warning, the first line is an event. */
static void missing_header_accepted(void **state)
{
	(void)state;
	write_text("\n" CHUNK(5, 1) "\n" CHUNK(6, 2) "\n");
	char err[256];
	struct replay *rd = replay_open(path, err, sizeof(err));
	assert_non_null(rd);
	FILE *out = tmpfile();
	replay_set_report(rd, out); /* the warning waits for it */
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_true(ev.t == 5);
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_true(ev.t == 6);
	assert_int_equal(replay_next(rd, &ev), 0);
	assert_int_equal(replay_rejects(rd)->total, 0);
	rewind(out);
	char line[512], want[512];
	snprintf(want, sizeof(want), "roastop: %s: no recording header; reading it anyway\n", path);
	assert_non_null(fgets(line, sizeof(line), out));
	assert_string_equal(line, want);
	assert_null(fgets(line, sizeof(line), out)); /* once */
	fclose(out);
	replay_close(rd);

	/* a bad first line is both: no header, and a counted rejection */
	write_text("{bad\n" CHUNK(5, 1) "\n");
	rd = open_quiet();
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_int_equal(replay_rejects(rd)->by_reason[DEC_NOT_JSON], 1);
	replay_close(rd);

	write_text(""); /* empty: no events */
	rd = open_quiet();
	assert_int_equal(replay_next(rd, &ev), 0);
	assert_int_equal(replay_lines(rd), 0);
	replay_close(rd);
}

/* Another format or a newer major version cannot be read; an older or
 * same major version (any minor) can. */
static void header_versions(void **state)
{
	(void)state;
	char err[256];
	write_text("{\"type\":\"recording\",\"format\":\"other-tool\",\"version\":1}\n" CHUNK(5, 1));
	assert_null(replay_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "format"));
	write_text("{\"type\":\"recording\",\"format\":\"roastop-recording\",\"version\":2}\n");
	assert_null(replay_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "version 2 is newer"));
	write_text("{\"type\":\"recording\",\"format\":\"roastop-recording\"}\n");
	assert_null(replay_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "version"));
	write_text("\n\n{\"type\":\"recording\",\"format\":\"roastop-recording\",\"version\":1.7,"
		   "\"roastop\":\"9.9\",\"created\":5,\"future\":[1]}\n" CHUNK(5, 1) "\n");
	struct replay *rd = replay_open(path, err, sizeof(err));
	assert_non_null(rd);
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_int_equal(replay_lines(rd), 4);
	replay_close(rd);
	/* a second header later on (two recordings concatenated) is no event */
	write_text(HEADER CHUNK(5, 1) "\n" HEADER CHUNK(6, 1) "\n");
	rd = open_quiet();
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_int_equal(replay_next(rd, &ev), 1);
	assert_int_equal(replay_rejects(rd)->by_reason[DEC_UNKNOWN_TYPE], 1);
	replay_close(rd);
}

static void unreadable_inputs(void **state)
{
	(void)state;
	char err[256];
	assert_null(replay_open("/nonexistent/recording.jsonl", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/recording.jsonl"));
	assert_null(replay_open("/tmp", err, sizeof(err))); /* a directory: read fails */
	assert_non_null(strstr(err, "cannot read recording /tmp"));
	write_bytes("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8);
	assert_null(replay_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "gzip"));
	assert_non_null(strstr(err, "zcat"));
}

static void write_fd(int fd, const char *text)
{
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* Standard input as a pipe whose writer is quiet: REPLAY_WAIT, never a
 * blocked read; a line is assembled from pieces; the end of file is the
 * end. The header is checked when it comes. */
static void pipe_waits_and_assembles_lines(void **state)
{
	(void)state;
	int p[2], saved = dup(STDIN_FILENO);
	assert_int_equal(pipe(p), 0);
	dup2(p[0], STDIN_FILENO);
	close(p[0]);
	char err[256];
	struct replay *rd = replay_open("-", err, sizeof(err));
	assert_non_null(rd);
	replay_set_report(rd, NULL);
	assert_int_equal(replay_fd(rd), STDIN_FILENO);
	assert_int_equal(replay_next(rd, &ev), REPLAY_WAIT); /* nothing yet, not even the header */
	write_fd(p[1], HEADER "{\"type\":\"chunk\",");
	assert_int_equal(replay_next(rd, &ev), REPLAY_WAIT); /* half a line */
	write_fd(p[1], "\"t\":5,\"duration\":1}\n" CHUNK(6, 2) "\n");
	assert_int_equal(replay_next(rd, &ev), REPLAY_EVENT);
	assert_true(ev.t == 5);
	assert_int_equal(replay_next(rd, &ev), REPLAY_EVENT);
	assert_true(ev.t == 6);
	assert_int_equal(replay_next(rd, &ev), REPLAY_WAIT);
	write_fd(p[1], CHUNK(7, 3)); /* no final newline: the end of file ends it */
	close(p[1]);
	assert_int_equal(replay_next(rd, &ev), REPLAY_EVENT);
	assert_true(ev.t == 7);
	assert_int_equal(replay_next(rd, &ev), REPLAY_END);
	replay_close(rd);
	assert_false(fcntl(STDIN_FILENO, F_GETFL) & O_NONBLOCK); /* given back as it was */

	/* a bad header from a pipe: the same error as from a file, later */
	assert_int_equal(pipe(p), 0);
	dup2(p[0], STDIN_FILENO);
	close(p[0]);
	rd = replay_open("-", err, sizeof(err));
	assert_non_null(rd);
	write_fd(p[1], "{\"type\":\"recording\",\"format\":\"roastop-recording\",\"version\":2}\n");
	assert_int_equal(replay_next(rd, &ev), REPLAY_ERROR);
	assert_non_null(strstr(replay_error(rd), "<stdin>: recording version 2 is newer"));
	assert_int_equal(replay_next(rd, &ev), REPLAY_ERROR); /* and stays so */
	replay_close(rd);
	close(p[1]);
	dup2(saved, STDIN_FILENO);
	close(saved);
}

/* A FIFO: open does not wait for a writer, and no writer yet is no end of
 * file; the writer's close is. A directory is refused at open. */
static void fifo_opens_at_once_and_waits_for_a_writer(void **state)
{
	(void)state;
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	char err[256];
	struct replay *rd = replay_open(path, err, sizeof(err));
	assert_non_null(rd);
	replay_set_report(rd, NULL);
	assert_int_equal(replay_next(rd, &ev), REPLAY_WAIT);
	assert_int_equal(replay_next(rd, &ev), REPLAY_WAIT);
	struct pollfd pfd = { .fd = replay_fd(rd), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0); /* nothing to wake the caller for */
	int w = open(path, O_WRONLY | O_NONBLOCK);
	assert_true(w >= 0);
	write_fd(w, HEADER CHUNK(5, 1) "\n");
	close(w);
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_int_equal(replay_next(rd, &ev), REPLAY_EVENT);
	assert_int_equal(replay_next(rd, &ev), REPLAY_END);
	replay_close(rd);
	unlink(path);
	assert_null(replay_open("/tmp", err, sizeof(err)));
	assert_non_null(strstr(err, "Is a directory"));
}

/* An endless line (/dev/zero) or a long run of blank lines: replay_next
 * yields (REPLAY_WAIT) after a bounded read instead of holding the caller. */
static void endless_input_yields(void **state)
{
	(void)state;
	char err[256];
	struct replay *rd = replay_open("/dev/zero", err, sizeof(err));
	assert_non_null(rd);
	replay_set_report(rd, NULL);
	for (int i = 0; i < 3; i++)
		assert_int_equal(replay_next(rd, &ev), REPLAY_WAIT);
	assert_true(replay_rejects(rd)->by_reason[DEC_TOO_LARGE] == 1);
	replay_close(rd);
	size_t n = 40u << 20;
	char *blank = malloc(n);
	memset(blank, '\n', n);
	memcpy(blank, HEADER, strlen(HEADER));
	write_bytes(blank, n);
	free(blank);
	FILE *f = fopen(path, "a");
	fputs(CHUNK(5, 1) "\n", f);
	fclose(f);
	rd = open_quiet();
	int rc, waits = 0;
	while ((rc = replay_next(rd, &ev)) == REPLAY_WAIT)
		waits++;
	assert_int_equal(rc, REPLAY_EVENT);
	assert_true(waits >= 2);
	assert_int_equal(replay_next(rd, &ev), REPLAY_END);
	replay_close(rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(bad_lines_counted_by_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(rejections_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(overlong_line_skipped_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_header_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(header_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(unreadable_inputs, setup, teardown),
		cmocka_unit_test_setup_teardown(pipe_waits_and_assembles_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_opens_at_once_and_waits_for_a_writer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(endless_input_yields, setup, teardown),
	};
	return cmocka_run_group_tests_name("replay", tests, NULL, NULL);
}
