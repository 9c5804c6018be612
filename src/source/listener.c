/* The UDP listener as a source: it opens udp.c's engine, paces its socket
 * (udp.h's nap), says what the emitters must export, and watches its
 * losses and key rejections for the log and the header. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roastop/clock.h"
#include "roastop/portfile.h"
#include "roastop/source.h"
#include "roastop/udp.h"

/* Datagrams rejected for their tag are the usual reason nothing arrives (a
 * previous session's key, or none). The alert stays while no datagram was
 * accepted, and then while tag rejections keep coming: one within the last
 * KEY_ALERT_RECENT seconds. It names the reason that grew last. */
#define KEY_ALERT_RECENT 10.0
/* udp_get_stats walks every sender: not at each wake-up of the loop */
#define KEY_ALERT_CHECK 0.2
#define LOSS_NOTE_EVERY 1.0 /* seconds between two loss lines at most */
#define HINT_MAX 4200 /* "export ROASTOP_ADDR=... ROASTOP_KEY=$(cat PATH)" */
/* Without --listen, a taken default port gives way to one of PORT_TRIES
 * from PORT_BASE + a hash of the uid modulo PORT_SPREAD (below Linux's
 * ephemeral ports), so that two users rarely try the same. */
#define PORT_BASE 10000
#define PORT_SPREAD 20000
#define PORT_TRIES 16

struct listener {
	struct udp *u;
	int port; /* the one bound (listener_port) */
	event_deliver_fn deliver;
	void (*note)(void *ctx, const char *text);
	void *ctx;
	double nap_until; /* monotonic: the socket is left unpolled until then */
	char hint[HINT_MAX];
	/* the losses as last written to the log */
	uint64_t lost_noted, rejected_noted, unanswered_noted;
	bool old_emitter_noted; /* the one line about version-1 datagrams */
	double loss_noted_at; /* monotonic */
	/* tag rejections: the counts last seen, the reason that grew last */
	uint64_t key_bad_seen, key_none_seen;
	enum udp_reason key_cause, key_cause_shown;
	double key_rejected_at, key_checked_at; /* monotonic */
	char alert[128];
};

static bool listener_wanted(const struct app_config *c)
{
	return !c->replay_path;
}

/* Without --listen: the one remembered beside the key, the default, the
 * user's own, the kernel's. */
static size_t listener_ports(const struct source_env *env, int remembered, int *out)
{
	size_t n = 0;
	if (remembered)
		out[n++] = remembered;
	if (env->cfg->listen_port != remembered)
		out[n++] = env->cfg->listen_port;
	unsigned start = ((unsigned)getuid() * 2654435761u) % PORT_SPREAD;
	for (unsigned k = 0; k < PORT_TRIES; k++)
		out[n++] = PORT_BASE + (int)((start + k) % PORT_SPREAD);
	out[n++] = 0;
	return n;
}

/* Is the TCP port of the UDP socket's address free too? The HTTP server
 * takes it by default (serve.h): a port is only taken whole. */
static bool listener_tcp_free(const struct udp *u)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(udp_fd(u), (struct sockaddr *)&ss, &len) != 0)
		return false;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1;
	if (fd < 0)
		return false;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	bool free_ = bind(fd, (struct sockaddr *)&ss, len) == 0;
	close(fd);
	return free_;
}

static int listener_port(const struct udp *u)
{
	const char *colon = strrchr(udp_address(u), ':');
	return colon ? atoi(colon + 1) : 0;
}

/* Port 0 asks the kernel for a free UDP port, which another process may hold
 * in TCP (an outgoing connection's own port): another is asked then. */
#define LISTENER_ZERO_TRIES 16

static struct udp *listener_try(const struct source_env *env, int port, char *err, size_t errsz)
{
	const struct app_config *c = env->cfg;
	bool serves_here = !c->serve_off && !c->serve_host[0];
	for (int k = 0; k < (port ? 1 : LISTENER_ZERO_TRIES); k++) {
		struct udp *u = udp_open(c->listen_host, port, env->key, c->rcvbuf, err, errsz);
		if (!u || !serves_here || listener_tcp_free(u))
			return u;
		int got = listener_port(u);
		udp_close(u);
		snprintf(err, errsz, "cannot listen on tcp %s:%d: %s", c->listen_host, got,
			 strerror(EADDRINUSE));
		errno = EADDRINUSE;
	}
	return NULL;
}

/* The port got is remembered, and said when the first choice was taken. */
static void listener_settle(const struct source_env *env, const struct udp *u, int remembered,
			    int first, bool moved)
{
	const char *addr = udp_address(u);
	int port = listener_port(u);
	bool kept = env->key && (port == remembered || portfile_write(env->key->path, port) == 0);
	if (moved)
		fprintf(stderr, "roastop: port %d is taken; listening on udp %s instead%s%s%s\n",
			first, addr, kept ? " (kept for your next sessions in " : "",
			kept ? env->key->path : "", kept ? PORTFILE_SUFFIX ")" : "");
}

/* --listen's address, or a loud failure; else the first free of listener_ports. */
static struct udp *listener_bind(const struct source_env *env, char *err, size_t errsz)
{
	const struct app_config *c = env->cfg;
	if (c->listen_explicit && c->listen_port)
		return udp_open(c->listen_host, c->listen_port, env->key, c->rcvbuf, err, errsz);
	if (c->listen_explicit) /* port 0: any free port, whole */
		return listener_try(env, 0, err, errsz);
	int ports[PORT_TRIES + 3];
	int remembered = env->key ? portfile_read(env->key->path) : 0;
	size_t n = listener_ports(env, remembered, ports);
	for (size_t i = 0; i < n; i++) {
		struct udp *u = listener_try(env, ports[i], err, errsz);
		if (u) {
			listener_settle(env, u, remembered, ports[0], i > 0);
			return u;
		}
		if (errno != EADDRINUSE)
			return NULL;
	}
	return NULL;
}

static void *listener_open(const struct source_env *env, char *err, size_t errsz)
{
	struct listener *l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	l->u = listener_bind(env, err, errsz);
	if (!l->u) {
		free(l);
		return NULL;
	}
	l->port = listener_port(l->u);
	l->deliver = env->deliver;
	l->note = env->note;
	l->ctx = env->ctx;
	const char *addr = udp_address(l->u);
	fprintf(stderr, "roastop: listening for chunk datagrams on udp %s%s\n", addr,
		env->key ? "" : " (no authentication)");
	if (env->key)
		snprintf(l->hint, sizeof(l->hint), "export ROASTOP_ADDR=%s ROASTOP_KEY=$(cat %s)",
			 addr, env->key->path);
	else
		snprintf(l->hint, sizeof(l->hint), "export ROASTOP_ADDR=%s", addr);
	fprintf(stderr, "roastop: emitters: %s\n", l->hint);
	return l;
}

static size_t listener_pollfds(const void *src, struct pollfd *out, size_t max)
{
	const struct listener *l = src;
	if (max < 1 || l->nap_until > clock_mono())
		return 0; /* napping: poll skips it */
	out[0] = (struct pollfd){ .fd = udp_fd(l->u), .events = POLLIN };
	return 1;
}

/* After a small drain, the socket is left a while (udp.h). */
static int listener_drain(struct listener *l, double now)
{
	int n = udp_drain(l->u, now, l->deliver, l->ctx);
	double nap = n < 0 ? 0 : udp_drain_nap(l->u, n);
	if (n < 0)
		fprintf(stderr, "roastop: udp: %s\n", strerror(errno));
	else if (nap > 0)
		l->nap_until = clock_mono() + nap;
	return n;
}

static void listener_dispatch(void *src, const struct pollfd *pfd, size_t n, double now)
{
	if (n > 0 && (pfd[0].revents & POLLIN))
		listener_drain(src, now);
}

/* The nap's end: then pollfds gives the socket again. */
static double listener_timeout(const void *src)
{
	double left = ((const struct listener *)src)->nap_until - clock_mono();
	return left > 0 ? left : -1;
}

/* Loss never passes silently: a line in the log when a count grew, at
 * most once a second. */
static void listener_note_loss(struct listener *l, const struct udp_stats *st, double now)
{
	typedef unsigned long long ull;
	uint64_t lost = st->missing + st->kernel_drops, bad = udp_rejected_total(st);
	char text[512];
	if (lost > l->lost_noted) {
		snprintf(text, sizeof(text),
			 "datagrams lost: %llu more, %llu in all (%llu sequence gaps, %llu kernel drops)",
			 (ull)(lost - l->lost_noted), (ull)lost, (ull)st->missing,
			 (ull)st->kernel_drops);
		l->note(l->ctx, text);
	}
	if (bad > l->rejected_noted) {
		snprintf(text, sizeof(text),
			 "datagrams rejected: %llu more, %llu in all (reasons in metrics.json)",
			 (ull)(bad - l->rejected_noted), (ull)bad);
		l->note(l->ctx, text);
	}
	uint64_t unanswered = st->acks_refused + st->acks_failed;
	if (unanswered > l->unanswered_noted) { /* a flood of hellos, or a send that failed */
		snprintf(text, sizeof(text), "hellos not answered: %llu more, %llu of %llu in all "
			 "(%llu over the rate limit, %llu failed sends)",
			 (ull)(unanswered - l->unanswered_noted), (ull)unanswered, (ull)st->hellos,
			 (ull)st->acks_refused, (ull)st->acks_failed);
		l->note(l->ctx, text);
	}
	if (st->rejected[UDP_VERSION] && !l->old_emitter_noted) {
		l->note(l->ctx, "an emitter older than this roastop sends version-1 datagrams "
				"(rejected.version): install this roastop's Python package");
		l->old_emitter_noted = true;
	}
	if (lost != l->lost_noted || bad != l->rejected_noted || unanswered != l->unanswered_noted)
		l->loss_noted_at = now;
	l->lost_noted = lost;
	l->rejected_noted = bad;
	l->unanswered_noted = unanswered;
}

/* True when the alert starts or changes cause. */
static bool listener_note_key(struct listener *l, const struct udp_stats *st, double now)
{
	uint64_t bad = st->rejected[UDP_BAD_TAG], none = st->rejected[UDP_NO_TAG];
	uint64_t grew_bad = bad - l->key_bad_seen, grew_none = none - l->key_none_seen;
	if (grew_bad || grew_none) {
		l->key_cause = grew_bad >= grew_none ? UDP_BAD_TAG : UDP_NO_TAG;
		l->key_rejected_at = now;
	}
	l->key_bad_seen = bad;
	l->key_none_seen = none;
	bool was = l->alert[0] != '\0';
	enum udp_reason cause_was = l->key_cause_shown;
	uint64_t n = bad + none, rej = udp_rejected_total(st);
	uint64_t accepted = st->datagrams > rej ? st->datagrams - rej : 0;
	if (n == 0 || (accepted > 0 && now > l->key_rejected_at + KEY_ALERT_RECENT)) {
		l->alert[0] = '\0';
		return false;
	}
	char count[64];
	if (accepted == 0 && n == st->datagrams)
		snprintf(count, sizeof(count), "all %llu", (unsigned long long)n);
	else
		snprintf(count, sizeof(count), "%llu of %llu", (unsigned long long)n,
			 (unsigned long long)st->datagrams);
	snprintf(l->alert, sizeof(l->alert), "%s datagrams rejected: %s", count,
		 l->key_cause == UDP_BAD_TAG ? "wrong key (bad_tag); re-export ROASTOP_KEY"
					     : "no key (no_tag); export ROASTOP_KEY");
	l->key_cause_shown = l->key_cause;
	return !was || cause_was != l->key_cause;
}

static bool listener_tick(void *src)
{
	struct listener *l = src;
	double now = clock_mono();
	bool loss_due = now >= l->loss_noted_at + LOSS_NOTE_EVERY;
	bool key_due = now >= l->key_checked_at + KEY_ALERT_CHECK;
	if (!loss_due && !key_due)
		return false;
	struct udp_stats st;
	udp_get_stats(l->u, &st);
	if (loss_due)
		listener_note_loss(l, &st, now);
	if (!key_due)
		return false;
	l->key_checked_at = now;
	return listener_note_key(l, &st, now);
}

static const char *listener_alert(const void *src)
{
	const struct listener *l = src;
	return l->alert[0] ? l->alert : NULL;
}

static const char *listener_hint(const void *src)
{
	return ((const struct listener *)src)->hint;
}

static bool listener_address(const void *src, struct sockaddr_storage *addr, socklen_t *len)
{
	*len = sizeof(*addr);
	return getsockname(udp_fd(((const struct listener *)src)->u), (struct sockaddr *)addr,
			   len) == 0;
}

/* What is queued is applied, in a few drains: a flood cannot hold the exit. */
static void listener_finish(void *src, double now)
{
	for (int i = 0; i < 8; i++)
		if (listener_drain(src, now) < UDP_DRAIN_MAX)
			return;
}

static void listener_stats(const void *src, struct source_stats *out)
{
	udp_source_stats(((const struct listener *)src)->u, out);
}

static void listener_close(void *src)
{
	struct listener *l = src;
	udp_close(l->u);
	free(l);
}

/* A datagram a worker sent through its Dask connection: the same engine,
 * so one sender's numbers are one sequence whichever path each took.
 * Another port's is another roastop's. */
static bool listener_take(void *src, const char *buf, size_t len, int port, double now)
{
	struct listener *l = src;
	if (l->port != port) /* 0 when unknown: no payload's port */
		return false;
	udp_process_path(l->u, buf, len, now, UDP_PATH_DASK, l->deliver, l->ctx);
	return true;
}

static const struct source_senders listener_senders = {
	.hint = listener_hint,
	.address = listener_address,
	.take = listener_take,
};

static const struct source_watch listener_watch = {
	.alert = listener_alert,
	.tick = listener_tick,
};

static const struct source_run_hooks listener_hooks = {
	.finish = listener_finish,
};

const struct source_ops listener_source = {
	.name = "udp",
	.wanted = listener_wanted,
	.open = listener_open,
	.pollfds = listener_pollfds,
	.dispatch = listener_dispatch,
	.timeout = listener_timeout,
	.stats = listener_stats,
	.role = SOURCE_LISTENER,
	.fields = udp_source_fields,
	.close = listener_close,
	.senders = &listener_senders,
	.watch = &listener_watch,
	.run_hooks = &listener_hooks,
};
