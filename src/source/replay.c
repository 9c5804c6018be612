/* Recording reader: a bounded line splitter over read(2), the JSON codec,
 * and counted rejections. A line longer than EVENT_JSON_MAX is skipped up to
 * its newline without ever being held whole. */
#include "roastop/replay.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE (EVENT_JSON_MAX + 65536)

struct replay {
	int fd;
	bool own_fd;
	char *buf;
	size_t start, end; /* unread bytes are buf[start, end) */
	bool eof;
	bool skipping; /* inside an over-long line */
	uint64_t line_no;
	bool header_seen, first_line_done;
	char name[256];
	struct reject_counts rejects;
	uint64_t reported;
};

struct replay *replay_open(const char *path, char *err, size_t errsz)
{
	struct replay *rd = calloc(1, sizeof(*rd));
	if (rd)
		rd->buf = malloc(BUF_SIZE);
	if (!rd || !rd->buf) {
		snprintf(err, errsz, "replay: out of memory");
		goto fail;
	}
	bool std = strcmp(path, "-") == 0;
	rd->fd = std ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (rd->fd < 0) {
		snprintf(err, errsz, "cannot open recording %s: %s", path, strerror(errno));
		goto fail;
	}
	rd->own_fd = !std;
	snprintf(rd->name, sizeof(rd->name), "%s", std ? "<stdin>" : path);
	return rd;
fail:
	if (rd)
		free(rd->buf);
	free(rd);
	return NULL;
}

static int fill(struct replay *rd)
{
	if (rd->start > 0) {
		memmove(rd->buf, rd->buf + rd->start, rd->end - rd->start);
		rd->end -= rd->start;
		rd->start = 0;
	}
	while (rd->end < BUF_SIZE) {
		ssize_t n = read(rd->fd, rd->buf + rd->end, BUF_SIZE - rd->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			rd->eof = true;
		rd->end += (size_t)n;
		return 0;
	}
	return 0;
}

/* The next line in [*line, *line + *len), without its newline. 0 at EOF. */
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
			return 1;
		}
		if (rd->eof)
			return 0;
		if (rd->end - rd->start > EVENT_JSON_MAX) {
			if (!rd->skipping)
				reject_count(&rd->rejects, DEC_TOO_LARGE);
			rd->skipping = true;
			rd->start = rd->end; /* drop what we have of it */
		}
		if (fill(rd) != 0)
			return -1;
	}
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static void reject(struct replay *rd, enum decode_error e)
{
	reject_count(&rd->rejects, e);
	if (rd->reported++ < REPLAY_REPORT_MAX)
		fprintf(stderr, "roastop: %s:%llu: skipped: %s\n", rd->name,
			(unsigned long long)rd->line_no, decode_error_name(e));
}

/* The header line: {"type":"recording","format":..., "version": N}. */
static bool header_check(struct replay *rd, const char *line, size_t len)
{
	cJSON *obj = cJSON_ParseWithLength(line, len);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "type");
	bool is_header = cJSON_IsString(type) && strcmp(type->valuestring, "recording") == 0;
	if (is_header) {
		const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(obj, "format");
		const cJSON *ver = cJSON_GetObjectItemCaseSensitive(obj, "version");
		if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, REPLAY_FORMAT) != 0 ||
		    !cJSON_IsNumber(ver) || ver->valuedouble > REPLAY_VERSION)
			fprintf(stderr, "roastop: %s: recording format or version not known to this "
					"roastop (%s); reading it anyway\n",
				rd->name, ROASTOP_VERSION);
		rd->header_seen = true;
	} else {
		fprintf(stderr, "roastop: %s: no recording header; reading it anyway\n", rd->name);
	}
	cJSON_Delete(obj);
	return is_header;
}

int replay_next(struct replay *rd, struct event *ev)
{
	const char *line;
	size_t len;
	int rc;
	while ((rc = next_line(rd, &line, &len)) == 1) {
		if (blank(line, len))
			continue;
		if (!rd->first_line_done) {
			rd->first_line_done = true;
			if (header_check(rd, line, len))
				continue;
		}
		enum decode_error e = event_decode_json(line, len, ev);
		if (e == DEC_OK)
			return 1;
		reject(rd, e);
	}
	return rc;
}

const struct reject_counts *replay_rejects(const struct replay *rd)
{
	return &rd->rejects;
}

uint64_t replay_lines(const struct replay *rd)
{
	return rd->line_no;
}

bool replay_had_header(const struct replay *rd)
{
	return rd->header_seen;
}

void replay_close(struct replay *rd)
{
	if (!rd)
		return;
	if (rd->own_fd)
		close(rd->fd);
	free(rd->buf);
	free(rd);
}
