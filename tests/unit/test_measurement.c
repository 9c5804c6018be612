#include "test_util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/measurement.h"

static char dir[64];
static struct run R;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/roastop-meas-XXXXXX");
	if (!mkdtemp(dir) || run_init(&R) != 0)
		return -1;
	struct event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_START;
	ev.t = 1000;
	ev.u.run_start.run_id = "r1";
	run_apply(&R, &ev);
	ev.type = EV_CHUNK;
	ev.t = 1010;
	ev.u.chunk = (struct ev_chunk){ .duration = optnum_of(2), .num_events = optnum_of(500),
					.dataset = "d" };
	run_apply(&R, &ev);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	run_destroy(&R);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static cJSON *read_json(const char *base, const char *name)
{
	char path[256], buf[65536];
	snprintf(path, sizeof(path), "%s/%s", base, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return cJSON_Parse(buf);
}

static void writes_roastcoffea_layout(void **state)
{
	(void)state;
	struct metrics m;
	metrics_compute(&R, 1020, NULL, &m);
	cJSON *extra = cJSON_CreateObject();
	cJSON_AddNumberToObject(extra, "replay_lines", 42);
	char err[256], sub[128];
	snprintf(sub, sizeof(sub), "%s/a/b", dir); /* parents created */
	assert_int_equal(measurement_write(sub, &m, &R, extra, err, sizeof(err)), 0);
	cJSON_Delete(extra);
	cJSON *metrics = read_json(sub, "metrics.json");
	assert_non_null(metrics);
	assert_int_equal(cJSON_GetObjectItem(metrics, "total_events")->valuedouble, 500);
	cJSON *ro = cJSON_GetObjectItem(metrics, "roastop");
	assert_int_equal(cJSON_GetObjectItem(ro, "replay_lines")->valuedouble, 42);
	cJSON *meta = read_json(sub, "metadata.json");
	assert_string_equal(cJSON_GetObjectItem(meta, "format")->valuestring,
			    "roastcoffea_measurement_v1");
	assert_int_equal(cJSON_GetObjectItem(meta, "elapsed_time_seconds")->valuedouble, 20);
	char path[256], line[128];
	snprintf(path, sizeof(path), "%s/start_end_time.txt", sub);
	FILE *f = fopen(path, "r");
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	double t0, t1;
	assert_int_equal(sscanf(line, "%lf,%lf", &t0, &t1), 2);
	assert_near(t1 - t0, 20, 1e-9);
	snprintf(path, sizeof(path), "%s/summary.txt", sub);
	assert_int_equal(access(path, R_OK), 0);
	cJSON_Delete(metrics);
	cJSON_Delete(meta);
}

/* A symlink planted at metrics.json is replaced, never written through. */
static void planted_symlink_not_followed(void **state)
{
	(void)state;
	char victim[128], link[128], err[256];
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/metrics.json", dir);
	FILE *f = fopen(victim, "w");
	fputs("precious", f);
	fclose(f);
	assert_int_equal(symlink(victim, link), 0);
	struct metrics m;
	metrics_compute(&R, 1020, NULL, &m);
	assert_int_equal(measurement_write(dir, &m, &R, NULL, err, sizeof(err)), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_false(S_ISLNK(st.st_mode));
	char buf[32] = { 0 };
	f = fopen(victim, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious");
}

static void unwritable_directory_is_an_error(void **state)
{
	(void)state;
	char file[128], sub[160], err[256];
	snprintf(file, sizeof(file), "%s/plainfile", dir);
	FILE *f = fopen(file, "w");
	fclose(f);
	snprintf(sub, sizeof(sub), "%s/inside", file);
	struct metrics m;
	metrics_compute(&R, 1020, NULL, &m);
	assert_int_equal(measurement_write(sub, &m, &R, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "plainfile"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(writes_roastcoffea_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(planted_symlink_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(unwritable_directory_is_an_error, setup, teardown),
	};
	return cmocka_run_group_tests_name("measurement", tests, NULL, NULL);
}
