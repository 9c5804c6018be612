/* libcurl multi in the poll loop: curl says which sockets to watch
 * (socket_cb) and when to call it back (timer_cb, a timerfd). */
#include "roastop/httpc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roastop/timer.h"

struct httpc_sock {
	curl_socket_t fd;
	short events;
};

struct httpc {
	CURLM *multi;
	int tfd;
	struct httpc_sock socks[HTTPC_MAX_SOCKS];
	size_t n_socks;
	httpc_done_fn done;
	void *ctx;
};

static int httpc_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *sockp)
{
	(void)easy;
	(void)sockp;
	struct httpc *h = userp;
	size_t i = 0;
	while (i < h->n_socks && h->socks[i].fd != fd)
		i++;
	if (what == CURL_POLL_REMOVE) {
		if (i < h->n_socks)
			h->socks[i] = h->socks[--h->n_socks];
		return 0;
	}
	if (i == h->n_socks) {
		if (h->n_socks == HTTPC_MAX_SOCKS)
			return -1; /* curl fails the transfer */
		h->n_socks++;
	}
	h->socks[i].fd = fd;
	h->socks[i].events = (short)(((what & CURL_POLL_IN) ? POLLIN : 0) |
				     ((what & CURL_POLL_OUT) ? POLLOUT : 0));
	return 0;
}

static int httpc_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	(void)multi;
	struct httpc *h = userp;
	timer_set(h->tfd, timeout_ms < 0 ? -1.0 : (double)timeout_ms / 1000.0);
	return 0;
}

struct httpc *httpc_open(httpc_done_fn done, void *ctx)
{
	static bool curl_ready;
	if (!curl_ready && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return NULL;
	curl_ready = true;
	struct httpc *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->done = done;
	h->ctx = ctx;
	h->multi = curl_multi_init();
	h->tfd = timer_open(0, 0);
	if (!h->multi || h->tfd < 0) {
		httpc_close(h);
		return NULL;
	}
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, httpc_socket_cb);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, httpc_timer_cb);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	return h;
}

#define HTTPC_CONNECT_TIMEOUT_MS 3000L

/* Where each family of systems keeps its CA bundle. */
static const char *const httpc_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Arch */
	"/etc/pki/tls/certs/ca-bundle.crt", /* AlmaLinux, RHEL, Fedora */
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* the same, newer */
	"/etc/ssl/ca-bundle.pem", /* openSUSE */
	"/etc/ssl/cert.pem", /* Alpine */
};

const char *httpc_cainfo_pick(const char *builtin, const char *const *candidates, size_t n)
{
	if (builtin && access(builtin, R_OK) == 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (access(candidates[i], R_OK) == 0)
			return candidates[i];
	return NULL;
}

/* Looked up once: the system does not move its bundle while we run. */
static const char *httpc_cainfo(void)
{
	static const char *found;
	static bool looked;
	if (!looked) {
		const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
		const char *builtin = v->age >= CURLVERSION_NINTH ? v->cainfo : NULL;
		found = httpc_cainfo_pick(builtin, httpc_bundles,
					  sizeof(httpc_bundles) / sizeof(httpc_bundles[0]));
		looked = true;
	}
	return found;
}

static size_t httpc_body_write(char *ptr, size_t size, size_t nmemb, void *userp)
{
	struct httpc_body *b = userp;
	size_t n = size * nmemb;
	if (b->buf.len + n > b->max) {
		b->too_large = true;
		return 0; /* aborts the transfer */
	}
	strbuf_append(&b->buf, ptr, n);
	return b->buf.failed ? 0 : n;
}

void httpc_easy_defaults(CURL *e, double interval, const char *cacert, bool insecure,
			 struct httpc_body *body)
{
	double timeout = interval * 2 < 10 ? 10 : interval * 2;
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, HTTPC_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_USERAGENT, "roastop/" ROASTOP_VERSION);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, httpc_body_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
	if (!cacert)
		cacert = httpc_cainfo();
	if (cacert)
		curl_easy_setopt(e, CURLOPT_CAINFO, cacert);
	if (insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
}

bool httpc_headers(struct curl_slist **list, const char *const *headers, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct curl_slist *h = curl_slist_append(*list, headers[i]);
		if (!h)
			return false;
		*list = h;
	}
	return true;
}

void httpc_close(struct httpc *h)
{
	if (!h)
		return;
	if (h->multi)
		curl_multi_cleanup(h->multi);
	if (h->tfd >= 0)
		close(h->tfd);
	free(h);
}

int httpc_add(struct httpc *h, CURL *easy)
{
	return curl_multi_add_handle(h->multi, easy) == CURLM_OK ? 0 : -1;
}

void httpc_remove(struct httpc *h, CURL *easy)
{
	curl_multi_remove_handle(h->multi, easy);
}

size_t httpc_pollfds(const struct httpc *h, struct pollfd *out, size_t max)
{
	size_t n = 0;
	if (max < 1)
		return 0;
	out[n++] = (struct pollfd){ .fd = h->tfd, .events = POLLIN };
	for (size_t i = 0; i < h->n_socks && n < max; i++)
		out[n++] = (struct pollfd){ .fd = h->socks[i].fd, .events = h->socks[i].events };
	return n;
}

static void httpc_collect(struct httpc *h)
{
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(h->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		CURL *e = msg->easy_handle;
		CURLcode rc = msg->data.result;
		long code = 0;
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
		curl_multi_remove_handle(h->multi, e);
		h->done(h->ctx, e, rc, code);
	}
}

void httpc_dispatch(struct httpc *h, const struct pollfd *pfd, size_t n)
{
	int running;
	for (size_t i = 1; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		int mask = ((pfd[i].revents & POLLIN) ? CURL_CSELECT_IN : 0) |
			   ((pfd[i].revents & POLLOUT) ? CURL_CSELECT_OUT : 0) |
			   ((pfd[i].revents & (POLLERR | POLLHUP)) ? CURL_CSELECT_ERR : 0);
		curl_multi_socket_action(h->multi, pfd[i].fd, mask, &running);
	}
	if (n > 0 && (pfd[0].revents & POLLIN)) {
		timer_drain(h->tfd);
		curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	httpc_collect(h);
}

bool httpc_url_join(char *buf, size_t size, const char *base, const char *prefix,
		   const char *route)
{
	size_t bl = strlen(base);
	while (bl > 0 && base[bl - 1] == '/')
		bl--;
	const char *p = prefix ? prefix : "";
	while (*p == '/')
		p++;
	size_t pl = strlen(p);
	while (pl > 0 && p[pl - 1] == '/')
		pl--;
	while (*route == '/')
		route++;
	int n = pl ? snprintf(buf, size, "%.*s/%.*s/%s", (int)bl, base, (int)pl, p, route)
		   : snprintf(buf, size, "%.*s/%s", (int)bl, base, route);
	return n >= 0 && (size_t)n < size;
}
