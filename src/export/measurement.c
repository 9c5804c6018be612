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

#include "roastop/report_text.h"
#include "roastop/fsutil.h"
#include "roastop/strbuf.h"

/* mkdir -p, 0755. */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof(path)) {
		errno = ENAMETOOLONG;
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

/* A fresh temporary (O_EXCL: never an existing file or a planted link),
 * written, fsync'd, then renamed over the final name. */
static int file_replace(const char *dir, const char *name, const char *data, size_t len,
			char *err, size_t errsz)
{
	char tmp[PATH_MAX], final[PATH_MAX];
	snprintf(final, sizeof(final), "%s/%s", dir, name);
	int fd = -1;
	for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
		snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.%d.tmp", dir, name, (long)getpid(), attempt);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		snprintf(err, errsz, "cannot create %s: %s", final, strerror(errno));
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
		snprintf(err, errsz, "cannot write %s: %s", final, strerror(saved));
	}
	return rc;
}

static int write_json(const char *dir, const char *name, cJSON *obj, char *err, size_t errsz)
{
	char *text = obj ? cJSON_Print(obj) : NULL;
	if (!text) {
		snprintf(err, errsz, "cannot write %s/%s: out of memory", dir, name);
		return -1;
	}
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, text);
	strbuf_puts(&sb, "\n");
	cJSON_free(text);
	int rc = sb.failed ? -1 : file_replace(dir, name, sb.data, sb.len, err, errsz);
	strbuf_free(&sb);
	return rc;
}

/* Python's datetime.now().isoformat(): local time, microseconds. */
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
	cJSON *meta = cJSON_CreateObject();
	cJSON_AddStringToObject(meta, "timestamp", stamp);
	if (m->elapsed_time_seconds.valid)
		cJSON_AddNumberToObject(meta, "elapsed_time_seconds", m->elapsed_time_seconds.value);
	else
		cJSON_AddNullToObject(meta, "elapsed_time_seconds");
	cJSON_AddStringToObject(meta, "format", "roastcoffea_measurement_v1");
	int rc = write_json(dir, "metadata.json", meta, err, errsz);
	cJSON_Delete(meta);
	return rc;
}

static int write_times(const char *dir, const struct metrics *m, char *err, size_t errsz)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "%.6f,%.6f\n", m->t_start, m->t_end);
	return file_replace(dir, "start_end_time.txt", line, (size_t)n, err, errsz);
}

static int write_summary(const char *dir, const struct metrics *m, const struct run *r,
			 char *err, size_t errsz)
{
	struct strbuf sb;
	strbuf_init(&sb);
	text_summary(m, r, &sb);
	int rc = sb.failed ? -1 : file_replace(dir, "summary.txt", sb.data, sb.len, err, errsz);
	if (sb.failed)
		snprintf(err, errsz, "cannot write %s/summary.txt: out of memory", dir);
	strbuf_free(&sb);
	return rc;
}

int measurement_write(const char *dir, const struct metrics *m, const struct run *r,
		      const cJSON *extra, char *err, size_t errsz)
{
	if (make_dirs(dir) != 0) {
		snprintf(err, errsz, "cannot create directory %s for metrics.json: %s", dir,
			 strerror(errno));
		return -1;
	}
	struct strbuf sb;
	strbuf_init(&sb);
	int rc = metrics_write_json(m, r, extra, &sb);
	if (rc == 0)
		rc = file_replace(dir, "metrics.json", sb.data, sb.len, err, errsz);
	else
		snprintf(err, errsz, "cannot write %s/metrics.json: out of memory", dir);
	strbuf_free(&sb);
	if (rc == 0)
		rc = write_metadata(dir, m, err, errsz);
	if (rc == 0)
		rc = write_times(dir, m, err, errsz);
	if (rc == 0)
		rc = write_summary(dir, m, r, err, errsz);
	return rc;
}
