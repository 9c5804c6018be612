/* roastop history and the analysis's identity: measurements listed newest
 * first with their figures; another user's directories, a corrupt
 * metrics.json, files and directories without one skipped and counted; a
 * bound on what is read; the identity written, read back and matched. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "roastop/history.h"
#include "roastop/metrics_json.h"
#include "roastop/run.h"

static const char *const GOOD =
	"{\"total_events\": 1000, \"event_rate_elapsed_khz\": 2.5, \"elapsed_time_seconds\": 0.4,"
	" \"avg_workers\": 2, \"run_name\": \"%s\", \"run_status\": \"completed\", \"roastop\":"
	" {\"findings\": [{\"id\": \"slow_file\", \"severity\": \"warning\", \"title\": \"t\"}],"
	" \"identity\": {\"processor\": \"P\", \"files\": 3, \"files_hash\": \"00ff\","
	" \"chunk_events\": 100, \"t_start\": %s}}}";

static void put(const char *root, const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, dir);
	mkdir(path, 0755);
	if (!name)
		return;
	snprintf(path, sizeof(path), "%s/%s/%s", root, dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put_run(const char *root, const char *dir, const char *name, const char *t)
{
	char text[1024];
	snprintf(text, sizeof(text), GOOD, name, t);
	put(root, dir, "metrics.json", text);
}

static char root[] = "/tmp/roastop-history-XXXXXX";

static void make_root(void)
{
	strcpy(root, "/tmp/roastop-history-XXXXXX");
	assert_non_null(mkdtemp(root));
	put_run(root, "2026-01-01_10-00-00_first", "first", "1767261600");
	put_run(root, "2026-01-02_10-00-00_second", "second", "null");
	put(root, "2026-01-03_10-00-00_broken", "metrics.json", "{\"total_events\": 1");
	put(root, "notes", "readme.txt", "not a measurement");
	put(root, ".", "stray.txt", "a file");
	char path[512];
	snprintf(path, sizeof(path), "%s/latest", root);
	assert_int_equal(symlink("2026-01-02_10-00-00_second", path), 0);
}

static void remove_root(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void runs_newest_first_the_rest_counted(void **state)
{
	(void)state;
	make_root();
	struct history h;
	char err[256];
	assert_int_equal(history_scan(root, getuid(), &h, err, sizeof(err)), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.runs[0].name, "second");
	assert_string_equal(h.runs[1].name, "first");
	assert_near(h.runs[1].rate_khz.value, 2.5, 1e-12);
	assert_string_equal(h.runs[1].finding, "slow_file");
	assert_true(h.runs[1].has_identity);
	assert_int_equal(h.corrupt, 1);
	assert_int_equal(h.unrelated, 2); /* notes/ without metrics.json, stray.txt */
	assert_int_equal(h.foreign, 0);
	struct strbuf o;
	strbuf_init(&o);
	history_write_text(&o, &h, "fir");
	assert_non_null(strstr(o.data, "2026-01-01 10:00:00")); /* t_start, local time */
	assert_null(strstr(o.data, "second"));
	strbuf_free(&o);
	strbuf_init(&o);
	history_write_json(&o, &h, NULL);
	cJSON *doc = cJSON_Parse(o.data);
	assert_non_null(doc);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "runs")), 2);
	cJSON_Delete(doc);
	strbuf_free(&o);
	history_free(&h);
	/* as another user sees them: every directory is foreign */
	assert_int_equal(history_scan(root, getuid() + 1, &h, err, sizeof(err)), 0);
	assert_int_equal(h.n, 0);
	assert_int_equal(h.foreign, 4);
	history_free(&h);
	remove_root();
	assert_int_equal(history_scan(root, getuid(), &h, err, sizeof(err)), -1);
	assert_non_null(strstr(err, root));
	history_free(&h);
}

static bool stop_at_first(void *ctx, const struct past_run *run)
{
	(void)run;
	++*(int *)ctx;
	return false;
}

static void a_walk_stops_when_told(void **state)
{
	(void)state;
	make_root();
	struct history h = { 0 };
	char err[256];
	int seen = 0;
	assert_int_equal(history_walk(root, getuid(), 10, &h, stop_at_first, &seen, err,
				      sizeof(err)), 0);
	assert_int_equal(seen, 1);
	assert_int_equal(h.corrupt, 1); /* the newest, broken, then the second */
	assert_int_equal(h.not_read, 1); /* the first, not opened */
	remove_root();
}

/* The last comparable run: same processor, started before; a run of
 * another processor, or of no known start, is passed over. */
static void the_previous_run_is_found(void **state)
{
	(void)state;
	make_root();
	struct past_run prev;
	struct identity now = { .processor = "P", .t_start = 1767261601 };
	assert_true(history_find_previous(root, getuid(), &now, &prev, NULL));
	assert_string_equal(prev.name, "first");
	assert_int_equal(prev.n_ids, 1);
	assert_string_equal(prev.ids[0], "slow_file");
	now.t_start = 1767261600; /* itself: not before */
	assert_false(history_find_previous(root, getuid(), &now, &prev, NULL));
	now.t_start = 1767261601;
	strcpy(now.processor, "Q");
	assert_false(history_find_previous(root, getuid(), &now, &prev, NULL));
	remove_root();
	assert_false(history_find_previous(root, getuid(), &now, &prev, NULL));
}

/* roastop.previous and summary.txt's Previous Run: which run, how it
 * stands, the change of rate. */
static void the_previous_run_is_written(void **state)
{
	(void)state;
	make_root();
	struct past_run prev;
	struct identity now = { .processor = "P", .t_start = 1767261601 };
	assert_true(history_find_previous(root, getuid(), &now, &prev, NULL));
	remove_root();
	struct run *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	strcpy(r->processor, "P");
	struct metrics m = { 0 };
	m.event_rate_elapsed_khz = optnum_of(1.25);
	struct strbuf o;
	strbuf_init(&o);
	previous_text(&o, &prev, r, &m);
	assert_non_null(strstr(o.data, "2026-01-01_10-00-00_first (comparable analysis; differ: files, "
				       "chunk size)"));
	assert_non_null(strstr(o.data, "-50.0 %"));
	strbuf_free(&o);
	strbuf_init(&o);
	struct jsonw w;
	jsonw_init(&w, &o);
	jsonw_object(&w, NULL);
	previous_json(&w, &prev, r, &m);
	jsonw_end(&w, '}');
	cJSON *doc = cJSON_Parse(o.data);
	const cJSON *p = cJSON_GetObjectItem(doc, "previous");
	assert_near(cJSON_GetObjectItem(p, "rate_change_percent")->valuedouble, -50, 1e-9);
	assert_string_equal(cJSON_GetObjectItem(p, "analysis")->valuestring, "comparable");
	cJSON_Delete(doc);
	strbuf_free(&o);
	free(r);
	/* the ETA from its duration (0.4 s): by the progress, else by the time run */
	m.progress_fraction = optnum_of(0.5);
	assert_near(previous_eta(&prev, &m).value, 0.2, 1e-12);
	m.progress_fraction = optnum_none();
	m.elapsed_time_seconds = optnum_of(0.1);
	assert_near(previous_eta(&prev, &m).value, 0.3, 1e-12);
	prev.elapsed = optnum_none();
	assert_false(previous_eta(&prev, &m).valid);
}

/* Three files, a chunk of 1,000 events each second; slow's take four. */
static void run_of_files(struct run *r, double slow)
{
	static const char *const files[] = { "/d/a.root", "/d/b.root", "/d/slow.root" };
	assert_int_equal(run_init(r), 0);
	for (int i = 0; i < 12; i++) {
		double dur = i % 3 == 2 ? slow : 1;
		struct event ev = test_event(EV_CHUNK, 100 + i);
		ev.u.chunk.dataset = "ds";
		ev.u.chunk.file = files[i % 3];
		ev.u.chunk.t_start = optnum_of(100 + i - dur);
		ev.u.chunk.t_end = optnum_of(100 + i);
		ev.u.chunk.duration = optnum_of(dur);
		ev.u.chunk.num_events = optnum_of(1000);
		assert_int_equal(run_apply(r, &ev), 0);
	}
}

static const cJSON *per_file_of(cJSON *doc)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "previous"), "per_file");
}

static cJSON *previous_doc(const struct past_run *prev, const struct run *r,
			   const struct metrics *m)
{
	struct strbuf o;
	struct jsonw w;
	strbuf_init(&o);
	jsonw_init(&w, &o);
	jsonw_object(&w, NULL);
	previous_json(&w, prev, r, m);
	jsonw_end(&w, '}');
	cJSON *doc = cJSON_Parse(o.data);
	strbuf_free(&o);
	assert_non_null(per_file_of(doc));
	return doc;
}

/* A measurement's per-file figures come back from its raw_chunk_metrics
 * as the run had them: against itself, no change; against a run whose
 * one file is four times slower, that file first, -75 %. */
static void the_files_whose_rate_fell_come_first(void **state)
{
	(void)state;
	struct run *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct past_run *prev = calloc(1, sizeof(*prev));
	static struct past_file files[PAST_FILES];
	struct metrics ma, mb;
	struct strbuf o;
	assert_true(a && b && prev);
	run_of_files(a, 1);
	run_of_files(b, 4);
	metrics_compute(a, 200, NULL, &ma);
	metrics_compute(b, 200, NULL, &mb);
	strbuf_init(&o);
	assert_int_equal(metrics_write_json(&ma, a, NULL, NULL, &o), 0);
	assert_int_equal(history_parse(o.data, prev, files), 0);
	strbuf_free(&o);
	assert_int_equal(prev->n_files, 3);
	cJSON *doc = previous_doc(prev, a, &ma);
	const cJSON *f;
	assert_int_equal(cJSON_GetArraySize(per_file_of(doc)), 3);
	cJSON_ArrayForEach(f, per_file_of(doc))
		assert_near(cJSON_GetObjectItem(f, "rate_change_percent")->valuedouble, 0, 1e-9);
	cJSON_Delete(doc);
	doc = previous_doc(prev, b, &mb);
	f = cJSON_GetArrayItem(per_file_of(doc), 0);
	assert_string_equal(cJSON_GetObjectItem(f, "file")->valuestring, "/d/slow.root");
	assert_near(cJSON_GetObjectItem(f, "rate_change_percent")->valuedouble, -75, 1e-9);
	assert_near(cJSON_GetObjectItem(f, "previous_event_rate_khz")->valuedouble, 1, 1e-9);
	cJSON_Delete(doc);
	strbuf_init(&o);
	previous_text(&o, prev, b, &mb);
	assert_non_null(strstr(o.data, "Files, largest fall first\n  /d/slow.root "));
	assert_non_null(strstr(o.data, "-75.0 %"));
	strbuf_free(&o);
	struct diagnosis_previous dp;
	previous_for_diagnosis(prev, b, &mb, &dp);
	assert_string_equal(dp.fell_file, "/d/slow.root");
	assert_near(dp.fell_percent.value, -75, 1e-9);
	previous_for_diagnosis(prev, a, &ma, &dp); /* nothing fell */
	assert_string_equal(dp.fell_file, "");
	run_destroy(a);
	run_destroy(b);
	free(a);
	free(b);
	free(prev);
}

/* At most PAST_FILES files kept, in order of hash, each file's records
 * summed; a record without a file or a time is left out. */
static void a_past_runs_files_are_bounded(void **state)
{
	(void)state;
	struct past_file *files = calloc(PAST_FILES, sizeof(*files));
	size_t n = 0;
	char name[32];
	assert_non_null(files);
	for (unsigned i = 0; i < PAST_FILES + 10; i++) {
		snprintf(name, sizeof(name), "f%u.root", i);
		previous_file_add(files, &n, name, 10, 1);
		previous_file_add(files, &n, name, 10, 1);
	}
	assert_int_equal(n, PAST_FILES);
	for (size_t i = 1; i < n; i++)
		assert_true(files[i - 1].hash < files[i].hash);
	assert_near(files[0].events, 20, 1e-12);
	struct past_run *run = calloc(1, sizeof(*run));
	char text[] = "{\"raw_chunk_metrics\": [{\"file\": \"x\", \"num_events\": 5,"
		      " \"t_start\": 1, \"t_end\": 3}, {\"num_events\": 5, \"duration\": 1},"
		      " {\"file\": \"x\", \"duration\": -1}, {\"file\": \"x\", \"duration\": 2}]}";
	assert_int_equal(history_parse(text, run, NULL), 0);
	assert_int_equal(run->n_files, 0); /* not asked for */
	assert_int_equal(history_parse(text, run, files), 0);
	assert_int_equal(run->n_files, 1);
	assert_int_equal(run->files[0].hash, previous_file_hash("x"));
	assert_near(run->files[0].events, 5, 1e-12);
	assert_near(run->files[0].seconds, 4, 1e-12);
	free(run);
	free(files);
}

static void identities_match(void **state)
{
	(void)state;
	struct identity a = { .processor = "P", .n_files = 3, .files_hash = 7,
			      .chunk_events = 100 }, b = a;
	char differs[64], ka[17], kb[17];
	assert_int_equal(identity_match(&a, &b, differs, sizeof(differs)), IDENTITY_SAME);
	b.files_hash = 8;
	b.chunk_events = 50;
	assert_int_equal(identity_match(&a, &b, differs, sizeof(differs)), IDENTITY_COMPARABLE);
	assert_string_equal(differs, "files, chunk size");
	identity_key(&a, ka);
	identity_key(&b, kb);
	assert_string_not_equal(ka, kb);
	strcpy(b.processor, "Q");
	assert_int_equal(identity_match(&a, &b, differs, sizeof(differs)), IDENTITY_OTHER);
	struct identity n1 = { .name = "x" }, n2 = { .name = "x" };
	assert_int_equal(identity_match(&n1, &n2, differs, sizeof(differs)), IDENTITY_SAME);
	/* written and read back */
	struct strbuf o;
	strbuf_init(&o);
	struct jsonw w;
	jsonw_init(&w, &o);
	jsonw_object(&w, NULL);
	identity_write(&w, &b);
	jsonw_end(&w, '}');
	cJSON *doc = cJSON_Parse(o.data);
	struct identity c;
	assert_true(identity_read(cJSON_GetObjectItem(doc, "identity"), &c));
	assert_int_equal(identity_match(&b, &c, differs, sizeof(differs)), IDENTITY_SAME);
	assert_false(identity_read(NULL, &c));
	cJSON_Delete(doc);
	strbuf_free(&o);
}

int main(void)
{
	setenv("TZ", "UTC", 1); /* the list's times are local */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_newest_first_the_rest_counted),
		cmocka_unit_test(a_walk_stops_when_told),
		cmocka_unit_test(the_previous_run_is_found),
		cmocka_unit_test(the_previous_run_is_written),
		cmocka_unit_test(the_files_whose_rate_fell_come_first),
		cmocka_unit_test(a_past_runs_files_are_bounded),
		cmocka_unit_test(identities_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
