/* serve_route(): every path, method, id and key the HTTP server may see,
 * without a socket (the framing is libmicrohttpd's). */
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/serve.h"
#include "roastop/serve_route.h"

#define KEY "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define BEARER "Bearer " KEY

struct fixture {
	char root[64];
	struct session_run rows[3];
	struct session ses;
	struct serve_site site;
	int metrics_calls;
};

static int fake_metrics(void *ctx, struct strbuf *out)
{
	struct fixture *f = ctx;
	f->metrics_calls++;
	strbuf_puts(out, "roastop_runs_total 3\n# EOF\n");
	return 0;
}

static void put_file(const char *root, const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", root, dir, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void row_set(struct session_run *r, const char *id, const char *name, const char *dir,
		    enum run_status st, bool closed)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->run_id, sizeof(r->run_id), "%s", id);
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	r->status = st;
	r->closed = closed;
}

/* Three runs: "a" closed and written, "b" closed with its write failed,
 * "c" (the newest) still running. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/roastop-test-serve-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	row_set(&f->rows[0], "a", "first", "20260101-000000_first", RUN_COMPLETED, true);
	row_set(&f->rows[1], "b", "", "20260101-000100", RUN_FAILED, true);
	f->rows[1].write_errno = ENOSPC;
	row_set(&f->rows[2], "c", "third", "", RUN_RUNNING, false);
	put_file(f->root, f->rows[0].dir, "metrics.json", "{\"exact\": \"bytes\"}\n");
	put_file(f->root, f->rows[0].dir, "summary.txt", "the summary\n");
	put_file(f->root, f->rows[0].dir, "report.html", "<html></html>\n");
	f->ses.rows = f->rows;
	f->ses.n_rows = 3;
	f->site = (struct serve_site){ .ses = &f->ses, .out_dir = f->root, .key_hex = KEY,
				       .metrics_text = fake_metrics, .ctx = f };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* The response to method path (authorized unless auth is given). */
static struct serve_response get(struct fixture *f, const char *method, const char *path,
				 const char *auth)
{
	struct serve_request rq = { .method = method, .path = path, .authorization = auth };
	struct serve_response rs;
	serve_route(&f->site, &rq, &rs);
	return rs;
}

static void expect(struct fixture *f, const char *method, const char *path, const char *auth,
		   unsigned status, enum serve_reject why)
{
	struct serve_response rs = get(f, method, path, auth);
	if (rs.status != status)
		fprintf(stderr, "%s %s: %u\n", method, path, rs.status);
	assert_int_equal(rs.status, status);
	assert_int_equal(rs.reject, why);
	if (status >= 400) { /* every error is a short JSON object */
		assert_string_equal(rs.content_type, SERVE_TYPE_JSON);
		assert_true(strncmp(rs.body.data, "{\"error\": ", 10) == 0);
		assert_int_equal(rs.fd, -1);
	}
	serve_route_free(&rs);
}

/* The file's bytes as sent; a measurement only metrics.json (what
 * --exit-on-run-end waits for). */
static void expect_file(struct fixture *f, const char *path, const char *type, const char *text)
{
	struct serve_response rs = get(f, "GET", path, BEARER);
	assert_int_equal(rs.status, 200);
	assert_int_equal(rs.measurement, strstr(path, "/metrics.json") != NULL);
	assert_string_equal(rs.content_type, type);
	assert_true(rs.fd >= 0);
	char buf[256] = "";
	ssize_t n = read(rs.fd, buf, sizeof(buf) - 1);
	assert_int_equal(n, (ssize_t)strlen(text));
	assert_string_equal(buf, text);
	serve_route_free(&rs);
}

static void methods_other_than_get_and_head_get_405(void **state)
{
	struct fixture *f = *state;
	const char *methods[] = { "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT",
				  "get", "" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(methods); i++) {
		struct serve_response rs = get(f, methods[i], "/runs", BEARER);
		assert_int_equal(rs.status, 405);
		assert_string_equal(rs.allow, "GET, HEAD");
		serve_route_free(&rs);
	}
	expect(f, "HEAD", "/runs", BEARER, 200, SERVE_REJ_NONE);
}

static void a_body_is_refused_before_auth(void **state)
{
	struct fixture *f = *state;
	struct serve_request rq = { .method = "GET", .path = "/runs", .has_body = true };
	struct serve_response rs;
	serve_route(&f->site, &rq, &rs);
	assert_int_equal(rs.status, 413);
	assert_int_equal(rs.reject, SERVE_REJ_BODY);
	serve_route_free(&rs);
}

static void every_route_needs_the_key(void **state)
{
	struct fixture *f = *state;
	const char *paths[] = { "/runs", "/runs/a", "/runs/a/metrics.json", "/runs/a/summary.txt",
				"/runs/a/report.html", "/metrics", "/nope", "/" };
	const char *bad[] = { NULL, "", "Bearer", "Bearer ", "Basic " KEY, KEY,
			      "Bearer " KEY "0", "Bearer 10112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
			      "Bearer 0011223344556677" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(paths); i++)
		for (size_t k = 0; k < ROASTOP_ARRAY_LEN(bad); k++) {
			struct serve_response rs = get(f, "GET", paths[i], bad[k]);
			assert_int_equal(rs.status, 401);
			assert_true(rs.challenge);
			assert_int_equal(rs.reject, SERVE_REJ_AUTH);
			serve_route_free(&rs);
		}
	assert_int_equal(f->metrics_calls, 0);
}

static void the_key_is_matched_as_users_export_it(void **state)
{
	(void)state;
	assert_true(serve_route_authorized(KEY, BEARER));
	assert_true(serve_route_authorized(KEY, "bearer " KEY));
	assert_true(serve_route_authorized(KEY, "Bearer 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF"));
	assert_false(serve_route_authorized(KEY, "Bearer " KEY " "));
	assert_true(serve_route_authorized(NULL, NULL)); /* --no-auth */
}

static void metrics_open_opens_only_metrics(void **state)
{
	struct fixture *f = *state;
	f->site.metrics_open = true;
	struct serve_response rs = get(f, "GET", "/metrics", NULL);
	assert_int_equal(rs.status, 200);
	assert_string_equal(rs.content_type, SERVE_TYPE_OPENMETRICS);
	assert_string_equal(rs.body.data, "roastop_runs_total 3\n# EOF\n");
	serve_route_free(&rs);
	expect(f, "GET", "/runs", NULL, 401, SERVE_REJ_AUTH);
	expect(f, "GET", "/runs/a/metrics.json", NULL, 401, SERVE_REJ_AUTH);
	expect(f, "GET", "/metrics/", NULL, 401, SERVE_REJ_AUTH);
}

static void runs_lists_every_row_oldest_first(void **state)
{
	struct fixture *f = *state;
	struct serve_response rs = get(f, "GET", "/runs", BEARER);
	assert_int_equal(rs.status, 200);
	/* indented, a row a line (jsonw's) */
	assert_true(strncmp(rs.body.data, "{\n  \"runs\": [\n    {\"run_id\": \"", 23) == 0);
	const char *a = strstr(rs.body.data, "\"run_id\": \"a\"");
	const char *b = strstr(rs.body.data, "\"run_id\": \"b\"");
	const char *c = strstr(rs.body.data, "\"run_id\": \"c\"");
	assert_true(a && b && c && a < b && b < c);
	assert_non_null(strstr(rs.body.data, "{\"run_id\": \"b\", \"name\": null, \"status\": "
					     "\"failed\", \"closed\": true, \"dir\": \"20260101-000100\"}"));
	assert_non_null(strstr(rs.body.data, "{\"run_id\": \"c\", \"name\": \"third\", \"status\": "
					     "\"running\", \"closed\": false, \"dir\": null}"));
	serve_route_free(&rs);
	rs = get(f, "GET", "/runs/latest", BEARER);
	assert_string_equal(rs.body.data, "{\"run_id\": \"c\", \"name\": \"third\", \"status\": "
					  "\"running\", \"closed\": false, \"dir\": null}\n");
	serve_route_free(&rs);
}

static void bad_paths_and_ids_get_404(void **state)
{
	struct fixture *f = *state;
	const char *paths[] = { "", "/", "/run", "/runs/", "/runs/x", "/runs//metrics.json",
				"/runs/a/", "/runs/a/metadata.json", "/runs/a/../a/metrics.json",
				"/runs/../../etc/passwd", "/runs/a/metrics.json/", "/runs/a/.",
				"/runs/latestx", "/runs/A", "/RUNS", "//runs", "/runs/a/metrics.json%00",
				"/runs/a/summary.txt/x", "/metricsx" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(paths); i++)
		expect(f, "GET", paths[i], BEARER, 404, SERVE_REJ_NOT_FOUND);
	struct serve_response rs = get(f, "GET", NULL, BEARER);
	assert_int_equal(rs.status, 404);
	serve_route_free(&rs);
}

static void closed_runs_give_their_files_bytes(void **state)
{
	struct fixture *f = *state;
	expect_file(f, "/runs/a/metrics.json", SERVE_TYPE_JSON, "{\"exact\": \"bytes\"}\n");
	expect_file(f, "/runs/a/summary.txt", SERVE_TYPE_TEXT, "the summary\n");
	expect_file(f, "/runs/a/report.html", SERVE_TYPE_HTML, "<html></html>\n");
}

static void an_open_run_gets_409_with_its_status(void **state)
{
	struct fixture *f = *state;
	struct serve_response rs = get(f, "GET", "/runs/latest/metrics.json", BEARER);
	assert_int_equal(rs.status, 409);
	assert_false(rs.measurement);
	assert_string_equal(rs.body.data, "{\"error\": \"run not closed\", \"status\": \"running\"}\n");
	serve_route_free(&rs);
	expect(f, "GET", "/runs/c/summary.txt", BEARER, 409, SERVE_REJ_NOT_CLOSED);
	expect(f, "GET", "/runs/c/report.html", BEARER, 404, SERVE_REJ_NOT_FOUND);
}

static void a_failed_write_gets_500_with_its_reason(void **state)
{
	struct fixture *f = *state;
	struct serve_response rs = get(f, "GET", "/runs/b/metrics.json", BEARER);
	assert_int_equal(rs.status, 500);
	assert_non_null(strstr(rs.body.data, strerror(ENOSPC)));
	serve_route_free(&rs);
	f->rows[1].write_errno = 0; /* written, but the file has gone since */
	expect(f, "GET", "/runs/b/metrics.json", BEARER, 500, SERVE_REJ_NOT_WRITTEN);
	expect(f, "GET", "/runs/b/report.html", BEARER, 404, SERVE_REJ_NOT_FOUND);
}

static void a_symlink_in_place_of_a_file_is_not_followed(void **state)
{
	struct fixture *f = *state;
	char path[512];
	const char *names[] = { "report.html", "metrics.json" };
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", f->root, f->rows[0].dir, names[i]);
		unlink(path);
		assert_int_equal(symlink("/etc/passwd", path), 0);
	}
	expect(f, "GET", "/runs/a/report.html", BEARER, 404, SERVE_REJ_NOT_FOUND);
	expect(f, "GET", "/runs/a/metrics.json", BEARER, 500, SERVE_REJ_NOT_WRITTEN);
}

static void reject_names_are_stable(void **state)
{
	(void)state;
	assert_string_equal(serve_route_reject_name(SERVE_REJ_METHOD), "method");
	assert_string_equal(serve_route_reject_name(SERVE_REJ_NOT_WRITTEN), "not_written");
	assert_string_equal(serve_route_reject_name(SERVE_REJ__COUNT), "unknown");
}

/* The server's counters as GET /metrics and metrics.json name them: the
 * three counts, then every reason, a zero too (a family's samples stay). */
static void stats_counters_name_every_reason(void **state)
{
	(void)state;
	struct serve_stats st = { .connections = 5, .requests = 4 };
	st.rejected[SERVE_REJ_AUTH] = 2;
	static struct source_stats out;
	memset(&out, 0, sizeof(out));
	serve_stats_counters(&st, &out);
	assert_int_equal(out.n_counters, 3 + SERVE_REJ__COUNT);
	assert_null(out.counters[0].group);
	assert_string_equal(out.counters[0].name, "connections");
	assert_true(out.counters[1].value == 4);
	const struct source_counter *auth = &out.counters[3 + SERVE_REJ_AUTH];
	assert_string_equal(auth->group, "rejected");
	assert_string_equal(auth->name, "auth");
	assert_true(auth->value == 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stats_counters_name_every_reason),
		T(methods_other_than_get_and_head_get_405),
		T(a_body_is_refused_before_auth),
		T(every_route_needs_the_key),
		T(the_key_is_matched_as_users_export_it),
		T(metrics_open_opens_only_metrics),
		T(runs_lists_every_row_oldest_first),
		T(bad_paths_and_ids_get_404),
		T(closed_runs_give_their_files_bytes),
		T(an_open_run_gets_409_with_its_status),
		T(a_failed_write_gets_500_with_its_reason),
		T(a_symlink_in_place_of_a_file_is_not_followed),
		T(reject_names_are_stable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
