/* The measurement directory: roastcoffea's layout, values read back, atomic
 * replacement, planted symlinks replaced, errors that name the file. */
#include "test_util.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/measurement.h"

static char dir[64];
static struct run R;

static void apply(struct event ev)
{
	assert_int_equal(run_apply(&R, &ev), 0);
}

/* run 1000 .. 1020 (live); one chunk of 2 s and 500 events */
static void build_run(void)
{
	struct event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_START;
	ev.t = 1000;
	ev.u.run_start.run_id = "r1";
	apply(ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_CHUNK;
	ev.t = 1010;
	ev.u.chunk = (struct ev_chunk){ .duration = optnum_of(2), .num_events = optnum_of(500),
					.dataset = "d" };
	apply(ev);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/roastop-meas-XXXXXX");
	if (!mkdtemp(dir) || run_init(&R) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	run_destroy(&R);
	char cmd[192];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static char *slurp(const char *base, const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", base, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static cJSON *read_json(const char *base, const char *name)
{
	char *text = slurp(base, name);
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	free(text);
	return j;
}

static int write_now(const char *where, double now, char *err, size_t errsz)
{
	struct metrics m;
	metrics_compute(&R, now, NULL, &m);
	return measurement_write(where, &m, &R, NULL, NULL, err, errsz);
}

/* Nothing but the four files: no temporaries left behind. */
static void only_final_files(const char *where)
{
	DIR *d = opendir(where);
	assert_non_null(d);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
			continue;
		assert_null(strstr(e->d_name, ".tmp"));
		n++;
	}
	closedir(d);
	assert_true(n >= 4);
}

static void writes_roastcoffea_layout(void **state)
{
	(void)state;
	build_run();
	struct metrics m;
	metrics_compute(&R, 1020, NULL, &m);
	static struct session ses;
	ses.runs_total = 42;
	struct metrics_extra_input extra = { .ses = &ses };
	char err[256] = "", sub[128];
	snprintf(sub, sizeof(sub), "%s/a/b", dir); /* parents created */
	assert_int_equal(measurement_write(sub, &m, &R, NULL, &extra, err, sizeof(err)), 0);

	cJSON *metrics = read_json(sub, "metrics.json");
	assert_non_null(metrics);
	assert_near(cJSON_GetObjectItem(metrics, "total_events")->valuedouble, 500, 0);
	assert_near(cJSON_GetObjectItem(metrics, "elapsed_time_seconds")->valuedouble, 20, 0);
	cJSON *ro = cJSON_GetObjectItem(metrics, "roastop");
	assert_near(cJSON_GetObjectItem(cJSON_GetObjectItem(ro, "session"), "runs")->valuedouble, 42,
		    0);

	cJSON *meta = read_json(sub, "metadata.json");
	assert_non_null(meta);
	assert_int_equal(cJSON_GetArraySize(meta), 3);
	assert_string_equal(cJSON_GetObjectItem(meta, "format")->valuestring,
			    "roastcoffea_measurement_v1");
	assert_near(cJSON_GetObjectItem(meta, "elapsed_time_seconds")->valuedouble, 20, 0);
	/* datetime.now().isoformat(): 2026-11-22T10:37:37.123456 */
	const char *ts = cJSON_GetObjectItem(meta, "timestamp")->valuestring;
	int y, mo, d, h, mi, s, us, used = 0;
	assert_int_equal(sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d.%6d%n", &y, &mo, &d, &h, &mi, &s, &us,
				&used),
			 7);
	assert_int_equal(used, 26);
	assert_int_equal(strlen(ts), 26);

	char *times = slurp(sub, "start_end_time.txt");
	assert_string_equal(times, "1000.000000,1020.000000\n");
	free(times);

	char *summary = slurp(sub, "summary.txt");
	assert_non_null(strstr(summary, "Throughput Metrics"));
	assert_non_null(strstr(summary, "Chunk Metrics"));
	free(summary);

	char *report = slurp(sub, "report.html");
	assert_true(strncmp(report, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(report, "</body></html>\n"));
	free(report);

	struct stat st;
	char path[256];
	snprintf(path, sizeof(path), "%s/metrics.json", sub);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	only_final_files(sub);
	cJSON_Delete(metrics);
	cJSON_Delete(meta);
}

/* A checkpoint then the final write: the second replaces the first whole. */
static void rewrite_replaces(void **state)
{
	(void)state;
	build_run();
	char err[256];
	assert_int_equal(write_now(dir, 1020, err, sizeof(err)), 0);
	struct event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_END;
	ev.t = 1050;
	apply(ev);
	assert_int_equal(write_now(dir, 1100, err, sizeof(err)), 0);
	cJSON *metrics = read_json(dir, "metrics.json");
	assert_near(cJSON_GetObjectItem(metrics, "elapsed_time_seconds")->valuedouble, 50, 0);
	cJSON_Delete(metrics);
	char *times = slurp(dir, "start_end_time.txt");
	assert_string_equal(times, "1000.000000,1050.000000\n");
	free(times);
	only_final_files(dir);
}

/* A symlink planted at a final name is replaced, never written through. */
static void planted_symlink_not_followed(void **state)
{
	(void)state;
	build_run();
	static const char *names[] = { "metrics.json", "start_end_time.txt" };
	char victim[128], link[128], err[256];
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	FILE *f = fopen(victim, "w");
	fputs("precious", f);
	fclose(f);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(names); i++) {
		snprintf(link, sizeof(link), "%s/%s", dir, names[i]);
		assert_int_equal(symlink(victim, link), 0);
	}
	assert_int_equal(write_now(dir, 1020, err, sizeof(err)), 0);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(names); i++) {
		struct stat st;
		snprintf(link, sizeof(link), "%s/%s", dir, names[i]);
		assert_int_equal(lstat(link, &st), 0);
		assert_true(S_ISREG(st.st_mode));
	}
	char *kept = slurp(dir, "victim");
	assert_string_equal(kept, "precious");
	free(kept);
	cJSON *metrics = read_json(dir, "metrics.json");
	assert_non_null(metrics);
	cJSON_Delete(metrics);
}

/* The directory itself is a symbolic link (to someone else's directory):
 * refused, with a trailing slash too, before a run and at every write; the
 * directory it points to is untouched. */
static void symlinked_directory_refused(void **state)
{
	(void)state;
	build_run();
	char victim[128], link[160], slashed[168], err[256] = "";
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	assert_int_equal(mkdir(victim, 0755), 0);
	snprintf(link, sizeof(link), "%s/metrics.json", victim);
	FILE *f = fopen(link, "w");
	fputs("precious", f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(victim, link), 0);
	snprintf(slashed, sizeof(slashed), "%s//", link);
	const char *paths[] = { link, slashed };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(paths); i++) {
		errno = 0;
		assert_int_equal(write_now(paths[i], 1020, err, sizeof(err)), -1);
		assert_int_equal(errno, ELOOP);
		assert_non_null(strstr(err, "symbolic link"));
		assert_int_equal(measurement_check_dir(paths[i], err, sizeof(err)), -1);
		assert_non_null(strstr(err, "symbolic link"));
	}
	char *kept = slurp(victim, "metrics.json");
	assert_string_equal(kept, "precious");
	free(kept);
	DIR *d = opendir(victim);
	struct dirent *e;
	while ((e = readdir(d)))
		assert_true(e->d_name[0] == '.' || !strcmp(e->d_name, "metrics.json"));
	closedir(d);
	assert_int_equal(measurement_check_dir(victim, err, sizeof(err)), 0);
	snprintf(link, sizeof(link), "%s/not-yet", dir);
	assert_int_equal(measurement_check_dir(link, err, sizeof(err)), 0);
}

/* Every temporary name the writer once derived from its pid (16 tries per
 * file) is taken: the names are random now, so the write goes through, and
 * leaves no temporary of its own. */
static void planted_temporaries_do_not_block(void **state)
{
	(void)state;
	build_run();
	static const char *names[] = { "metrics.json", "metadata.json", "start_end_time.txt",
				       "summary.txt", "report.html" };
	char path[256], err[256] = "";
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(names); i++) {
		for (int k = 0; k < 16; k++) {
			snprintf(path, sizeof(path), "%s/.%s.%ld.%d.tmp", dir, names[i], (long)getpid(), k);
			FILE *f = fopen(path, "w");
			assert_non_null(f);
			fclose(f);
		}
	}
	assert_int_equal(write_now(dir, 1020, err, sizeof(err)), 0);
	DIR *d = opendir(dir);
	struct dirent *e;
	int temporaries = 0;
	while ((e = readdir(d)))
		temporaries += strstr(e->d_name, ".tmp") != NULL;
	closedir(d);
	assert_int_equal(temporaries, 16 * ROASTOP_ARRAY_LEN(names)); /* the planted ones only */
	cJSON *metrics = read_json(dir, "metrics.json");
	assert_non_null(metrics);
	cJSON_Delete(metrics);
}

/* The path goes through a regular file: the directory cannot exist. */
static void directory_through_a_file_is_an_error(void **state)
{
	(void)state;
	build_run();
	char file[128], sub[160], err[256] = "";
	snprintf(file, sizeof(file), "%s/plainfile", dir);
	FILE *f = fopen(file, "w");
	fclose(f);
	snprintf(sub, sizeof(sub), "%s/inside", file);
	assert_int_equal(write_now(sub, 1020, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "plainfile"));
	assert_non_null(strstr(err, "metrics.json"));
	assert_non_null(strstr(err, "Not a directory"));
	assert_null(strchr(err, '\n'));
}

/* metrics.json is a non-empty directory: the rename fails, the error names
 * the file, and the temporary is cleaned up. (Works as root, unlike a
 * permission test.) */
static void final_name_taken_by_directory(void **state)
{
	(void)state;
	build_run();
	char path[160], err[256] = "";
	snprintf(path, sizeof(path), "%s/metrics.json", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/metrics.json/x", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(write_now(dir, 1020, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "metrics.json"));
	assert_non_null(strstr(err, dir));
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		assert_null(strstr(e->d_name, ".tmp"));
	closedir(d);
}

static void too_long_a_path_is_an_error(void **state)
{
	(void)state;
	build_run();
	char *longdir = malloc(5000), err[256] = "";
	memset(longdir, 'a', 4999);
	longdir[0] = '/';
	longdir[4999] = '\0';
	int rc = write_now(longdir, 1020, err, sizeof(err));
	free(longdir);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err, "metrics.json"));
	assert_non_null(strstr(err, "File name too long"));
}

/* Nothing happened: the interval is unknown, written as such. */
static void nothing_measured(void **state)
{
	(void)state;
	char err[256];
	assert_int_equal(write_now(dir, 1020, err, sizeof(err)), 0);
	char *times = slurp(dir, "start_end_time.txt");
	assert_string_equal(times, "nan,nan\n");
	free(times);
	cJSON *meta = read_json(dir, "metadata.json");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(meta, "elapsed_time_seconds")));
	cJSON_Delete(meta);
	cJSON *metrics = read_json(dir, "metrics.json");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(metrics, "elapsed_time_seconds")));
	cJSON_Delete(metrics);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(writes_roastcoffea_layout),
		T(rewrite_replaces),
		T(planted_symlink_not_followed),
		T(symlinked_directory_refused),
		T(planted_temporaries_do_not_block),
		T(directory_through_a_file_is_an_error),
		T(final_name_taken_by_directory),
		T(too_long_a_path_is_an_error),
		T(nothing_measured),
	};
	return cmocka_run_group_tests_name("measurement", tests, NULL, NULL);
}
