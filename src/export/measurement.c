/* The measurement directory. Each file is built in memory first, then
 * written to a fresh temporary beside its final name and renamed over it:
 * a reader (or a crash) sees the old complete file or the new complete one. */
#include "roastop/measurement.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "roastop/fsutil.h"
#include "roastop/report_text.h"
#include "roastop/strbuf.h"

/* mkdir -p, 0755; the last component must end up a directory. */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof(path)) {
		errno = n ? ENAMETOOLONG : ENOENT;
		return -1;
	}
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -1;
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

/* One line, file name and reason first so a long directory cannot push
 * them out of a bounded buffer: "cannot write metrics.json: Not a
 * directory (in /data/run1)". */
static void fail(char *err, size_t errsz, const char *verb, const char *name, int errnum,
		 const char *dir)
{
	snprintf(err, errsz, "cannot %s %s: %s (in %s)", verb, name, strerror(errnum), dir);
}

/* snprintf that refuses to truncate: a shortened path would name another file. */
static int path_join(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* O_EXCL|O_NOFOLLOW: never an existing file, never through a planted link. */
static int open_temp(const char *dir, const char *name, char *tmp, size_t size)
{
	char base[NAME_MAX + 1];
	for (int attempt = 0; attempt < 16; attempt++) {
		snprintf(base, sizeof(base), ".%s.%ld.%d.tmp", name, (long)getpid(), attempt);
		if (path_join(tmp, size, dir, base) != 0)
			return -1;
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* Written, fsync'd, closed, renamed over the final name (rename replaces a
 * symlink there rather than following it). */
static int file_replace(const char *dir, const char *name, const char *data, size_t len,
			char *err, size_t errsz)
{
	char tmp[PATH_MAX], final[PATH_MAX];
	if (path_join(final, sizeof(final), dir, name) != 0) {
		fail(err, errsz, "write", name, errno, dir);
		return -1;
	}
	int fd = open_temp(dir, name, tmp, sizeof(tmp));
	if (fd < 0) {
		fail(err, errsz, "create", name, errno, dir);
		return -1;
	}
	int rc = fsutil_write_all(fd, data, len);
	if (rc == 0)
		rc = fsync(fd);
	int saved = errno;
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		saved = errno;
	}
	if (rc == 0 && rename(tmp, final) != 0) {
		rc = -1;
		saved = errno;
	}
	if (rc != 0) {
		unlink(tmp);
		fail(err, errsz, "write", name, saved, dir);
	}
	return rc;
}

/* The renames are durable once the directory itself is synced. */
static int dir_sync(const char *dir, char *err, size_t errsz)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0) {
		fail(err, errsz, "sync the directory of", "metrics.json", errno, dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int write_buf(const char *dir, const char *name, const struct strbuf *sb, char *err,
		     size_t errsz)
{
	if (sb->failed || !sb->data) {
		fail(err, errsz, "write", name, ENOMEM, dir);
		return -1;
	}
	return file_replace(dir, name, sb->data, sb->len, err, errsz);
}

static int write_metrics(const char *dir, const struct metrics *m, const struct run *r,
			 const cJSON *extra, char *err, size_t errsz)
{
	struct strbuf sb;
	strbuf_init(&sb);
	metrics_write_json(m, r, extra, &sb);
	int rc = write_buf(dir, "metrics.json", &sb, err, errsz);
	strbuf_free(&sb);
	return rc;
}

/* Python's datetime.now().isoformat(): local time, microseconds, no zone. */
static void iso_now(char *buf, size_t size)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	localtime_r(&ts.tv_sec, &tm);
	char base[32];
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%06ld", base, ts.tv_nsec / 1000);
}

static int write_metadata(const char *dir, const struct metrics *m, char *err, size_t errsz)
{
	char stamp[64];
	iso_now(stamp, sizeof(stamp));
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "{\n  \"timestamp\": ");
	strbuf_json_string(&sb, stamp);
	strbuf_puts(&sb, ",\n  \"elapsed_time_seconds\": ");
	if (m->elapsed_time_seconds.valid)
		strbuf_json_number(&sb, m->elapsed_time_seconds.value);
	else
		strbuf_puts(&sb, "null");
	strbuf_puts(&sb, ",\n  \"format\": \"roastcoffea_measurement_v1\"\n}\n");
	int rc = write_buf(dir, "metadata.json", &sb, err, errsz);
	strbuf_free(&sb);
	return rc;
}

/* "t0,t1" as roastcoffea's load_measurement parses it (two Python floats);
 * "nan,nan" when the interval is unknown rather than an invented 0. */
static int write_times(const char *dir, const struct metrics *m, char *err, size_t errsz)
{
	char line[96];
	int n;
	if (m->elapsed_time_seconds.valid)
		n = snprintf(line, sizeof(line), "%.6f,%.6f\n", m->t_start, m->t_end);
	else
		n = snprintf(line, sizeof(line), "nan,nan\n");
	return file_replace(dir, "start_end_time.txt", line, (size_t)n, err, errsz);
}

static int write_summary(const char *dir, const struct metrics *m, const struct run *r,
			 char *err, size_t errsz)
{
	struct strbuf sb;
	strbuf_init(&sb);
	text_summary(m, r, &sb);
	int rc = write_buf(dir, "summary.txt", &sb, err, errsz);
	strbuf_free(&sb);
	return rc;
}

int measurement_write(const char *dir, const struct metrics *m, const struct run *r,
		      const cJSON *extra, char *err, size_t errsz)
{
	if (make_dirs(dir) != 0) {
		fail(err, errsz, "create the directory for", "metrics.json", errno, dir);
		return -1;
	}
	int rc = write_metrics(dir, m, r, extra, err, errsz);
	if (rc == 0)
		rc = write_metadata(dir, m, err, errsz);
	if (rc == 0)
		rc = write_times(dir, m, err, errsz);
	if (rc == 0)
		rc = write_summary(dir, m, r, err, errsz);
	if (rc == 0)
		rc = dir_sync(dir, err, errsz);
	return rc;
}
