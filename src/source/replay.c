/* Recording reader: a bounded line splitter over read(2), the JSON codec,
 * and counted rejections. A line longer than EVENT_JSON_MAX is skipped up to
 * its newline without being held whole. A pipe, FIFO or terminal is read
 * only when poll(2) says it is readable (a FIFO without a writer reads as
 * end-of-file, so reading it unasked would end the replay before the writer
 * came). */
#include "roastop/replay.h"
#include "roastop/clock.h"
#include "roastop/source.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One maximal line plus its newline always fits after compaction. */
#define BUF_SIZE (EVENT_JSON_MAX + 65536)
/* Reads per replay_next before it yields (REPLAY_WAIT): an endless line
 * (/dev/zero) cannot hold the caller's loop. */
#define FILLS_PER_CALL 16

struct replay {
	int fd;
	bool own_fd;
	bool polled; /* not a regular file: read only when poll says so */
	int restore_flags; /* standard input's flags before O_NONBLOCK, or -1 */
	int fills_left; /* in this replay_next */
	bool gzip_checked;
	bool header_done; /* the header (or its absence) has been looked at */
	char error[640];
	char *buf;
	size_t start, end; /* unread bytes are buf[start, end) */
	bool eof;
	bool skipping; /* inside an over-long line */
	uint64_t line_no;
	/* the first line when it was not a header: replayed before the rest */
	const char *pending;
	size_t pending_len;
	bool warn_header; /* told at the first replay_next, after replay_set_report */
	FILE *report;
	char name[256];
	struct reject_counts rejects;
	struct replay_reject first[REPLAY_REPORT_MAX];
	size_t n_first, n_told; /* kept; printed to report */
};

/* Is there something to read (data, end of file or an error)? */
static bool readable(const struct replay *rd)
{
	struct pollfd p = { .fd = rd->fd, .events = POLLIN };
	return !rd->polled || (poll(&p, 1, 0) == 1 && p.revents);
}

/* More input after the unread bytes: REPLAY_EVENT when it read something
 * or the end, REPLAY_WAIT, or REPLAY_ERROR with errno. */
static int fill(struct replay *rd)
{
	if (rd->start > 0) {
		memmove(rd->buf, rd->buf + rd->start, rd->end - rd->start);
		rd->end -= rd->start;
		rd->start = 0;
	}
	if (rd->fills_left <= 0 || !readable(rd))
		return REPLAY_WAIT;
	rd->fills_left--;
	for (;;) {
		ssize_t n = read(rd->fd, rd->buf + rd->end, BUF_SIZE - rd->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return REPLAY_WAIT;
		if (n < 0)
			return REPLAY_ERROR;
		if (n == 0)
			rd->eof = true;
		rd->end += (size_t)n;
		return REPLAY_EVENT;
	}
}

static void reject(struct replay *rd, uint64_t line, enum decode_error e)
{
	reject_count(&rd->rejects, e);
	if (rd->n_first < REPLAY_REPORT_MAX)
		rd->first[rd->n_first++] = (struct replay_reject){ line, e };
}

/* Prints what happened since the last call (replay_open prints nothing:
 * replay_set_report decides where even the header warning goes). */
static void tell(struct replay *rd)
{
	if (rd->warn_header && rd->report)
		fprintf(rd->report, "roastop: %s: no recording header; reading it anyway\n",
			rd->name);
	rd->warn_header = false;
	for (; rd->n_told < rd->n_first; rd->n_told++)
		if (rd->report)
			fprintf(rd->report, "roastop: %s:%llu: skipped: %s\n", rd->name,
				(unsigned long long)rd->first[rd->n_told].line,
				decode_error_name(rd->first[rd->n_told].reason));
}

/* The next line without its newline, valid until the next call:
 * REPLAY_EVENT, REPLAY_END, REPLAY_WAIT (no whole line yet) or REPLAY_ERROR. */
static int next_line(struct replay *rd, const char **line, size_t *len)
{
	for (;;) {
		char *s = rd->buf + rd->start;
		char *nl = memchr(s, '\n', rd->end - rd->start);
		if (nl || (rd->eof && rd->end > rd->start)) {
			size_t l = nl ? (size_t)(nl - s) : rd->end - rd->start;
			rd->start += l + (nl ? 1 : 0);
			rd->line_no++;
			if (rd->skipping) {
				rd->skipping = false;
				continue; /* the tail of an over-long line */
			}
			*line = s;
			*len = l;
			return REPLAY_EVENT;
		}
		if (rd->eof) {
			if (rd->skipping) { /* an over-long last line without a newline */
				rd->skipping = false;
				rd->line_no++;
			}
			return REPLAY_END;
		}
		if (rd->end - rd->start > EVENT_JSON_MAX) {
			if (!rd->skipping)
				reject(rd, rd->line_no + 1, DEC_TOO_LARGE);
			rd->skipping = true;
			rd->start = rd->end; /* drop what we have of it */
		}
		int rc = fill(rd);
		if (rc != REPLAY_EVENT)
			return rc;
	}
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

enum header { HDR_NONE, HDR_OK, HDR_BAD };

/* {"type":"recording","format":"roastop-recording","version":N,...}: a
 * line of another type is no header; a header of another format or a
 * newer major version cannot be read. */
static enum header header_parse(const struct replay *rd, const char *line, size_t len, char *err,
				size_t errsz)
{
	cJSON *obj = cJSON_ParseWithLength(line, len);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "type");
	if (!cJSON_IsObject(obj) || !cJSON_IsString(type) ||
	    strcmp(type->valuestring, "recording") != 0) {
		cJSON_Delete(obj);
		return HDR_NONE;
	}
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(obj, "format");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(obj, "version");
	enum header h = HDR_BAD;
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, EVENT_JSON_FORMAT) != 0)
		snprintf(err, errsz, "%s: not a %s (its header names another format)", rd->name,
			 EVENT_JSON_FORMAT);
	else if (!cJSON_IsNumber(ver) || !isfinite(ver->valuedouble) || ver->valuedouble < 1)
		snprintf(err, errsz, "%s: recording header without a valid version", rd->name);
	else if (floor(ver->valuedouble) > EVENT_JSON_VERSION)
		snprintf(err, errsz,
			 "%s: recording version %.0f is newer than this roastop (%s) reads (%d)",
			 rd->name, floor(ver->valuedouble), ROASTOP_VERSION, EVENT_JSON_VERSION);
	else
		h = HDR_OK;
	cJSON_Delete(obj);
	return h;
}

/* Looks at the start of the input: gzip, the header, or a first event. */
static int header_read(struct replay *rd)
{
	int rc = REPLAY_EVENT;
	while (!rd->gzip_checked && rd->end < 2 && !rd->eof && (rc = fill(rd)) == REPLAY_EVENT)
		;
	if (rc != REPLAY_EVENT)
		goto not_yet;
	const unsigned char *b = (const unsigned char *)rd->buf;
	if (!rd->gzip_checked && rd->end >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		snprintf(rd->error, sizeof(rd->error), "%s is gzip-compressed: replay it with "
			 "`zcat %s | roastop --replay -`", rd->name, rd->name);
		return REPLAY_ERROR;
	}
	rd->gzip_checked = true;
	const char *line;
	size_t len;
	while ((rc = next_line(rd, &line, &len)) == REPLAY_EVENT && blank(line, len))
		;
	if (rc == REPLAY_WAIT || rc == REPLAY_ERROR)
		goto not_yet;
	enum header h = rc == REPLAY_EVENT ? header_parse(rd, line, len, rd->error, sizeof(rd->error))
					   : HDR_NONE;
	if (h == HDR_BAD)
		return REPLAY_ERROR;
	rd->header_done = true;
	rd->warn_header = h == HDR_NONE;
	if (h == HDR_NONE && rc == REPLAY_EVENT) {
		rd->pending = line; /* stays valid: nothing is read before it is used */
		rd->pending_len = len;
	}
	return REPLAY_EVENT;
not_yet:
	if (rc == REPLAY_ERROR)
		snprintf(rd->error, sizeof(rd->error), "cannot read recording %s: %s", rd->name,
			 strerror(errno));
	return rc;
}

/* Standard input as a pipe or socket is made non-blocking until
 * replay_close; a terminal's flags are the shell's too: left alone. */
static void stdin_nonblock(struct replay *rd)
{
	int fl = fcntl(rd->fd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK) && fcntl(rd->fd, F_SETFL, fl | O_NONBLOCK) == 0)
		rd->restore_flags = fl;
}

/* Opens without blocking (a FIFO without a writer would hang open(2) with
 * the signals masked), then looks at what was opened. */
static int input_open(struct replay *rd, const char *path, char *err, size_t errsz)
{
	bool std = strcmp(path, "-") == 0;
	rd->fd = std ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (rd->fd < 0) {
		snprintf(err, errsz, "cannot open recording %s: %s", path, strerror(errno));
		return -1;
	}
	rd->own_fd = !std;
	struct stat st;
	int bad = fstat(rd->fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
	if (bad) {
		snprintf(err, errsz, "cannot read recording %s: %s", rd->name, strerror(bad));
		return -1;
	}
	rd->polled = !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
	if (std && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		stdin_nonblock(rd);
	return 0;
}

struct replay *replay_open(const char *path, char *err, size_t errsz)
{
	struct replay *rd = calloc(1, sizeof(*rd));
	if (rd)
		rd->buf = malloc(BUF_SIZE);
	if (!rd || !rd->buf) {
		snprintf(err, errsz, "replay: out of memory");
		goto fail;
	}
	rd->fd = -1;
	rd->restore_flags = -1;
	rd->report = stderr;
	snprintf(rd->name, sizeof(rd->name), "%s", strcmp(path, "-") == 0 ? "<stdin>" : path);
	if (input_open(rd, path, err, errsz) != 0)
		goto fail;
	/* a file's header is checked now; a pipe's when it comes (replay_next) */
	rd->fills_left = FILLS_PER_CALL;
	if (!rd->polled && header_read(rd) == REPLAY_ERROR) {
		snprintf(err, errsz, "%s", rd->error);
		goto fail;
	}
	return rd;
fail:
	replay_close(rd);
	return NULL;
}

/* 1 when the line decoded, else counted (0). */
static int take_line(struct replay *rd, const char *line, size_t len, struct event *ev)
{
	enum decode_error e = event_decode_json(line, len, ev);
	if (e == DEC_OK)
		return 1;
	reject(rd, rd->line_no, e);
	return 0;
}

static int next_event(struct replay *rd, struct event *ev)
{
	if (rd->pending) {
		const char *line = rd->pending;
		rd->pending = NULL;
		if (take_line(rd, line, rd->pending_len, ev))
			return 1;
	}
	const char *line;
	size_t len;
	int rc;
	while ((rc = next_line(rd, &line, &len)) == 1)
		if (!blank(line, len) && take_line(rd, line, len, ev))
			return 1;
	return rc;
}

int replay_next(struct replay *rd, struct event *ev)
{
	if (rd->error[0])
		return REPLAY_ERROR; /* a bad header or a read error ends the replay */
	tell(rd);
	rd->fills_left = FILLS_PER_CALL;
	int rc = rd->header_done ? REPLAY_EVENT : header_read(rd);
	if (rc == REPLAY_EVENT)
		rc = next_event(rd, ev);
	int saved = errno;
	if (rc == REPLAY_ERROR && !rd->error[0])
		snprintf(rd->error, sizeof(rd->error), "cannot read recording %s: %s", rd->name,
			 strerror(saved));
	tell(rd);
	errno = saved;
	return rc;
}

int replay_fd(const struct replay *rd)
{
	return rd->fd;
}

const char *replay_error(const struct replay *rd)
{
	return rd->error;
}

void replay_set_report(struct replay *rd, FILE *f)
{
	rd->report = f;
}

const struct reject_counts *replay_rejects(const struct replay *rd)
{
	return &rd->rejects;
}

size_t replay_first_rejects(const struct replay *rd, const struct replay_reject **out)
{
	*out = rd->first;
	return rd->n_first;
}

uint64_t replay_lines(const struct replay *rd)
{
	return rd->line_no;
}

void replay_close(struct replay *rd)
{
	if (!rd)
		return;
	if (rd->restore_flags >= 0)
		fcntl(rd->fd, F_SETFL, rd->restore_flags);
	if (rd->own_fd && rd->fd >= 0)
		close(rd->fd);
	free(rd->buf);
	free(rd);
}

/* ---- the source (source.h): the recording replayed, paced ---- */

#define REPLAY_BATCH 8192 /* events per dispatch: the loop's signals, keys and screen get their turn */
/* A paced replay delivers every event due within this many wall seconds in
 * one wake-up (a wake-up costs more than the events; process CPU 2.5 % ->
 * 0.9 % at 1,000 workers). Events keep their recorded times. */
#define REPLAY_SLACK 0.02
/* A jump in recorded time between two events, either way, of more than
 * this many seconds times the speed (at least 1) is not waited for: the
 * pacing clock is re-based at the event (docs/recording.md). */
#define REPLAY_JUMP_MAX 60.0
#define REPLAY_JUMPS_TOLD 5 /* jumps noted in the log; the rest only counted */

struct replay_source {
	struct replay *rd;
	event_deliver_fn deliver;
	void (*note)(void *ctx, const char *text);
	bool (*stopping)(void *ctx);
	void *ctx;
	const char *path; /* as given: "-" is standard input */
	double speed; /* 0: as fast as possible */
	struct event ev; /* the next event, decoded */
	bool pending; /* ev waits for its time */
	bool waiting; /* for input: the recording's descriptor is polled */
	int end; /* REPLAY_EVENT while reading, then REPLAY_END or REPLAY_ERROR */
	/* pacing: recorded time rec_t0 plays at monotonic wall_t0 */
	bool paced;
	double rec_t0, wall_t0;
	double prev_t; /* recorded time of the previous event, paced */
	uint64_t jumps;
};

static bool replay_wanted(const struct app_config *c)
{
	return c->replay_path != NULL;
}

static void *replay_source_open(const struct source_env *env, char *err, size_t errsz)
{
	struct replay_source *rs = calloc(1, sizeof(*rs));
	if (!rs) {
		snprintf(err, errsz, "replay: out of memory");
		return NULL;
	}
	rs->rd = replay_open(env->cfg->replay_path, err, errsz);
	if (!rs->rd) {
		free(rs);
		return NULL;
	}
	rs->deliver = env->deliver;
	rs->note = env->note;
	rs->stopping = env->stopping;
	rs->ctx = env->ctx;
	rs->path = env->cfg->replay_path;
	rs->speed = env->cfg->speed;
	rs->end = REPLAY_EVENT;
	event_init(&rs->ev);
	return rs;
}

/* In the log, and on stderr, as the reader's rejections are. */
static void replay_note_jump(struct replay_source *rs, double jump)
{
	if (++rs->jumps > REPLAY_JUMPS_TOLD)
		return;
	char text[320];
	snprintf(text, sizeof(text), "replay: recorded time jumps %+.0f s between two events; "
		 "not waited for (over %.0f s)%s", jump, REPLAY_JUMP_MAX * fmax(rs->speed, 1.0),
		 rs->jumps == REPLAY_JUMPS_TOLD ? "; further jumps only counted" : "");
	rs->note(rs->ctx, text);
	fprintf(stderr, "roastop: %s\n", text);
}

/* The pacing clock starts at the first event, re-based at a jump. */
static void replay_anchor(struct replay_source *rs)
{
	double jump = rs->ev.t - rs->prev_t;
	bool jumped = rs->paced && fabs(jump) > REPLAY_JUMP_MAX * fmax(rs->speed, 1.0);
	if (jumped)
		replay_note_jump(rs, jump);
	if (!rs->paced || jumped) {
		rs->paced = true;
		rs->rec_t0 = rs->ev.t;
		rs->wall_t0 = clock_mono();
	}
	rs->prev_t = rs->ev.t;
}

/* Wall seconds until the pending event is due (0 within REPLAY_SLACK). */
static double replay_wait(const struct replay_source *rs)
{
	if (rs->speed <= 0)
		return 0;
	double wait = rs->wall_t0 + (rs->ev.t - rs->rec_t0) / rs->speed - clock_mono();
	return wait > REPLAY_SLACK ? wait : 0;
}

/* The next event into rs->ev: false when there is none now or any more. */
static bool replay_take(struct replay_source *rs)
{
	int rc = replay_next(rs->rd, &rs->ev);
	rs->waiting = rc == REPLAY_WAIT;
	if (rc == REPLAY_WAIT)
		return false;
	if (rc != REPLAY_EVENT) {
		rs->end = rc;
		if (rc == REPLAY_ERROR) /* a pipe's bad header, a read error */
			fprintf(stderr, "roastop: %s\n", replay_error(rs->rd));
		return false;
	}
	rs->pending = true;
	if (rs->speed > 0)
		replay_anchor(rs);
	return true;
}

static size_t replay_source_pollfds(const void *p, struct pollfd *out, size_t max)
{
	const struct replay_source *rs = p;
	if (!rs->waiting || rs->end != REPLAY_EVENT || max == 0)
		return 0;
	out[0] = (struct pollfd){ .fd = replay_fd(rs->rd), .events = POLLIN };
	return 1;
}

static void replay_source_dispatch(void *p, const struct pollfd *pfd, size_t n, double now)
{
	(void)now; /* the events carry their recorded times */
	struct replay_source *rs = p;
	if (n > 0 && pfd[0].revents) /* input, its end, or an error to read */
		rs->waiting = false;
	for (int i = 0; i < REPLAY_BATCH && !rs->waiting && !rs->stopping(rs->ctx); i++) {
		if (!rs->pending && !replay_take(rs))
			return;
		if (replay_wait(rs) > 0)
			return;
		rs->pending = false;
		rs->deliver(rs->ctx, &rs->ev);
	}
}

/* Waiting for input (the descriptor is polled) or ended: never. */
static double replay_source_timeout(const void *p)
{
	const struct replay_source *rs = p;
	if (rs->waiting || rs->end != REPLAY_EVENT)
		return -1;
	return rs->pending ? replay_wait(rs) : 0;
}

static const struct source_end *replay_source_ended(const void *p)
{
	static const struct source_end whole = { "end of recording",
						 "the recording ends before the run's end", false };
	static const struct source_end unreadable = { "recording unreadable",
						      "the recording ends before the run's end", true };
	const struct replay_source *rs = p;
	return rs->end == REPLAY_END ? &whole : rs->end == REPLAY_ERROR ? &unreadable : NULL;
}

/* Time jumps are counted only when paced (null at --speed 0). */
static void replay_source_stats(const void *p, struct source_stats *out)
{
	const struct replay_source *rs = p;
	out->state_key = "recording";
	snprintf(out->state, sizeof(out->state), "%s",
		 rs->end == REPLAY_END ? "ended" : rs->end == REPLAY_ERROR ? "unreadable" : "reading");
	source_figure(out, "speed", rs->speed);
	source_figure(out, "time_jumps", rs->speed > 0 ? (double)rs->jumps : NAN);
	source_count(out, NULL, "lines", replay_lines(rs->rd));
	const struct reject_counts *rc = replay_rejects(rs->rd);
	source_count(out, "rejected", "total", rc->total);
	for (int e = DEC_OK + 1; e < DEC__COUNT; e++)
		source_count(out, "rejected", decode_error_name(e), rc->by_reason[e]);
}

static const char *replay_source_target(const void *p)
{
	return ((const struct replay_source *)p)->path;
}

static void replay_source_close(void *p)
{
	struct replay_source *rs = p;
	replay_close(rs->rd);
	event_free(&rs->ev);
	free(rs);
}

static const struct source_recorded replay_recorded = {
	.ended = replay_source_ended,
};

const struct source_ops replay_source = {
	.name = "replay",
	.wanted = replay_wanted,
	.open = replay_source_open,
	.pollfds = replay_source_pollfds,
	.dispatch = replay_source_dispatch,
	.timeout = replay_source_timeout,
	.stats = replay_source_stats,
	.role = SOURCE_RECORDING,
	.target = replay_source_target,
	.close = replay_source_close,
	.recorded = &replay_recorded,
};
