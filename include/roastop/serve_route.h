/* The HTTP server's routes (docs/architecture.md, "HTTP server"): a request
 * (method, path, Authorization, whether it has a body) in, a response out.
 * No sockets and no HTTP framing here (libmicrohttpd's, in serve.c), so that
 * every path, method, id and key can be tested without a connection. */
#ifndef ROASTOP_SERVE_ROUTE_H
#define ROASTOP_SERVE_ROUTE_H

#include "roastop/session.h"
#include "roastop/strbuf.h"

/* Why a request was turned away: counted by reason (metrics.json's
 * roastop.serve.rejected, /metrics). */
enum serve_reject {
	SERVE_REJ_METHOD = 0, /* 405: not GET or HEAD */
	SERVE_REJ_BODY, /* 413: a request body */
	SERVE_REJ_AUTH, /* 401: no or a wrong bearer token */
	SERVE_REJ_NOT_FOUND, /* 404: no such route, run or file */
	SERVE_REJ_NOT_CLOSED, /* 409: the run's files are not final yet */
	SERVE_REJ_NOT_WRITTEN, /* 500: the run closed but its files could not be read */
	SERVE_REJ__COUNT,
	SERVE_REJ_NONE = -1,
};

/* What the routes read: the session's rows and the files under the
 * --output root. */
struct serve_site {
	const struct session *ses;
	const char *out_dir;
	const char *key_hex; /* the bearer token (the key's hex); NULL: --no-auth */
	bool metrics_open; /* --serve-metrics-open: /metrics needs no token */
	/* the OpenMetrics text of the session (openmetrics.h); 0, or -1 */
	int (*metrics_text)(void *ctx, struct strbuf *out);
	void *ctx;
};

struct serve_request {
	const char *method;
	const char *path; /* the URL's path, without its query */
	const char *authorization; /* the header's value, or NULL */
	bool has_body; /* a Content-Length other than 0, or a Transfer-Encoding */
};

struct serve_response {
	unsigned status;
	const char *content_type;
	struct strbuf body; /* sent when fd < 0 */
	int fd; /* a file to send whole (its bytes as written); the response owns it */
	const char *allow; /* an Allow header's value, or NULL */
	bool challenge; /* a WWW-Authenticate: Bearer header */
	bool measurement; /* a closed run's metrics.json (what the collector fetches last) */
	enum serve_reject reject;
};

#define SERVE_TYPE_JSON "application/json"
#define SERVE_TYPE_TEXT "text/plain; charset=utf-8"
#define SERVE_TYPE_HTML "text/html; charset=utf-8"
#define SERVE_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Fills rs (to be freed with serve_route_free). */
void serve_route(const struct serve_site *site, const struct serve_request *rq,
		 struct serve_response *rs);
void serve_route_free(struct serve_response *rs);
/* "method", "body", "auth", "not_found", "not_closed", "not_written". */
const char *serve_route_reject_name(enum serve_reject r);
/* Is authorization "Bearer <key_hex>" (constant time in the token)? */
bool serve_route_authorized(const char *key_hex, const char *authorization);

#endif
