/* roastop's HTTP server (--serve): libmicrohttpd driven from the app's own
 * poll loop (its epoll descriptor polled with the others, MHD_run when it
 * is ready or its timeout is due), so the routes (serve_route.h) read the
 * session with no lock and no thread. Bounds: SERVE_MAX_CONNECTIONS, a
 * request's line and headers within SERVE_CONNECTION_MEMORY, no body, a
 * connection idle SERVE_TIMEOUT seconds is closed. */
#ifndef ROASTOP_SERVE_H
#define ROASTOP_SERVE_H

#include <sys/socket.h>

#include "roastop/metrics.h"
#include "roastop/openmetrics.h"
#include "roastop/serve_route.h"
#include "roastop/source.h"

#define SERVE_MAX_CONNECTIONS 16
#define SERVE_TIMEOUT 5 /* seconds a connection may stay idle */
#define SERVE_CONNECTION_MEMORY ((size_t)32 << 10) /* bytes per connection */

struct serve_stats {
	uint64_t connections; /* accepted */
	uint64_t requests; /* that reached the routes */
	/* closed before any request reached the routes: a malformed request,
	 * a request line or headers over the bound (libmicrohttpd answers
	 * 400/414/431 itself), a connection idle past the timeout */
	uint64_t connections_without_request;
	uint64_t rejected[SERVE_REJ__COUNT];
	/* a closed run's metrics.json sent whole: --exit-on-run-end waits for
	 * one (docs/serve.md, "The collector's channel") */
	uint64_t measurements_sent;
};

struct serve_config {
	struct sockaddr_storage addr; /* where to listen (TCP) */
	socklen_t addrlen;
	const struct session *ses;
	const char *out_dir;
	const char *key_hex; /* NULL: no authentication (--no-auth) */
	bool metrics_open;
	/* /metrics' figures the app holds: run r's snapshot (its metrics and
	 * findings; r NULL: none), the listener's counters and the app's own
	 * counts, into in */
	void (*measure)(void *ctx, const struct run *r, struct openmetrics_input *in);
	void *ctx;
};

struct serve;

/* Listens and starts the server; NULL with one line in err (the address
 * and the cause) when it cannot. */
struct serve *serve_open(const struct serve_config *c, char *err, size_t errsz);
/* The descriptor to poll for POLLIN. */
int serve_fd(const struct serve *s);
/* Milliseconds until the server must run even without input; -1: none. */
int serve_timeout_ms(const struct serve *s);
/* Does what is ready: never blocks. */
void serve_run(struct serve *s);
/* "HOST:PORT" listened on. */
const char *serve_address(const struct serve *s);
void serve_get_stats(const struct serve *s, struct serve_stats *out);
/* The counters as a source's statistics (source.h), names as metrics.json's
 * "serve" block: what GET /metrics writes of them (openmetrics.h). */
void serve_stats_counters(const struct serve_stats *st, struct source_stats *out);
void serve_close(struct serve *s);
/* HOST:PORT (as --listen: [IPv6]:PORT, port 0 = any free one) resolved to
 * a TCP address; -1 with err. */
int serve_resolve(const char *host, int port, struct sockaddr_storage *addr, socklen_t *len,
		  char *err, size_t errsz);

#endif
