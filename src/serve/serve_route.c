/* The routes (serve_route.h). Files are only ever opened as
 * out_dir/<the row's own directory name>/<a fixed name>: nothing of the
 * URL reaches a path, so no "..", encoding or symlink trick can lead
 * elsewhere. */
#include "roastop/serve_route.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "roastop/jsonw.h"

static const char *const reject_names[SERVE_REJ__COUNT] = {
	[SERVE_REJ_METHOD] = "method",	       [SERVE_REJ_BODY] = "body",
	[SERVE_REJ_AUTH] = "auth",	       [SERVE_REJ_NOT_FOUND] = "not_found",
	[SERVE_REJ_NOT_CLOSED] = "not_closed", [SERVE_REJ_NOT_WRITTEN] = "not_written",
};

const char *serve_route_reject_name(enum serve_reject r)
{
	return (r >= 0 && r < SERVE_REJ__COUNT) ? reject_names[r] : "unknown";
}

void serve_route_free(struct serve_response *rs)
{
	strbuf_free(&rs->body);
	if (rs->fd >= 0)
		close(rs->fd);
	rs->fd = -1;
}

/* {"error": text[, "status": status]} */
static void route_error(struct serve_response *rs, unsigned code, enum serve_reject why,
			const char *text, const char *status)
{
	rs->status = code;
	rs->reject = why;
	rs->content_type = SERVE_TYPE_JSON;
	strbuf_reset(&rs->body);
	struct jsonw w;
	jsonw_init_as(&w, &rs->body, JSONW_LINE);
	jsonw_object(&w, NULL);
	jsonw_str(&w, "error", text);
	if (status)
		jsonw_str(&w, "status", status);
	jsonw_end(&w, '}');
}

bool serve_route_authorized(const char *key_hex, const char *authorization)
{
	if (!key_hex)
		return true;
	if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
		return false;
	const char *tok = authorization + 7;
	while (*tok == ' ')
		tok++;
	size_t n = strlen(key_hex);
	if (strlen(tok) != n) /* the length is no secret: every key has 64 digits */
		return false;
	char low[128];
	if (n >= sizeof(low))
		return false;
	for (size_t i = 0; i < n; i++) /* a key file may be written in capitals */
		low[i] = (char)(tok[i] | ((tok[i] >= 'A' && tok[i] <= 'F') ? 0x20 : 0));
	return CRYPTO_memcmp(low, key_hex, n) == 0;
}

static const char *row_status(const struct session_run *row)
{
	return run_status_name(row->run ? row->run->status : row->status);
}

/* A row, on one line. */
static void route_row_json(struct jsonw *w, const struct session_run *row)
{
	jsonw_object_as(w, NULL, JSONW_LINE);
	jsonw_str(w, "run_id", row->run_id);
	jsonw_str(w, "name", row->name[0] ? row->name : NULL);
	jsonw_str(w, "status", row_status(row));
	jsonw_bool(w, "closed", row->closed);
	jsonw_str(w, "dir", row->dir[0] ? row->dir : NULL);
	jsonw_end(w, '}');
}

static void route_ok(struct serve_response *rs, const char *type)
{
	rs->status = 200;
	rs->reject = SERVE_REJ_NONE;
	rs->content_type = type;
}

static void route_runs(const struct session *s, struct serve_response *rs)
{
	route_ok(rs, SERVE_TYPE_JSON);
	struct jsonw w;
	jsonw_init(&w, &rs->body);
	jsonw_object(&w, NULL);
	jsonw_array(&w, "runs");
	for (size_t i = 0; i < s->n_rows; i++)
		route_row_json(&w, &s->rows[i]);
	jsonw_end(&w, ']');
	jsonw_end(&w, '}');
}

/* "latest" is the newest row; else the newest row with that run_id. */
static const struct session_run *route_find(const struct session *s, const char *id, size_t len)
{
	if (len == 6 && memcmp(id, "latest", 6) == 0)
		return s->n_rows ? &s->rows[s->n_rows - 1] : NULL;
	for (size_t i = s->n_rows; i-- > 0;) {
		const char *rid = s->rows[i].run_id;
		if (strlen(rid) == len && memcmp(rid, id, len) == 0)
			return &s->rows[i];
	}
	return NULL;
}

/* The run's file `name`; final says it is written once, at the close
 * (409 before). */
static void route_file(const struct serve_site *site, const struct session_run *row,
		       const char *name, const char *type, bool final, struct serve_response *rs)
{
	char text[PATH_MAX + 64];
	if (final && !row->closed) {
		route_error(rs, 409, SERVE_REJ_NOT_CLOSED, "run not closed", row_status(row));
		return;
	}
	if (final && row->write_errno) {
		snprintf(text, sizeof(text), "measurement not written: %s", strerror(row->write_errno));
		route_error(rs, 500, SERVE_REJ_NOT_WRITTEN, text, NULL);
		return;
	}
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s/%s", site->out_dir, row->dir, name);
	int fd = row->dir[0] && n > 0 && (size_t)n < sizeof(path)
			 ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
			 : (errno = ENOENT, -1);
	if (fd < 0 && (!final || errno == ENOENT)) {
		snprintf(text, sizeof(text), "no %s for this run", name);
		route_error(rs, final ? 500 : 404, final ? SERVE_REJ_NOT_WRITTEN : SERVE_REJ_NOT_FOUND,
			    text, NULL);
		return;
	}
	if (fd < 0) {
		snprintf(text, sizeof(text), "cannot read %s: %s", name, strerror(errno));
		route_error(rs, 500, SERVE_REJ_NOT_WRITTEN, text, NULL);
		return;
	}
	route_ok(rs, type);
	rs->fd = fd;
}

/* rest: what follows "/runs/": an id, then nothing or "/" and a file. */
static void route_run(const struct serve_site *site, const char *rest, struct serve_response *rs)
{
	const char *slash = strchr(rest, '/');
	size_t len = slash ? (size_t)(slash - rest) : strlen(rest);
	const struct session_run *row = len ? route_find(site->ses, rest, len) : NULL;
	if (!row) {
		route_error(rs, 404, SERVE_REJ_NOT_FOUND, "no such run", NULL);
		return;
	}
	const char *file = slash ? slash + 1 : NULL;
	if (!file) {
		route_ok(rs, SERVE_TYPE_JSON);
		struct jsonw w;
		jsonw_init_as(&w, &rs->body, JSONW_LINE);
		route_row_json(&w, row); /* the top level's: its line ends */
	} else if (strcmp(file, "metrics.json") == 0) {
		route_file(site, row, file, SERVE_TYPE_JSON, true, rs);
		rs->measurement = rs->status == 200;
	} else if (strcmp(file, "summary.txt") == 0) {
		route_file(site, row, file, SERVE_TYPE_TEXT, true, rs);
	} else if (strcmp(file, "report.html") == 0) {
		route_file(site, row, file, SERVE_TYPE_HTML, false, rs);
	} else {
		route_error(rs, 404, SERVE_REJ_NOT_FOUND, "no such route", NULL);
	}
}

static void route_metrics(const struct serve_site *site, struct serve_response *rs)
{
	route_ok(rs, SERVE_TYPE_OPENMETRICS);
	if (site->metrics_text(site->ctx, &rs->body) != 0 || rs->body.failed) {
		rs->body.failed = false;
		route_error(rs, 500, SERVE_REJ_NOT_WRITTEN, "out of memory", NULL);
	}
}

void serve_route(const struct serve_site *site, const struct serve_request *rq,
		 struct serve_response *rs)
{
	*rs = (struct serve_response){ .fd = -1, .reject = SERVE_REJ_NONE };
	strbuf_init(&rs->body);
	const char *p = rq->path ? rq->path : "";
	if (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0) {
		route_error(rs, 405, SERVE_REJ_METHOD, "only GET and HEAD", NULL);
		rs->allow = "GET, HEAD";
	} else if (rq->has_body) {
		route_error(rs, 413, SERVE_REJ_BODY, "no request body is taken", NULL);
	} else if (strcmp(p, "/metrics") == 0 && site->metrics_open) {
		route_metrics(site, rs);
	} else if (!serve_route_authorized(site->key_hex, rq->authorization)) {
		route_error(rs, 401, SERVE_REJ_AUTH, "a bearer token (ROASTOP_KEY) is needed", NULL);
		rs->challenge = true;
	} else if (strcmp(p, "/metrics") == 0) {
		route_metrics(site, rs);
	} else if (strcmp(p, "/runs") == 0) {
		route_runs(site->ses, rs);
	} else if (strncmp(p, "/runs/", 6) == 0) {
		route_run(site, p + 6, rs);
	} else {
		route_error(rs, 404, SERVE_REJ_NOT_FOUND, "no such route", NULL);
	}
}
