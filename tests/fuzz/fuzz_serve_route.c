/* serve_route() on any method, path and Authorization value (split on NUL
 * bytes; the first byte's low bit says whether the request has a body):
 * it never crashes, answers only the statuses docs/serve.md lists, every
 * error is a short JSON object with its reason counted, and nothing but a
 * right key (or --serve-metrics-open's /metrics) gets a 200. The request
 * line's framing is libmicrohttpd's, fuzzed by its own project. */
#include <stdlib.h>
#include <string.h>

#include "roastop/serve_route.h"

#define KEY "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static int fake_metrics(void *ctx, struct strbuf *out)
{
	(void)ctx;
	strbuf_puts(out, "roastop_runs_total 2\n# EOF\n");
	return 0;
}

static void row_set(struct session_run *r, const char *id, const char *dir, bool closed)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->run_id, id);
	strcpy(r->dir, dir);
	r->status = closed ? RUN_COMPLETED : RUN_RUNNING;
	r->closed = closed;
}

/* The next NUL-terminated piece of [*p, end), or NULL past the end. */
static const char *piece(const char **p, const char *end)
{
	if (*p >= end)
		return NULL;
	const char *s = *p;
	*p += strlen(s) + 1;
	return s;
}

static bool known_status(unsigned s)
{
	return s == 200 || s == 401 || s == 404 || s == 405 || s == 409 || s == 413 || s == 500;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	char *text = malloc(size + 1); /* NUL-terminated pieces */
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	const char *p = text, *end = text + size - 1;
	const char *method = piece(&p, end), *path = piece(&p, end), *auth = piece(&p, end);
	struct session_run rows[2];
	row_set(&rows[0], "a", "2026-01-01_00-00-00", true);
	row_set(&rows[1], "b", "", false);
	struct session ses = { .rows = rows, .n_rows = 2 };
	bool open = data[0] & 2;
	struct serve_site site = { .ses = &ses, .out_dir = "/nonexistent/roastop-fuzz",
				   .key_hex = KEY, .metrics_open = open,
				   .metrics_text = fake_metrics };
	struct serve_request rq = { .method = method ? method : "", .path = path ? path : "",
				    .authorization = auth, .has_body = data[0] & 1 };
	struct serve_response rs;
	serve_route(&site, &rq, &rs);
	check(known_status(rs.status));
	check(rs.fd < 0); /* no file exists under the root */
	check((rs.status >= 400) == (rs.reject != SERVE_REJ_NONE));
	if (rs.status >= 400)
		check(rs.body.data && strncmp(rs.body.data, "{\"error\": ", 10) == 0);
	if (rs.status == 200)
		check(serve_route_authorized(KEY, auth) || (open && strcmp(rq.path, "/metrics") == 0));
	serve_route_free(&rs);
	free(text);
	return 0;
}
