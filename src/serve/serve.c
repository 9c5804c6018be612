/* libmicrohttpd glue for the routes (serve.h): the daemon runs in roastop's
 * poll loop (MHD_USE_EPOLL without a thread of its own), so a slow client
 * costs a descriptor, never a wait. The HTTP framing is the library's. */
#include "roastop/serve.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "roastop/openmetrics.h"

#define SERVE_BACKLOG 32

struct serve {
	struct serve_config cfg;
	struct serve_site site;
	struct MHD_Daemon *mhd;
	int epoll_fd;
	struct serve_stats stats;
	char measurement; /* its address marks a request answered with a measurement */
	char address[NI_MAXHOST + NI_MAXSERV + 4];
};

/* A connection's own state: did a request reach the routes? */
struct serve_conn {
	bool served;
};

void serve_stats_counters(const struct serve_stats *st, struct source_stats *out)
{
	source_count(out, NULL, "connections", st->connections);
	source_count(out, NULL, "requests", st->requests);
	source_count(out, NULL, "connections_without_request", st->connections_without_request);
	for (int r = 0; r < SERVE_REJ__COUNT; r++)
		source_count(out, "rejected", serve_route_reject_name(r), st->rejected[r]);
}

static int serve_metrics_text(void *ctx, struct strbuf *out)
{
	struct serve *s = ctx;
	const struct session *ses = s->cfg.ses;
	const struct session_run *row = ses->n_rows ? &ses->rows[ses->n_rows - 1] : NULL;
	const struct run *r = session_newest(ses);
	struct openmetrics_input in = { .ses = ses, .row = row };
	s->cfg.measure(s->cfg.ctx, r && (!row || row->run) ? r : NULL, &in);
	struct source_stats *ss = calloc(1, sizeof(*ss));
	if (ss)
		serve_stats_counters(&s->stats, ss);
	in.server = ss;
	openmetrics_write(&in, out);
	free(ss);
	return out->failed ? -1 : 0;
}

static void serve_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			 enum MHD_ConnectionNotificationCode code)
{
	struct serve *s = cls;
	(void)c;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		s->stats.connections++;
		*socket_context = calloc(1, sizeof(struct serve_conn));
		return;
	}
	struct serve_conn *sc = *socket_context;
	if (!sc || !sc->served)
		s->stats.connections_without_request++;
	free(sc);
	*socket_context = NULL;
}

/* A request is over: a measurement counts once its last byte is sent. */
static void serve_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			    enum MHD_RequestTerminationCode toe)
{
	struct serve *s = cls;
	(void)c;
	if (*con_cls == &s->measurement && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		s->stats.measurements_sent++;
}

static void serve_mark(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct serve_conn *sc = ci ? ci->socket_context : NULL;
	if (sc)
		sc->served = true;
}

/* The response's descriptor handed to the library (which closes it). */
static struct MHD_Response *serve_make(struct serve_response *rs)
{
	if (rs->fd < 0)
		return MHD_create_response_from_buffer(rs->body.len, rs->body.data,
						       MHD_RESPMEM_MUST_COPY);
	struct stat st;
	if (fstat(rs->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	struct MHD_Response *r = MHD_create_response_from_fd64((uint64_t)st.st_size, rs->fd);
	if (r)
		rs->fd = -1;
	return r;
}

static enum MHD_Result serve_reply(struct serve *s, struct MHD_Connection *c,
				   struct serve_response *rs)
{
	if (rs->reject != SERVE_REJ_NONE)
		s->stats.rejected[rs->reject]++;
	struct MHD_Response *r = serve_make(rs);
	if (!r)
		return MHD_NO; /* the connection is closed */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rs->content_type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (rs->allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, rs->allow);
	if (rs->challenge)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"roastop\"");
	enum MHD_Result ok = MHD_queue_response(c, rs->status, r);
	MHD_destroy_response(r);
	return ok;
}

/* Answered at the first call, when the headers are in: a body is refused
 * before it is read. */
static enum MHD_Result serve_access(void *cls, struct MHD_Connection *c, const char *url,
				    const char *method, const char *version,
				    const char *upload_data, size_t *upload_data_size,
				    void **con_cls)
{
	struct serve *s = cls;
	(void)version;
	(void)upload_data;
	if (*con_cls) { /* a body after the answer: dropped */
		*upload_data_size = 0;
		return MHD_YES;
	}
	*con_cls = s;
	serve_mark(c);
	s->stats.requests++;
	const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_TRANSFER_ENCODING);
	struct serve_request rq = {
		.method = method,
		.path = url,
		.authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_AUTHORIZATION),
		.has_body = te || (len && strcmp(len, "0") != 0) || *upload_data_size > 0,
	};
	struct serve_response rs;
	serve_route(&s->site, &rq, &rs);
	if (rs.measurement && strcmp(method, "GET") == 0)
		*con_cls = &s->measurement;
	enum MHD_Result ok = serve_reply(s, c, &rs);
	serve_route_free(&rs);
	return ok;
}

int serve_resolve(const char *host, int port, struct sockaddr_storage *addr, socklen_t *len,
		  char *err, size_t errsz)
{
	char ps[16];
	snprintf(ps, sizeof(ps), "%d", port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host, ps, &hints, &res);
	if (rc != 0 || !res || res->ai_addrlen > sizeof(*addr)) {
		snprintf(err, errsz, "cannot resolve %s: %s", host,
			 rc ? gai_strerror(rc) : "no address");
		if (res)
			freeaddrinfo(res);
		return -1;
	}
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void serve_name(const struct sockaddr *sa, socklen_t len, char *out, size_t size)
{
	char h[NI_MAXHOST], p[NI_MAXSERV];
	if (getnameinfo(sa, len, h, sizeof(h), p, sizeof(p), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(out, size, "?");
	else if (sa->sa_family == AF_INET6)
		snprintf(out, size, "[%s]:%s", h, p);
	else
		snprintf(out, size, "%s:%s", h, p);
}

/* The listening socket is roastop's, so that a bind failure names its
 * cause (the library's would be a bare NULL). */
static int serve_listen(struct serve *s, char *err, size_t errsz)
{
	const struct sockaddr *sa = (const struct sockaddr *)&s->cfg.addr;
	serve_name(sa, s->cfg.addrlen, s->address, sizeof(s->address));
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int on = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (fd < 0 || bind(fd, sa, s->cfg.addrlen) != 0 || listen(fd, SERVE_BACKLOG) != 0) {
		snprintf(err, errsz, "cannot listen on tcp %s: %s", s->address, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct sockaddr_storage got;
	socklen_t glen = sizeof(got);
	if (getsockname(fd, (struct sockaddr *)&got, &glen) == 0) /* port 0: the one picked */
		serve_name((struct sockaddr *)&got, glen, s->address, sizeof(s->address));
	return fd;
}

static struct MHD_Daemon *serve_start(struct serve *s, int fd)
{
	unsigned flags = MHD_USE_EPOLL;
	if (s->cfg.addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	return MHD_start_daemon(
		flags, 0, NULL, NULL, serve_access, s, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_TIMEOUT,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, SERVE_CONNECTION_MEMORY,
		MHD_OPTION_NOTIFY_CONNECTION, serve_notify, s,
		MHD_OPTION_NOTIFY_COMPLETED, serve_completed, s, MHD_OPTION_END);
}

struct serve *serve_open(const struct serve_config *c, char *err, size_t errsz)
{
	struct serve *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	s->cfg = *c;
	s->site = (struct serve_site){ .ses = c->ses, .out_dir = c->out_dir, .key_hex = c->key_hex,
				       .metrics_open = c->metrics_open,
				       .metrics_text = serve_metrics_text, .ctx = s };
	int fd = serve_listen(s, err, errsz);
	if (fd < 0) {
		free(s);
		return NULL;
	}
	s->mhd = serve_start(s, fd);
	const union MHD_DaemonInfo *di =
		s->mhd ? MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!di) {
		snprintf(err, errsz, "cannot start the HTTP server on tcp %s", s->address);
		if (s->mhd)
			MHD_stop_daemon(s->mhd);
		close(fd);
		free(s);
		return NULL;
	}
	s->epoll_fd = di->epoll_fd;
	return s;
}

int serve_fd(const struct serve *s)
{
	return s->epoll_fd;
}

int serve_timeout_ms(const struct serve *s)
{
	MHD_UNSIGNED_LONG_LONG ms;
	if (MHD_get_timeout(s->mhd, &ms) != MHD_YES)
		return -1;
	return ms > 60000 ? 60000 : (int)ms;
}

void serve_run(struct serve *s)
{
	MHD_run(s->mhd);
}

const char *serve_address(const struct serve *s)
{
	return s->address;
}

void serve_get_stats(const struct serve *s, struct serve_stats *out)
{
	*out = s->stats;
}

/* The library closes the listening socket with the daemon. */
void serve_close(struct serve *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->mhd);
	free(s);
}
