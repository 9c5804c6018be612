/* The datagram engine: one non-blocking socket read with recvmmsg in
 * batches, and every datagram's framing, tag, decoding and sequence. */
#include "roastop/udp.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "roastop/event_datagram.h"
#include "roastop/strbuf.h"
#include "roastop/strmap.h"

#define BATCH 64
#define BATCHES_PER_DRAIN (UDP_DRAIN_MAX / BATCH) /* then back to the loop: the screen stays live */
#define MAGIC "RTP2"
#define MAGIC_LEN 4
#define MAGIC_OLD "RTP1 " /* the JSON datagrams of an older emitter */
#define HEADER_MAX (MAGIC_LEN + 1 + AUTH_TAG_LEN)
#define REPORT_COLUMNS_MAX (256u * 1024u) /* bytes of column names kept per report */

static const char *const reason_names[UDP__COUNT] = {
	[UDP_BAD_MAGIC] = "bad_magic", [UDP_NO_TAG] = "no_tag",	    [UDP_BAD_TAG] = "bad_tag",
	[UDP_DUPLICATE] = "duplicate", [UDP_STALE] = "stale",	    [UDP_TOO_LARGE] = "too_large",
	[UDP_NO_SENDER] = "no_sender", [UDP_SENDERS_FULL] = "senders_full",
	[UDP_SEQ_JUMP] = "seq_jump",   [UDP_VERSION] = "version",
};

/* Missing is counted from base: 0, or where the sender's numbers started
 * (heard first far from 0, or after a confirmed jump); missing_before keeps
 * what was missing before a jump. */
struct sender {
	uint64_t max_seq;
	uint64_t received; /* distinct sequence numbers since base */
	uint64_t base, missing_before;
	uint64_t jump; /* a rejected jump's seq + 1, awaiting confirmation; 0 = none */
	uint64_t window[UDP_WINDOW / 64];
	uint8_t path; /* enum udp_path of its latest accepted datagram */
};

struct pending_report {
	bool used;
	char key[352]; /* sender + report_id */
	uint64_t parts_seen;
	int parts;
	struct ev_report head; /* part 0's numbers; run_id points into run_id */
	char run_id[EVENT_MAX_STRING + 1];
	struct strbuf columns; /* NUL-separated */
	size_t n_columns;
	uint64_t age;
};

struct udp {
	int fd;
	bool auth;
	struct auth_mac *mac;
	struct auth_key key; /* signs acks */
	double ack_tokens, ack_at; /* the ack rate limit's bucket, and when it was filled */
	char address[300];
	struct strmap senders;
	/* the last datagram's sender: a batch mostly comes from one, and its
	 * map key costs a formatted print */
	bool last_valid;
	char last_host[sizeof(((struct event_envelope *)0)->host)];
	double last_pid, last_instance;
	size_t last_index;
	struct udp_stats st;
	struct event ev, report_ev;
	struct pending_report pending[UDP_MAX_PENDING_REPORTS];
	uint64_t report_clock;
	char (*bufs)[UDP_MAX_DATAGRAM + 1];
	double nap; /* after a small drain, from the buffer the kernel granted */
};

static const char *udp_path_name(enum udp_path p)
{
	return p == UDP_PATH_DASK ? "dask" : "udp";
}

const char *udp_reason_name(enum udp_reason r)
{
	return (r >= 0 && r < UDP__COUNT) ? reason_names[r] : "unknown";
}

struct udp *udp_new(const struct auth_key *key)
{
	struct udp *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->fd = -1;
	u->auth = key != NULL;
	if (key && !(u->mac = auth_mac_new(key))) {
		free(u);
		return NULL;
	}
	if (key)
		u->key = *key;
	u->ack_tokens = UDP_ACK_BURST;
	u->ack_at = NAN;
	strmap_init(&u->senders, sizeof(struct sender), UDP_MAX_SENDERS);
	event_init(&u->ev);
	event_init(&u->report_ev);
	for (size_t i = 0; i < UDP_MAX_PENDING_REPORTS; i++)
		strbuf_init(&u->pending[i].columns);
	return u;
}

void udp_close(struct udp *u)
{
	if (!u)
		return;
	if (u->fd >= 0)
		close(u->fd);
	auth_mac_free(u->mac);
	OPENSSL_cleanse(&u->key, sizeof(u->key));
	strmap_free(&u->senders);
	event_free(&u->ev);
	event_free(&u->report_ev);
	for (size_t i = 0; i < UDP_MAX_PENDING_REPORTS; i++)
		strbuf_free(&u->pending[i].columns);
	free(u->bufs);
	free(u);
}

int udp_fd(const struct udp *u)
{
	return u->fd;
}

double udp_drain_nap(const struct udp *u, int drained)
{
	return drained < UDP_NAP_BELOW ? u->nap : 0;
}

static double nap_for(int fd)
{
	int granted = 0;
	socklen_t len = sizeof(granted);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &len) != 0 || granted <= 0)
		return 0;
	double holds = granted / (UDP_NAP_BURST * 2048.0);
	return holds < UDP_NAP ? holds : UDP_NAP;
}

const char *udp_address(const struct udp *u)
{
	return u->address;
}

/* ---- sequence numbers --------------------------------------------------- */

enum seq_outcome { SEQ_NEW, SEQ_LATE, SEQ_DUPLICATE, SEQ_STALE, SEQ_JUMP };

static bool bit_test(const struct sender *s, uint64_t seq)
{
	return s->window[(seq % UDP_WINDOW) / 64] >> (seq % 64) & 1;
}

static void bit_set(struct sender *s, uint64_t seq, bool on)
{
	uint64_t *w = &s->window[(seq % UDP_WINDOW) / 64], bit = 1ull << (seq % 64);
	*w = on ? *w | bit : *w & ~bit;
}

static uint64_t sender_missing(const struct sender *s)
{
	return s->missing_before + (s->max_seq + 1 - s->base - s->received);
}

/* A fresh window at seq: the sender's first datagram, or a confirmed jump.
 * Numbers below seq count as missing only when seq is near 0. */
static void seq_restart(struct sender *s, uint64_t seq, bool first)
{
	s->missing_before = first ? 0 : sender_missing(s);
	s->base = first && seq <= UDP_SEQ_JUMP_MAX ? 0 : seq;
	s->received = 0;
	s->jump = 0;
	memset(s->window, 0, sizeof(s->window));
}

/* One stray number never moves the window: a true jump is followed
 * within UDP_WINDOW. */
static bool jump_confirmed(struct sender *s, uint64_t seq)
{
	bool ok = s->jump && seq >= s->jump && seq - s->jump < UDP_WINDOW;
	if (!ok)
		s->jump = seq + 1;
	return ok;
}

/* The window holds the last UDP_WINDOW sequence numbers up to max_seq. */
static enum seq_outcome seq_check(struct sender *s, uint64_t seq, bool first)
{
	if (!first && seq > s->max_seq && seq - s->max_seq > UDP_SEQ_JUMP_MAX) {
		if (!jump_confirmed(s, seq))
			return SEQ_JUMP;
		/* the window restarts at the first jump, which was not applied:
		 * it counts as missing, and is taken if it comes again */
		uint64_t from = s->jump - 1;
		seq_restart(s, from, false);
		s->max_seq = from - 1;
	}
	if (first || seq > s->max_seq) {
		if (first)
			seq_restart(s, seq, true);
		else if (seq - s->max_seq >= UDP_WINDOW)
			memset(s->window, 0, sizeof(s->window));
		else
			for (uint64_t q = s->max_seq + 1; q < seq; q++)
				bit_set(s, q, false);
		s->max_seq = seq;
		bit_set(s, seq, true);
		s->received++;
		return SEQ_NEW;
	}
	if (s->max_seq - seq >= UDP_WINDOW)
		return SEQ_STALE;
	if (bit_test(s, seq))
		return SEQ_DUPLICATE;
	bit_set(s, seq, true);
	s->received++;
	if (seq < s->base)
		s->base = seq; /* a late one from before the first seen */
	return SEQ_LATE;
}

/* The sender's window: the last one again without a lookup, else through
 * the map (insertion-ordered: an index stays valid). */
static struct sender *sender_of(struct udp *u, const struct event_envelope *env, bool *added)
{
	*added = false;
	/* numbers compared bit for bit: -0 and 0 print to different keys */
	if (u->last_valid && memcmp(&u->last_pid, &env->pid, sizeof(env->pid)) == 0 &&
	    memcmp(&u->last_instance, &env->instance, sizeof(env->instance)) == 0 &&
	    strcmp(u->last_host, env->host) == 0)
		return strmap_val_at(&u->senders, u->last_index);
	char key[300];
	snprintf(key, sizeof(key), "%s\x1f%.0f\x1f%.0f", env->host, env->pid, env->instance);
	struct sender *s = strmap_upsert(&u->senders, key, added);
	if (!s)
		return NULL;
	u->last_valid = true;
	u->last_pid = env->pid;
	u->last_instance = env->instance;
	memcpy(u->last_host, env->host, sizeof(u->last_host));
	u->last_index = (size_t)((unsigned char *)s - u->senders.vals) / u->senders.val_size;
	return s;
}

static bool sequence_ok(struct udp *u, const struct event_envelope *env, enum udp_path path)
{
	bool added = false;
	struct sender *s = sender_of(u, env, &added);
	if (!s) {
		/* past UDP_MAX_SENDERS (or out of memory): without a window its
		 * replay could not be told from it */
		u->st.rejected[UDP_SENDERS_FULL]++;
		return false;
	}
	enum seq_outcome o = seq_check(s, (uint64_t)env->seq, added);
	if (o == SEQ_NEW || o == SEQ_LATE)
		s->path = (uint8_t)path;
	switch (o) {
	case SEQ_NEW: return true;
	case SEQ_LATE: u->st.out_of_order++; return true;
	case SEQ_DUPLICATE: u->st.rejected[UDP_DUPLICATE]++; return false;
	case SEQ_STALE: u->st.rejected[UDP_STALE]++; return false;
	case SEQ_JUMP: u->st.rejected[UDP_SEQ_JUMP]++; return false;
	}
	return false;
}

/* ---- split reports ------------------------------------------------------ */

static struct pending_report *pending_find(struct udp *u, const char *key)
{
	struct pending_report *free_slot = NULL, *oldest = &u->pending[0];
	for (size_t i = 0; i < UDP_MAX_PENDING_REPORTS; i++) {
		struct pending_report *p = &u->pending[i];
		if (p->used && strcmp(p->key, key) == 0)
			return p;
		if (!p->used && !free_slot)
			free_slot = p;
		if (p->used && p->age < oldest->age)
			oldest = p;
	}
	struct pending_report *p = free_slot ? free_slot : oldest;
	if (p->used)
		u->st.reports_incomplete++; /* evicted before it was whole */
	strbuf_reset(&p->columns);
	struct strbuf keep = p->columns;
	memset(p, 0, sizeof(*p));
	p->columns = keep;
	p->used = true;
	snprintf(p->key, sizeof(p->key), "%s", key);
	p->age = ++u->report_clock;
	return p;
}

static void pending_add(struct pending_report *p, const struct event_envelope *env,
			const struct ev_report *r)
{
	p->parts = env->parts;
	p->parts_seen |= 1ull << env->part;
	if (env->part == 0) {
		p->head = (struct ev_report){ .bytesread = r->bytesread, .entries = r->entries,
					      .processtime = r->processtime, .chunks = r->chunks };
		if (r->run_id) {
			snprintf(p->run_id, sizeof(p->run_id), "%s", r->run_id);
			p->head.run_id = p->run_id;
		}
	}
	for (size_t i = 0; i < r->n_columns; i++) {
		size_t len = strlen(r->columns[i]);
		if (p->columns.len + len + 1 > REPORT_COLUMNS_MAX)
			break;
		strbuf_append(&p->columns, r->columns[i], len + 1); /* with its NUL */
		p->n_columns++;
	}
}

/* Every part arrived: one report event. */
static void pending_deliver(struct udp *u, struct pending_report *p, double now,
			    event_deliver_fn fn, void *ctx)
{
	struct event *ev = &u->report_ev;
	event_reset(ev);
	ev->type = EV_REPORT;
	ev->t = now;
	ev->u.report = p->head; /* its run_id, like the columns, in p: p outlives fn */
	const char **cols = arena_alloc(&ev->mem, (p->n_columns + 1) * sizeof(*cols));
	const char *c = p->columns.data;
	for (size_t i = 0; cols && i < p->n_columns; i++, c += strlen(c) + 1)
		cols[i] = c;
	ev->u.report.columns = cols;
	ev->u.report.n_columns = cols ? p->n_columns : 0;
	u->st.applied++; /* before: the counters the app takes during fn count it */
	fn(ctx, ev);
	p->used = false;
}

static void report_part(struct udp *u, const struct event_envelope *env, double now,
			event_deliver_fn fn, void *ctx)
{
	if (env->parts < 1 || env->parts > 64 || env->part >= env->parts) {
		reject_count(&u->st.json, DEC_INCONSISTENT);
		return;
	}
	char key[352];
	snprintf(key, sizeof(key), "%s\x1f%.0f\x1f%.0f\x1f%s", env->host, env->pid, env->instance,
		 env->report_id);
	struct pending_report *p = pending_find(u, key);
	pending_add(p, env, &u->ev.u.report);
	uint64_t all = env->parts == 64 ? ~0ull : (1ull << env->parts) - 1;
	if (p->parts_seen == all)
		pending_deliver(u, p, now, fn, ctx);
}

/* ---- one datagram -------------------------------------------------------- */

/* "RTP2" <flags> [<32-byte tag>] <body>: the body, or NULL. */
static const char *frame_open(struct udp *u, const char *buf, size_t len, size_t *body_len)
{
	unsigned char flags = len > MAGIC_LEN && memcmp(buf, MAGIC, MAGIC_LEN) == 0
				      ? (unsigned char)buf[MAGIC_LEN]
				      : 0xff;
	size_t header = MAGIC_LEN + 1 + (flags == 1 ? AUTH_TAG_LEN : 0);
	if (flags > 1 || len < header) {
		bool old = len >= sizeof(MAGIC_OLD) - 1 &&
			   memcmp(buf, MAGIC_OLD, sizeof(MAGIC_OLD) - 1) == 0;
		u->st.rejected[old ? UDP_VERSION : UDP_BAD_MAGIC]++;
		return NULL;
	}
	if (u->auth && flags == 0) {
		u->st.rejected[UDP_NO_TAG]++;
		return NULL;
	}
	const char *body = buf + header;
	*body_len = len - header;
	if (u->auth && !auth_mac_ok_raw(u->mac, body, *body_len,
					(const uint8_t *)buf + MAGIC_LEN + 1)) {
		u->st.rejected[UDP_BAD_TAG]++;
		return NULL;
	}
	return body;
}

/* ---- hello and acknowledgement ----------------------------------------- */

/* A token, when the bucket has one; a clock going back refills nothing. */
static bool ack_token(struct udp *u, double now)
{
	if (isfinite(u->ack_at) && now > u->ack_at)
		u->ack_tokens = fmin(UDP_ACK_BURST, u->ack_tokens + (now - u->ack_at) * UDP_ACK_RATE);
	if (!isfinite(u->ack_at) || now > u->ack_at)
		u->ack_at = now;
	if (u->ack_tokens < 1)
		return false;
	u->ack_tokens -= 1;
	return true;
}

/* An ack's frame under the listener's key: its length, 0 when it cannot
 * be made. */
static size_t ack_frame(const struct udp *u, const char *nonce, char *out, size_t size)
{
	struct event_envelope env;
	struct strbuf body;
	event_envelope_clear(&env);
	env.kind = EVENT_DATAGRAM_ACK;
	snprintf(env.nonce, sizeof(env.nonce), "%s", nonce);
	strbuf_init(&body);
	size_t header = MAGIC_LEN + 1 + (u->auth ? AUTH_TAG_LEN : 0), n = 0;
	if (event_datagram_encode(NULL, &env, &body) == 0 && header + body.len <= size) {
		memcpy(out, MAGIC, MAGIC_LEN);
		out[MAGIC_LEN] = u->auth ? 1 : 0;
		if (u->auth)
			auth_tag_raw(&u->key, body.data, body.len, (uint8_t *)out + MAGIC_LEN + 1);
		memcpy(out + header, body.data, body.len);
		n = header + body.len;
	}
	strbuf_free(&body);
	return n;
}

/* The ack goes to the hello's source, never larger than the hello (no
 * amplification), within the rate limit, never waiting. */
static void hello_answer(struct udp *u, const char *nonce, size_t hello_len, double now,
			 const struct sockaddr *src, socklen_t srclen)
{
	u->st.hellos++;
	char ack[HEADER_MAX + EVENT_DATAGRAM_NONCE_MAX + 8];
	size_t n = ack_frame(u, nonce, ack, sizeof(ack));
	if (!n || n > hello_len || !ack_token(u, now)) {
		u->st.acks_refused++;
		return;
	}
	if (!src || u->fd < 0 ||
	    sendto(u->fd, ack, n, MSG_DONTWAIT | MSG_NOSIGNAL, src, srclen) != (ssize_t)n) {
		u->st.acks_failed++;
		return;
	}
	u->st.acks_sent++;
}

enum datagram_kind { DG_REJECTED, DG_EVENT, DG_HELLO };

/* The event (or a hello's nonce) and envelope of one datagram; DG_REJECTED
 * is counted. An ack (roastop's own answer) is no message. */
static enum datagram_kind datagram_decode(struct udp *u, const char *buf, size_t len, double now,
					  struct event_envelope *env)
{
	size_t body_len = 0;
	const char *body = frame_open(u, buf, len, &body_len);
	if (!body)
		return DG_REJECTED;
	enum decode_error e = event_datagram_decode((const unsigned char *)body, body_len, now,
						    &u->ev, env);
	if (!e && env->kind == EVENT_DATAGRAM_ACK)
		e = DEC_UNKNOWN_TYPE;
	if (e) {
		reject_count(&u->st.json, e);
		return DG_REJECTED;
	}
	return env->kind == EVENT_DATAGRAM_HELLO ? DG_HELLO : DG_EVENT;
}

static void process(struct udp *u, const char *buf, size_t len, double now, enum udp_path path,
		    const struct sockaddr *src, socklen_t srclen, event_deliver_fn fn, void *ctx)
{
	u->st.datagrams++;
	u->st.datagrams_by_path[path]++;
	u->st.bytes += len;
	if (len > UDP_MAX_DATAGRAM) {
		u->st.rejected[UDP_TOO_LARGE]++;
		return;
	}
	struct event_envelope env;
	enum datagram_kind kind = datagram_decode(u, buf, len, now, &env);
	if (kind == DG_REJECTED)
		return;
	if (!env.host[0] || !env.has_pid || (!env.has_seq && kind != DG_HELLO)) {
		u->st.rejected[UDP_NO_SENDER]++;
		return;
	}
	if (kind == DG_HELLO) { /* outside the sequence: it takes no number */
		hello_answer(u, env.nonce, len, now, src, srclen);
		return;
	}
	if (!sequence_ok(u, &env, path))
		return;
	if (u->ev.type == EV_REPORT && env.report_id[0]) {
		report_part(u, &env, now, fn, ctx);
		return;
	}
	u->st.applied++; /* before: the counters the app takes during fn count it */
	fn(ctx, &u->ev);
}

void udp_process_from(struct udp *u, const char *buf, size_t len, double now,
		      const struct sockaddr *src, socklen_t srclen, event_deliver_fn fn, void *ctx)
{
	process(u, buf, len, now, UDP_PATH_UDP, src, srclen, fn, ctx);
}

void udp_process_path(struct udp *u, const char *buf, size_t len, double now,
		      enum udp_path path, event_deliver_fn fn, void *ctx)
{
	process(u, buf, len, now, path == UDP_PATH_DASK ? UDP_PATH_DASK : UDP_PATH_UDP, NULL, 0,
		fn, ctx);
}

void udp_process(struct udp *u, const char *buf, size_t len, double now, event_deliver_fn fn,
		 void *ctx)
{
	udp_process_from(u, buf, len, now, NULL, 0, fn, ctx);
}

void udp_get_stats(const struct udp *u, struct udp_stats *out)
{
	*out = u->st;
	out->senders = u->senders.count;
	out->missing = 0;
	for (size_t i = 0; i < u->senders.count; i++) {
		const struct sender *s = strmap_val_at(&u->senders, i);
		out->missing += sender_missing(s);
		out->senders_by_path[s->path < UDP_PATH__COUNT ? s->path : UDP_PATH_UDP]++;
	}
}

/* ---- the socket ----------------------------------------------------------- */

static void buffer_size(int fd, int rcvbuf)
{
	int want = rcvbuf > 0 ? rcvbuf : 8 << 20;
	/* FORCE passes rmem_max when permitted; otherwise the plain request */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
}

static void address_of(struct udp *u)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[256], port[16];
	if (getsockname(u->fd, (struct sockaddr *)&ss, &sl) != 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(u->address, sizeof(u->address), "?");
		return;
	}
	if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
		gethostname(host, sizeof(host)); /* a wildcard: say where to send */
	if (strchr(host, ':'))
		snprintf(u->address, sizeof(u->address), "[%s]:%s", host, port);
	else
		snprintf(u->address, sizeof(u->address), "%s:%s", host, port);
}

static int bind_first(struct udp *u, const char *host, int port, char *err, size_t errsz)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res = NULL;
	char service[16];
	snprintf(service, sizeof(service), "%d", port);
	int rc = getaddrinfo(host[0] ? host : NULL, service, &hints, &res);
	if (rc != 0) {
		snprintf(err, errsz, "--listen %s:%d: %s", host, port, gai_strerror(rc));
		errno = EINVAL;
		return -1;
	}
	int saved = 0;
	for (struct addrinfo *ai = res; ai && u->fd < 0; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			u->fd = fd;
			break;
		}
		saved = errno;
		if (fd >= 0)
			close(fd);
	}
	freeaddrinfo(res);
	if (u->fd < 0) {
		snprintf(err, errsz, "cannot listen on udp %s:%d: %s", host, port, strerror(saved));
		errno = saved;
		return -1;
	}
	return 0;
}

struct udp *udp_open(const char *host, int port, const struct auth_key *key, int rcvbuf,
		     char *err, size_t errsz)
{
	struct udp *u = udp_new(key);
	if (u)
		u->bufs = malloc(BATCH * sizeof(*u->bufs));
	if (!u || !u->bufs) {
		snprintf(err, errsz, "udp: out of memory");
		udp_close(u);
		errno = ENOMEM;
		return NULL;
	}
	if (bind_first(u, host, port, err, errsz) != 0) {
		int saved = errno; /* the caller may try another port (listener.c) */
		udp_close(u);
		errno = saved;
		return NULL;
	}
	buffer_size(u->fd, rcvbuf);
	u->nap = nap_for(u->fd);
	address_of(u);
	return u;
}

/* The kernel's drops (sk_drops) read once per drain with SO_MEMINFO: one
 * call instead of SO_RXQ_OVFL's control message per datagram, and it
 * includes drops after the last datagram that arrived. */
static void drops_read(struct udp *u)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);
	if (getsockopt(u->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 &&
	    len > SK_MEMINFO_DROPS * sizeof(mem[0]) && mem[SK_MEMINFO_DROPS] > u->st.kernel_drops)
		u->st.kernel_drops = mem[SK_MEMINFO_DROPS];
}

int udp_drain(struct udp *u, double now, event_deliver_fn fn, void *ctx)
{
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_storage from[BATCH]; /* where a hello is answered */
	int total = 0;
	for (int b = 0; b < BATCHES_PER_DRAIN; b++) {
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ u->bufs[i], UDP_MAX_DATAGRAM + 1 };
			msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1,
							   .msg_name = &from[i],
							   .msg_namelen = sizeof(from[i]) };
		}
		int n = recvmmsg(u->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				return -1;
			break;
		}
		for (int i = 0; i < n; i++) {
			size_t len = msgs[i].msg_len;
			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
				len = UDP_MAX_DATAGRAM + 1; /* counted too large */
			udp_process_from(u, u->bufs[i], len, now, (struct sockaddr *)&from[i],
					 msgs[i].msg_hdr.msg_namelen, fn, ctx);
		}
		total += n;
		if (n < BATCH)
			break;
	}
	drops_read(u);
	return total;
}

uint64_t udp_rejected_total(const struct udp_stats *st)
{
	uint64_t total = st->json.total;
	for (int r = 0; r < UDP__COUNT; r++)
		total += st->rejected[r];
	return total;
}

const struct source_field udp_source_fields[] = {
	SOURCE_FIELD(NULL, "datagrams", datagrams),
	SOURCE_FIELD(NULL, "bytes", bytes),
	SOURCE_FIELD(NULL, "applied", applied),
	SOURCE_FIELD(NULL, "missing", missing),
	SOURCE_FIELD(NULL, "kernel_drops", kernel_drops),
	SOURCE_FIELD("senders_by_path", "udp", senders_direct),
	SOURCE_FIELD("senders_by_path", "dask", senders_relayed),
	SOURCE_FIELD("rejected", "senders_full", senders_full),
	{ 0 },
};

void udp_source_stats(const struct udp *u, struct source_stats *out)
{
	struct udp_stats st;
	udp_get_stats(u, &st);
	udp_stats_to_source(&st, udp_address(u), out);
}

void udp_stats_to_source(const struct udp_stats *st, const char *address,
			 struct source_stats *out)
{
	out->state_key = "listen";
	snprintf(out->state, sizeof(out->state), "%s", address);
	const struct source_counter c[] = {
		{ NULL, "datagrams", st->datagrams },	      { NULL, "applied", st->applied },
		{ NULL, "bytes", st->bytes },		      { NULL, "senders", st->senders },
		{ NULL, "missing", st->missing },	      { NULL, "out_of_order", st->out_of_order },
		{ NULL, "kernel_drops", st->kernel_drops },
		{ NULL, "reports_incomplete", st->reports_incomplete },
		{ NULL, "hellos", st->hellos },		      { NULL, "acks_sent", st->acks_sent },
		{ NULL, "acks_refused", st->acks_refused }, { NULL, "acks_failed", st->acks_failed },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		source_count(out, c[i].group, c[i].name, c[i].value);
	for (int p = 0; p < UDP_PATH__COUNT; p++)
		source_count(out, "senders_by_path", udp_path_name(p), st->senders_by_path[p]);
	for (int p = 0; p < UDP_PATH__COUNT; p++)
		source_count(out, "datagrams_by_path", udp_path_name(p), st->datagrams_by_path[p]);
	/* one key per reason: a body over the decoder's bound is a datagram
	 * too large as well (a JSON object may not hold a name twice) */
	for (int r = 0; r < UDP__COUNT; r++)
		source_count(out, "rejected", udp_reason_name(r),
			     st->rejected[r] +
				     (r == UDP_TOO_LARGE ? st->json.by_reason[DEC_TOO_LARGE] : 0));
	for (int e = DEC_OK + 1; e < DEC__COUNT; e++)
		if (e != DEC_TOO_LARGE)
			source_count(out, "rejected", decode_error_name(e), st->json.by_reason[e]);
	source_count(out, "rejected", "total", udp_rejected_total(st));
}
