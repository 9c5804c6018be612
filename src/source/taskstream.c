/* The Dask scheduler's task stream: its /eventstream WebSocket (fed by
 * distributed's WebsocketPlugin), one JSON message per startstop of every
 * finished task. libwebsockets does the protocol, driven from roastop's
 * poll() loop, never blocking; a lost stream is retried with backoff.
 * Messages too large or not of the expected shape are refused and counted. */
#include "roastop/taskstream.h"

#include "roastop/clock.h"
#include "roastop/source.h"
#include "roastop/strutil.h"
#include "roastop/taskcheck.h"
#include "roastop/timer.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <libwebsockets.h>

#define TASKSTREAM_MAX_FDS 8
/* A transition message is ~500 bytes; a task with many transfers a few KiB. */
#define TASKSTREAM_MAX_MESSAGE (64u << 10)
#define TASKSTREAM_BACKOFF_MAX 30.0

struct taskstream_stats {
	uint64_t connects, disconnects; /* streams opened; lost or refused */
	uint64_t messages, bytes, tasks, too_large;
	uint64_t rejected_by[TSP__COUNT];
	uint64_t checks; /* against the scheduler's count (taskcheck.h) */
	uint64_t behind; /* checks that found the stream behind: each reconnects */
	uint64_t missed; /* finished tasks it did not bring, at least: the counts' shortfall */
	uint64_t unchecked; /* /metrics fetches that gave nothing to check against */
	const char *state; /* "connecting", "connected", "lost" */
};

struct taskstream {
	struct lws_context *ctx;
	struct lws *wsi; /* NULL while not connected */
	event_deliver_fn fn;
	void *fn_ctx;
	char host[256], path[1024];
	int port;
	bool tls;
	struct pollfd fds[TASKSTREAM_MAX_FDS];
	size_t n_fds;
	unsigned failures; /* in a row, for the backoff */
	double retry_at; /* monotonic time of the next connect; 0: none due */
	bool connected, oversize; /* oversize: dropping the rest of a message */
	double now; /* the dispatch's wall clock, stamps events */
	char *buf;
	size_t len;
	uint64_t fragments; /* receive callbacks: the drain's sign of progress */
	bool behind; /* the last dispatch's reads stopped at their bound: more is buffered */
	struct event ev;
	struct taskstream_stats st;
	uint64_t computes; /* compute startstops delivered: what the check counts */
	struct taskcheck check;
	unsigned behind_streak; /* checks in a row that found it behind: the backoff */
};

static const char *const result_names[TSP__COUNT] = {
	[TSP_TASK] = "task",	     [TSP_OTHER] = "other", [TSP_ERR_JSON] = "json",
	[TSP_ERR_SHAPE] = "shape", [TSP_ERR_RANGE] = "range",	[TSP_ERR_TEXT] = "text",
};

static const char *taskstream_result_name(enum taskstream_result r)
{
	return (unsigned)r < TSP__COUNT ? result_names[r] : "?";
}

/* ---- the parser ---------------------------------------------------------- */

static bool ts_is_alpha_word(const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isalpha((unsigned char)w[i]))
			return false;
	return n > 0;
}

/* w[0..n) is want lower-case hex digits. */
static bool ts_is_hex(const char *w, size_t n, size_t want)
{
	return n == want && strspn(w, "0123456789abcdef") >= n;
}

/* A "<module.Class object at 0x...>" prefix: the class name. */
static void ts_object_name(char *out)
{
	char *s = out + strspn(out, "<>");
	size_t n = strcspn(s, " \t\n");
	while (n && s[n - 1] == '>')
		n--;
	s[n] = '\0';
	char *dot = strrchr(s, '.');
	memmove(out, dot ? dot + 1 : s, strlen(dot ? dot + 1 : s) + 1);
}

/* The first word, when it does not start with a letter: before its first
 * comma, stripped of _'()" (dask's strip). */
static size_t ts_first_word(const char *w, size_t n, char *out, size_t outsz)
{
	if (n && isalpha((unsigned char)w[0])) {
		size_t k = n < outsz - 1 ? n : outsz - 1;
		memcpy(out, w, k);
		out[k] = '\0';
		return k;
	}
	const char *strip = "_'()\"";
	size_t c = 0;
	while (c < n && w[c] != ',')
		c++;
	size_t a = 0;
	while (a < c && strchr(strip, w[a]))
		a++;
	while (c > a && strchr(strip, w[c - 1]))
		c--;
	size_t k = c - a < outsz - 1 ? c - a : outsz - 1;
	memcpy(out, w + a, k);
	out[k] = '\0';
	return k;
}

void taskstream_key_split(const char *key, char *out, size_t outsz)
{
	if (!key || !*key || outsz < 8) {
		snprintf(out, outsz, "Other");
		return;
	}
	const char *w = key;
	size_t n = strcspn(w, "-");
	size_t len = ts_first_word(w, n, out, outsz);
	while (w[n] == '-') {
		w += n + 1;
		n = strcspn(w, "-");
		if (!ts_is_alpha_word(w, n) || ts_is_hex(w, n, 8))
			break;
		if (len + 1 + n >= outsz)
			break;
		out[len++] = '-';
		memcpy(out + len, w, n);
		len += n;
		out[len] = '\0';
	}
	if (ts_is_hex(out, strlen(out), 32))
		snprintf(out, outsz, "data");
	else if (out[0] == '<')
		ts_object_name(out);
	if (!out[0])
		snprintf(out, outsz, "Other"); /* dask: an IndexError -> "Other" */
}

static const char *ts_str(struct event *ev, const cJSON *v)
{
	if (!cJSON_IsString(v) || strlen(v->valuestring) > EVENT_MAX_STRING)
		return NULL;
	return arena_strdup(&ev->mem, v->valuestring);
}

/* A key is a string or a tuple (a JSON array whose first item names it). */
static bool ts_key(struct event *ev, const cJSON *k, struct ev_task *t)
{
	const cJSON *first = cJSON_IsArray(k) ? cJSON_GetArrayItem(k, 0) : k;
	if (!cJSON_IsString(first))
		return false;
	char *text = cJSON_IsArray(k) ? cJSON_PrintUnformatted(k) : NULL;
	const char *shown = text ? text : first->valuestring;
	bool ok = strlen(shown) <= EVENT_MAX_STRING;
	char prefix[TASKSTREAM_PREFIX_LEN];
	taskstream_key_split(first->valuestring, prefix, sizeof(prefix));
	t->key = ok ? arena_strdup(&ev->mem, shown) : NULL;
	t->prefix = arena_strdup(&ev->mem, prefix);
	free(text);
	return t->key && t->prefix;
}

static bool ts_time(const cJSON *v, optnum *out)
{
	*out = cJSON_IsNumber(v) ? optnum_of(v->valuedouble) : optnum_none();
	return cJSON_IsNumber(v);
}

/* Every string of the task is UTF-8, as a recording's line must be. */
static bool ts_text_ok(const struct ev_task *t)
{
	const char *s[] = { t->key, t->worker, t->action, t->status };
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (s[i] && !strutil_utf8_ok((const unsigned char *)s[i]))
			return false;
	return true;
}

enum taskstream_result taskstream_task(struct event *ev, const struct taskstream_fields *f)
{
	struct ev_task *t = &ev->u.task;
	t->action = ts_str(ev, f->action);
	if (!f->key || !t->action || !ts_key(ev, f->key, t))
		return TSP_ERR_SHAPE;
	if (!ts_time(f->start, &t->start) || !ts_time(f->stop, &t->stop))
		return TSP_ERR_SHAPE;
	if (!event_task_times_ok(t))
		return TSP_ERR_RANGE;
	t->worker = ts_str(ev, f->worker);
	t->status = ts_str(ev, f->status);
	if (!ts_text_ok(t))
		return TSP_ERR_TEXT;
	ev->type = EV_TASK;
	return TSP_TASK;
}

static enum taskstream_result ts_transition(const cJSON *o, struct event *ev)
{
	const struct taskstream_fields f = {
		.key = cJSON_GetObjectItemCaseSensitive(o, "key"),
		.action = cJSON_GetObjectItemCaseSensitive(o, "action"),
		.start = cJSON_GetObjectItemCaseSensitive(o, "start"),
		.stop = cJSON_GetObjectItemCaseSensitive(o, "stop"),
		.worker = cJSON_GetObjectItemCaseSensitive(o, "worker"),
		.status = cJSON_GetObjectItemCaseSensitive(o, "status"),
	};
	return taskstream_task(ev, &f);
}

enum taskstream_result taskstream_parse(const char *buf, size_t len, struct event *ev)
{
	event_reset(ev);
	cJSON *o = cJSON_ParseWithLength(buf, len);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return TSP_ERR_JSON;
	}
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
	enum taskstream_result r = TSP_ERR_SHAPE;
	if (cJSON_IsString(name))
		r = strcmp(name->valuestring, "transition") ? TSP_OTHER : ts_transition(o, ev);
	cJSON_Delete(o);
	if (r != TSP_TASK)
		event_reset(ev);
	return r;
}

/* ---- the connection ------------------------------------------------------ */

static void ts_deliver(struct taskstream *ts)
{
	ts->st.messages++;
	ts->st.bytes += ts->len;
	enum taskstream_result r = taskstream_parse(ts->buf, ts->len, &ts->ev);
	if (r == TSP_TASK) {
		ts->ev.t = ts->now;
		ts->st.tasks++;
		ts->computes += ts->ev.u.task.action && !strcmp(ts->ev.u.task.action, "compute");
		ts->fn(ts->fn_ctx, &ts->ev);
	} else if (r != TSP_OTHER) {
		ts->st.rejected_by[r]++;
	}
}

static void ts_receive(struct taskstream *ts, struct lws *wsi, const void *in, size_t n)
{
	ts->fragments++;
	if (lws_is_first_fragment(wsi)) {
		ts->len = 0;
		ts->oversize = false;
	}
	if (!ts->oversize && ts->len + n > TASKSTREAM_MAX_MESSAGE) {
		ts->oversize = true;
		ts->st.too_large++;
	}
	if (!ts->oversize) {
		memcpy(ts->buf + ts->len, in, n);
		ts->len += n;
	}
	if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi) && !ts->oversize)
		ts_deliver(ts);
}

static void ts_lost(struct taskstream *ts)
{
	if (ts->connected)
		ts->st.disconnects++;
	ts->connected = false;
	ts->wsi = NULL;
	ts->failures++;
	unsigned n = ts->failures > ts->behind_streak ? ts->failures : ts->behind_streak;
	ts->retry_at = clock_mono() + timer_backoff(n, TASKSTREAM_BACKOFF_MAX);
	ts->st.state = "lost";
}

static void ts_fd_add(struct taskstream *ts, const struct lws_pollargs *pa)
{
	if (ts->n_fds < TASKSTREAM_MAX_FDS)
		ts->fds[ts->n_fds++] = (struct pollfd){ .fd = pa->fd, .events = (short)pa->events };
}

static void ts_fd_change(struct taskstream *ts, const struct lws_pollargs *pa, bool del)
{
	for (size_t i = 0; i < ts->n_fds; i++) {
		if (ts->fds[i].fd != pa->fd)
			continue;
		if (del)
			ts->fds[i] = ts->fds[--ts->n_fds];
		else
			ts->fds[i].events = (short)pa->events;
		return;
	}
}

static int ts_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		       size_t len)
{
	(void)user;
	struct taskstream *ts = lws_context_user(lws_get_context(wsi));
	switch (reason) {
	case LWS_CALLBACK_ADD_POLL_FD: ts_fd_add(ts, in); break;
	case LWS_CALLBACK_DEL_POLL_FD: ts_fd_change(ts, in, true); break;
	case LWS_CALLBACK_CHANGE_MODE_POLL_FD: ts_fd_change(ts, in, false); break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		ts->connected = true;
		ts->failures = 0;
		taskcheck_reset(&ts->check); /* a new plugin: this connection counts from here */
		ts->st.connects++;
		ts->st.state = "connected";
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE: ts_receive(ts, wsi, in, len); break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (wsi == ts->wsi)
			ts_lost(ts);
		break;
	default: break;
	}
	return 0;
}

static const struct lws_protocols ts_protocols[] = {
	{ "roastop-taskstream", ts_callback, 0, 4096, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

static void ts_connect(struct taskstream *ts)
{
	struct lws_client_connect_info ci;
	memset(&ci, 0, sizeof(ci));
	ci.context = ts->ctx;
	ci.address = ts->host;
	ci.port = ts->port;
	ci.path = ts->path;
	ci.host = ts->host;
	ci.origin = ts->host;
	ci.ssl_connection = ts->tls ? LCCSCF_USE_SSL : 0;
	ci.protocol = NULL;
	ci.pwsi = &ts->wsi;
	ts->retry_at = 0;
	ts->st.state = "connecting";
	if (!lws_client_connect_via_info(&ci))
		ts_lost(ts);
}

/* http(s)://host[:port][/base] + prefix + /eventstream */
static bool ts_parse_url(struct taskstream *ts, const char *url, const char *prefix)
{
	const char *u = url;
	if (!strncmp(u, "https://", 8)) {
		ts->tls = true;
		u += 8;
	} else if (!strncmp(u, "http://", 7)) {
		u += 7;
	} else {
		return false;
	}
	size_t hn = strcspn(u, ":/");
	if (!hn || hn >= sizeof(ts->host))
		return false;
	memcpy(ts->host, u, hn);
	ts->port = ts->tls ? 443 : 80;
	u += hn;
	if (*u == ':') {
		char *end;
		long p = strtol(u + 1, &end, 10);
		if (p <= 0 || p > 65535)
			return false;
		ts->port = (int)p;
		u = end;
	}
	const char *pre = prefix ? prefix : "";
	int n = snprintf(ts->path, sizeof(ts->path), "/%s/%s/eventstream", u, pre);
	if (n < 0 || (size_t)n >= sizeof(ts->path))
		return false;
	char *w = ts->path; /* collapse the doubled slashes of empty parts */
	for (const char *r = ts->path; *r; r++)
		if (*r != '/' || w == ts->path || w[-1] != '/')
			*w++ = *r;
	*w = '\0';
	return true;
}

static void taskstream_close(struct taskstream *ts)
{
	if (!ts)
		return;
	if (ts->ctx)
		lws_context_destroy(ts->ctx);
	if (ts->buf)
		event_free(&ts->ev);
	free(ts->buf);
	free(ts);
}

static struct taskstream *taskstream_open(const char *url, const char *prefix,
					  event_deliver_fn fn, void *ctx, char *err, size_t errsz)
{
	struct taskstream *ts = calloc(1, sizeof(*ts));
	if (!ts || !(ts->buf = malloc(TASKSTREAM_MAX_MESSAGE)) || !ts_parse_url(ts, url, prefix)) {
		snprintf(err, errsz, "task stream: cannot use '%s'", url);
		taskstream_close(ts);
		return NULL;
	}
	ts->fn = fn;
	ts->fn_ctx = ctx;
	event_init(&ts->ev);
	lws_set_log_level(0, NULL);
	struct lws_context_creation_info ci;
	memset(&ci, 0, sizeof(ci));
	ci.port = CONTEXT_PORT_NO_LISTEN;
	ci.protocols = ts_protocols;
	ci.user = ts;
	ci.options = ts->tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0;
	ts->ctx = lws_create_context(&ci);
	if (!ts->ctx) {
		snprintf(err, errsz, "task stream: libwebsockets could not start");
		taskstream_close(ts);
		return NULL;
	}
	ts->retry_at = clock_mono(); /* the first connect, from the loop */
	ts->st.state = "connecting";
	return ts;
}

static size_t taskstream_pollfds(const struct taskstream *ts, struct pollfd *out, size_t max)
{
	/* a libwebsockets built without external poll (Debian's) never tells
	 * its descriptors: the connection's own, else the stream waits for the
	 * 1 s timer, and a task's receive time, the clock its run is told by
	 * (session.c), lags by up to a second */
	int fd = !ts->n_fds && ts->wsi && max ? lws_get_socket_fd(ts->wsi) : -1;
	if (fd >= 0) {
		out[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
		return 1;
	}
	size_t n = ts->n_fds < max ? ts->n_fds : max;
	memcpy(out, ts->fds, n * sizeof(*out));
	return n;
}

/* Reads what is buffered, a receive buffer (4 KiB) a pass, at most
 * `passes`: whether it stopped at the bound (more may be there). */
static bool ts_pump(struct taskstream *ts, int passes)
{
	for (int i = 0; i < passes && ts->wsi; i++) {
		uint64_t before = ts->fragments;
		lws_service(ts->ctx, -1);
		if (ts->fragments == before && i > 0)
			return false;
	}
	return ts->wsi != NULL;
}

/* Passes a dispatch reads (256 KiB): libwebsockets keeps what it read off
 * the socket in a buffer poll does not see, and hands 4 KiB a service. */
#define TASKSTREAM_DISPATCH_PASSES 64

static void taskstream_dispatch(struct taskstream *ts, const struct pollfd *pfd, size_t n,
				double now)
{
	ts->now = now;
	bool ready = false;
	for (size_t i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		struct lws_pollfd p = { .fd = pfd[i].fd, .events = pfd[i].events,
					.revents = pfd[i].revents };
		lws_service_fd(ts->ctx, &p);
		ready = true;
	}
	/* lws's timers and forced service: a poll of its own with no wait */
	if (!ready || lws_service_adjust_timeout(ts->ctx, 1, 0) == 0)
		lws_service(ts->ctx, -1);
	ts->behind = ts_pump(ts, TASKSTREAM_DISPATCH_PASSES);
	if (!ts->wsi && ts->retry_at > 0 && clock_mono() >= ts->retry_at)
		ts_connect(ts);
}

static void taskstream_drain(struct taskstream *ts, double now)
{
	ts->now = now;
	ts_pump(ts, 256); /* up to 1 MiB */
}

static bool taskstream_connected(const struct taskstream *ts)
{
	return ts->connected && ts->wsi;
}

/* The scheduler's count (taskcheck_total) against the stream: the tasks it
 * missed; when some, it is dropped and reconnects after a backoff that grows
 * while it keeps falling behind. */
static uint64_t taskstream_check(struct taskstream *ts, double total)
{
	if (!taskstream_connected(ts))
		return 0;
	ts->st.checks++;
	bool brought = ts->check.conn.based && ts->computes > ts->check.conn.base_stream;
	uint64_t missed = taskcheck_observe(&ts->check, total, ts->computes);
	ts->st.missed = taskcheck_missed(&ts->check);
	if (!missed) {
		if (brought)
			ts->behind_streak = 0;
		return 0;
	}
	ts->st.behind++;
	ts->behind_streak++;
	/* closed at its next service: CLIENT_CLOSED, then ts_lost's backoff */
	lws_set_timeout(ts->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	return missed;
}

static int taskstream_timeout_ms(struct taskstream *ts)
{
	int ms = ts->behind ? 0 : lws_service_adjust_timeout(ts->ctx, 1000, 0);
	if (!ts->wsi && ts->retry_at > 0) {
		double wait = (ts->retry_at - clock_mono()) * 1e3;
		int w = wait <= 0 ? 0 : (int)wait + 1;
		ms = w < ms ? w : ms;
	}
	return ms;
}

/* ---- the source (source.h) ---- */

/* /eventstream is opened once the poller has answered without the
 * collector's route, and closed while the route brings the task records
 * (dask_tasks.c): the route reads the scheduler's TaskStreamPlugin buffer,
 * which costs the scheduler nothing more, and no reader takes from another. */
struct taskstream_source {
	struct taskstream *ts; /* NULL while the stream is not wanted */
	const char *url, *prefix; /* the dashboard's, --dashboard-prefix */
	event_deliver_fn deliver;
	struct taskcheck_fetch *check; /* NULL: curl could not start, nothing checked */
	bool headless;
	bool routed, heard; /* the route brings the tasks; the poller has answered */
	double now; /* the latest event's time: stamps what a closing stream drains */
	/* times the route took the tasks over: counted with the connects (a
	 * feed never connected measured nothing: its counts are null) */
	uint64_t handovers;
	const char *told; /* the state last said on stderr */
	double due_at; /* monotonic: libwebsockets' next service (its timers, a retry) */
	double check_at; /* monotonic: the next check's fetch */
	double interval; /* --interval: a check a poll */
	void (*note)(void *ctx, const char *text);
	void *ctx;
	char alert[192]; /* "" while the stream never fell behind */
};

static bool tss_wanted(const struct app_config *cfg)
{
	return !cfg->replay_path && cfg->task_stream && cfg->scheduler_url;
}

static void *tss_open(const struct source_env *env, char *err, size_t errsz)
{
	struct taskstream_source *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errsz, "task stream: out of memory");
		return NULL;
	}
	s->url = env->cfg->scheduler_url;
	s->prefix = env->cfg->dashboard_prefix;
	s->deliver = env->deliver;
	s->ctx = env->ctx;
	/* the address checked now: a bad one stops roastop at its start */
	struct taskstream *probe = taskstream_open(s->url, s->prefix, s->deliver, s->ctx, err, errsz);
	if (!probe) {
		free(s);
		return NULL;
	}
	taskstream_close(probe);
	s->check = taskcheck_fetch_open(env->cfg);
	s->headless = env->cfg->headless;
	s->due_at = -1;
	s->check_at = clock_mono();
	s->interval = env->cfg->interval;
	s->note = env->note;
	return s;
}

/* Opens the stream when the poller has answered and the route does not
 * bring the tasks; closes it when the route does. */
static void tss_want(struct taskstream_source *s)
{
	bool want = s->heard && !s->routed;
	if (want && !s->ts) {
		char err[200];
		s->ts = taskstream_open(s->url, s->prefix, s->deliver, s->ctx, err, sizeof(err));
		s->due_at = s->check_at = clock_mono(); /* the first connect */
	} else if (!want && s->ts) {
		/* what the scheduler wrote before the route's cursor was taken */
		taskstream_drain(s->ts, s->now);
		taskstream_close(s->ts);
		s->ts = NULL;
		s->due_at = -1;
		s->told = NULL;
	}
}

static void tss_on_event(void *src, const struct event *ev)
{
	struct taskstream_source *s = src;
	s->now = ev->t;
	if (ev->type != EV_STATUS || !ev->u.status.source)
		return;
	bool poller = !strcmp(ev->u.status.source, source_role_name(SOURCE_TASK_ROUTE));
	bool route = !strcmp(ev->u.status.source, "task_stream");
	if (!poller && !route)
		return;
	s->heard |= poller;
	if (route) {
		s->routed = ev->u.status.state == SRC_CONNECTED;
		s->handovers += s->routed;
	}
	tss_want(s);
}

/* The check's HTTP descriptors first, then the stream's. */
static size_t tss_pollfds(const void *src, struct pollfd *out, size_t max)
{
	const struct taskstream_source *s = src;
	size_t n = s->check ? taskcheck_fetch_pollfds(s->check, out, max) : 0;
	return n + (s->ts ? taskstream_pollfds(s->ts, out + n, max - n) : 0);
}

/* Behind: said in the log (and on stderr headless), and in the header from
 * then on, since the counts stay a lower bound. */
static void tss_behind(struct taskstream_source *s, uint64_t missed)
{
	const struct taskstream_stats *st = &s->ts->st;
	char text[256];
	snprintf(text, sizeof(text),
		 "task stream behind the scheduler: %llu finished tasks not received (another "
		 "/eventstream client replaced or removed its plugin); reconnecting; task counts "
		 "are a lower bound (at least %llu missed)",
		 (unsigned long long)missed, (unsigned long long)st->missed);
	s->note(s->ctx, text);
	if (s->headless)
		fprintf(stderr, "roastop: %s\n", text);
	snprintf(s->alert, sizeof(s->alert),
		 "task stream missed %llu tasks (another /eventstream client): counts a lower bound",
		 (unsigned long long)st->missed);
}

/* A check's answer, while the stream is open (the route's records need
 * none: nothing takes them from another reader); the next check's fetch. */
static void tss_check(struct taskstream_source *s, const struct pollfd *pfd, size_t n)
{
	double total;
	bool failed;
	bool answered = taskcheck_fetch_dispatch(s->check, pfd, n, &total, &failed);
	if (!s->ts)
		return;
	if (answered) {
		uint64_t missed = taskstream_check(s->ts, total);
		if (missed)
			tss_behind(s, missed);
	} else if (failed && s->ts->st.unchecked++ == 0 && !s->ts->st.checks) {
		/* said once: a stream another client silences would go unnoticed */
		s->note(s->ctx, "task stream unchecked: the scheduler's /metrics gave no "
				"dask_scheduler_prefix_state_totals (prometheus_client missing?)");
	}
	double t = clock_mono();
	if (taskstream_connected(s->ts) && t >= s->check_at) {
		taskcheck_fetch_start(s->check);
		s->check_at = t + s->interval;
	}
}

/* Headless, the stream's changes go to stderr as the scheduler's do:
 * connected and lost, not each retry. */
static void tss_dispatch(void *src, const struct pollfd *pfd, size_t n, double now)
{
	struct taskstream_source *s = src;
	struct pollfd mine[SOURCE_MAX_FDS];
	size_t nc = s->check ? taskcheck_fetch_pollfds(s->check, mine, SOURCE_MAX_FDS) : 0;
	nc = nc < n ? nc : n;
	if (s->check)
		tss_check(s, pfd, nc);
	if (!s->ts)
		return;
	taskstream_dispatch(s->ts, pfd + nc, n - nc, now);
	s->due_at = clock_mono() + taskstream_timeout_ms(s->ts) / 1e3;
	const char *state = s->ts->st.state;
	if (!strcmp(state, "connecting") || state == s->told)
		return;
	if (s->headless)
		fprintf(stderr, "roastop: task stream %s (connects %llu)\n", state,
			(unsigned long long)s->ts->st.connects);
	s->told = state;
}

/* libwebsockets' wait is counted from the last dispatch; a connected
 * stream's next check too. */
static double tss_timeout(const void *src)
{
	const struct taskstream_source *s = src;
	if (!s->ts)
		return -1;
	double at = s->due_at;
	if (s->check && taskstream_connected(s->ts) && s->check_at < at)
		at = s->check_at;
	double left = at - clock_mono();
	return left > 0 ? left : 0;
}

static const char *tss_alert(const void *src)
{
	const struct taskstream_source *s = src;
	return s->alert[0] ? s->alert : NULL;
}

static void tss_drain(void *src, double now)
{
	struct taskstream_source *s = src;
	if (s->ts)
		taskstream_drain(s->ts, now);
}

static void tss_stats(const void *src, struct source_stats *out)
{
	const struct taskstream_source *s = src;
	static const struct taskstream_stats none;
	const struct taskstream_stats *st = s->ts ? &s->ts->st : &none;
	out->state_key = "state";
	snprintf(out->state, sizeof(out->state), "%s",
		 s->ts ? st->state : s->routed ? "route" : "waiting");
	source_count(out, NULL, "connects", st->connects + s->handovers);
	source_count(out, NULL, "disconnects", st->disconnects);
	source_count(out, NULL, "messages", st->messages);
	source_count(out, NULL, "bytes", st->bytes);
	source_count(out, NULL, "tasks", st->tasks);
	source_count(out, NULL, "too_large", st->too_large);
	source_count(out, NULL, "checks", st->checks);
	source_count(out, NULL, "behind", st->behind);
	source_count(out, NULL, "missed", st->missed);
	source_count(out, NULL, "unchecked", st->unchecked);
	for (int r = TSP_ERR_JSON; r < TSP__COUNT; r++)
		source_count(out, "rejected_by", taskstream_result_name(r), st->rejected_by[r]);
}

static const struct source_field tss_fields[] = {
	SOURCE_FIELD(NULL, "connects", connects), SOURCE_FIELD(NULL, "behind", behind),
	SOURCE_FIELD(NULL, "missed", missed), { 0 } };

static void tss_close(void *src)
{
	struct taskstream_source *s = src;
	taskcheck_fetch_close(s->check);
	if (s->ts)
		taskstream_close(s->ts);
	free(s);
}

static const struct source_run_hooks tss_hooks = {
	.on_event = tss_on_event,
	.finish = tss_drain,
};

static const struct source_watch tss_watch = {
	.alert = tss_alert,
};

const struct source_ops taskstream_source = {
	.name = "task_stream",
	.wanted = tss_wanted,
	.open = tss_open,
	.pollfds = tss_pollfds,
	.dispatch = tss_dispatch,
	.timeout = tss_timeout,
	.stats = tss_stats,
	.role = SOURCE_TASK_STREAM,
	.fields = tss_fields,
	.close = tss_close,
	.tasks = true,
	.watch = &tss_watch,
	.run_hooks = &tss_hooks,
};
