/* The measurement directory; see measurement.h. Each file is built in
 * memory first: a reader (or a crash) sees the old file or the new one. */
#include "roastop/measurement.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "roastop/fsutil.h"
#include "roastop/jsonw.h"
#include "roastop/metrics_json.h"
#include "roastop/metrics_raw.h"
#include "roastop/report_html.h"
#include "roastop/report_text.h"
#include "roastop/strbuf.h"

/* mkdir -p, 0755. Whether the last component is a usable directory is
 * dir_open's to say. */
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
	return 0;
}

/* dir without its trailing slashes, which would make open() follow a link. */
static int dir_trim(const char *dir, char *path, size_t size)
{
	size_t n = strlen(dir);
	if (n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, n + 1);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	return 0;
}

static bool is_symlink(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

int measurement_check_dir(const char *dir, char *err, size_t errsz)
{
	char path[PATH_MAX];
	if (dir_trim(dir, path, sizeof(path)) != 0 || !is_symlink(path))
		return 0; /* anything else wrong shows at the first write */
	snprintf(err, errsz, "refusing the output directory %s: it is a symbolic link "
		 "(give the directory itself)", dir);
	errno = ELOOP;
	return -1;
}

/* The directory itself, never through a symbolic link: a link planted at
 * --output would have roastop replace the files of whatever it points to.
 * Every file is then created and renamed relative to this descriptor, so
 * swapping the directory for a link half-way changes nothing. */
static int dir_open(const char *dir)
{
	char path[PATH_MAX];
	if (dir_trim(dir, path, sizeof(path)) != 0)
		return -1;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && is_symlink(path))
		errno = ELOOP; /* O_DIRECTORY says ENOTDIR for a link to a directory */
	return fd;
}

/* Where a measurement goes, and where its one-line error goes. */
struct outdir {
	int fd;
	const char *dir; /* for messages only */
	char *err;
	size_t errsz;
};

/* One line, file name and reason first so a long directory cannot push
 * them out of a bounded buffer: "cannot write metrics.json: Not a
 * directory (in /data/run1)". errno is left at errnum for the caller. */
static void fail(const struct outdir *o, const char *verb, const char *name, int errnum)
{
	const char *why = errnum == ELOOP ? "the directory is a symbolic link (refused)"
					  : strerror(errnum);
	snprintf(o->err, o->errsz, "cannot %s %s: %s (in %s)", verb, name, why, o->dir);
	errno = errnum;
}

/* Written to a fresh temporary (fsutil_open_temp), fsync'd, closed,
 * renamed over the final name (rename replaces a symlink there rather than
 * following it); the temporary is removed when anything fails. */
static int file_replace(const struct outdir *o, const char *name, const char *data, size_t len)
{
	char tmp[NAME_MAX + 1];
	int fd = fsutil_open_temp(o->fd, name, tmp, sizeof(tmp));
	if (fd < 0) {
		fail(o, "create", name, errno);
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
	if (rc == 0 && renameat(o->fd, tmp, o->fd, name) != 0) {
		rc = -1;
		saved = errno;
	}
	if (rc != 0) {
		unlinkat(o->fd, tmp, 0);
		fail(o, "write", name, saved);
	}
	return rc;
}

/* The renames are durable once the directory itself is synced. */
static int dir_sync(const struct outdir *o)
{
	if (fsync(o->fd) == 0)
		return 0;
	fail(o, "sync the directory of", "metrics.json", errno);
	return -1;
}

/* Writes what sb holds as name, and frees sb. */
static int write_buf(const struct outdir *o, const char *name, struct strbuf *sb)
{
	int rc = -1;
	if (sb->failed || !sb->data)
		fail(o, "write", name, ENOMEM);
	else
		rc = file_replace(o, name, sb->data, sb->len);
	strbuf_free(sb);
	return rc;
}

static void metadata_json(struct strbuf *sb, const struct metrics *m)
{
	char stamp[64];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	metrics_raw_iso(stamp, sizeof(stamp), (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
	struct jsonw w;
	jsonw_init(&w, sb);
	jsonw_object(&w, NULL);
	jsonw_str(&w, "timestamp", stamp);
	jsonw_opt(&w, "elapsed_time_seconds", m->elapsed_time_seconds);
	jsonw_str(&w, "format", "roastcoffea_measurement_v1");
	jsonw_end(&w, '}');
}

/* "t0,t1" as roastcoffea's load_measurement parses it (two Python floats);
 * "nan,nan" when the interval is unknown rather than an invented 0. */
static int write_times(const struct outdir *o, const struct metrics *m)
{
	char line[96];
	int n;
	if (m->elapsed_time_seconds.valid)
		n = snprintf(line, sizeof(line), "%.6f,%.6f\n", m->t_start, m->t_end);
	else
		n = snprintf(line, sizeof(line), "nan,nan\n");
	return file_replace(o, "start_end_time.txt", line, (size_t)n);
}

/* Each file in turn, built in sb (which write_buf frees), then the
 * directory synced; the first failure stops. */
static int write_files(const struct outdir *o, const struct metrics *m, const struct run *r,
		       const struct findings *fs, const struct metrics_extra_input *extra)
{
	struct strbuf sb;
	strbuf_init(&sb);
	metrics_write_json(m, r, fs, extra, &sb);
	int rc = write_buf(o, "metrics.json", &sb);
	if (rc == 0) {
		metadata_json(&sb, m);
		rc = write_buf(o, "metadata.json", &sb);
	}
	if (rc == 0)
		rc = write_times(o, m);
	if (rc == 0) {
		text_run_summary(m, r, fs, extra, &sb);
		rc = write_buf(o, "summary.txt", &sb);
	}
	if (rc == 0) {
		report_html_write(m, r, fs, extra ? extra->previous : NULL, &sb);
		rc = write_buf(o, "report.html", &sb);
	}
	return rc == 0 ? dir_sync(o) : rc;
}

int measurement_write(const char *dir, const struct metrics *m, const struct run *r,
		      const struct findings *fs, const struct metrics_extra_input *extra, char *err,
		      size_t errsz)
{
	struct outdir o = { .fd = -1, .dir = dir, .err = err, .errsz = errsz };
	if (make_dirs(dir) != 0 || (o.fd = dir_open(dir)) < 0) {
		fail(&o, "create the directory for", "metrics.json", errno);
		return -1;
	}
	int rc = write_files(&o, m, r, fs, extra);
	int saved = errno;
	close(o.fd);
	errno = saved;
	return rc;
}

/* A name keeps [A-Za-z0-9._-] of its bytes ('_' for the rest), at most 48,
 * never a leading dot. */
static void name_clean(char *out, size_t size, const char *name)
{
	size_t n = 0;
	for (const char *p = name; *p && n + 1 < size && n < 48; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '-' || c == '_' || (c == '.' && n > 0);
		out[n++] = ok ? c : '_';
	}
	out[n] = '\0';
}

void measurement_dir_name(char *out, size_t size, double t_start, const char *name)
{
	time_t t = isfinite(t_start) ? (time_t)t_start : time(NULL);
	struct tm tm;
	char stamp[32] = "run";
	if (localtime_r(&t, &tm))
		strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &tm);
	char clean[64];
	name_clean(clean, sizeof(clean), name ? name : "");
	snprintf(out, size, "%s%s%s", stamp, clean[0] ? "_" : "", clean);
}

/* root/latest -> name, replaced atomically (a link beside it, renamed). */
int measurement_link_latest(const char *root, const char *name, char *err, size_t errsz)
{
	char tmp[PATH_MAX], final[PATH_MAX];
	int n1 = snprintf(tmp, sizeof(tmp), "%s/.latest.%ld", root, (long)getpid());
	int n2 = snprintf(final, sizeof(final), "%s/latest", root);
	if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof(tmp) || (size_t)n2 >= sizeof(final)) {
		errno = ENAMETOOLONG;
		snprintf(err, errsz, "%s/latest: %s", root, strerror(errno));
		return -1;
	}
	unlink(tmp);
	if (symlink(name, tmp) != 0 || rename(tmp, final) != 0) {
		int e = errno;
		unlink(tmp);
		snprintf(err, errsz, "%s: %s", final, strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}
