/* The shared HTTP client: libcurl's multi interface driven from roastop's
 * poll() loop. The caller owns its easy handles; httpc owns the multi
 * handle, curl's sockets and its timer, and calls back once per finished
 * transfer. */
#ifndef ROASTOP_HTTPC_H
#define ROASTOP_HTTPC_H

#include <curl/curl.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "roastop/strbuf.h"

#define HTTPC_MAX_SOCKS 62 /* sockets curl may ask to watch at once */

struct httpc;

/* A transfer finished (removed already); code the HTTP status or 0. */
typedef void (*httpc_done_fn)(void *ctx, CURL *easy, CURLcode result, long code);

/* A response body, the transfer aborted past max bytes (too_large). */
struct httpc_body {
	struct strbuf buf;
	size_t max;
	bool too_large;
};

/* The options every request to a scheduler shares (docs/scheduler.md).
 * curl follows no redirect: it would carry --header values to any host and
 * follow https -> http. Without a CA file, libcurl's own bundle, or where
 * this system has none there (the wheel's libcurl is Debian's, run on
 * AlmaLinux), the system's. */
void httpc_easy_defaults(CURL *e, double interval, const char *cacert, bool insecure,
			 struct httpc_body *body);
/* Appends the "Name: value" headers to *list; false when out of memory. */
bool httpc_headers(struct curl_slist **list, const char *const *headers, size_t n);

/* NULL when builtin is readable, else the first readable candidate. */
const char *httpc_cainfo_pick(const char *builtin, const char *const *candidates, size_t n);

struct httpc *httpc_open(httpc_done_fn done, void *ctx);
/* Removes what is still running; the easy handles stay the caller's. */
void httpc_close(struct httpc *h);
int httpc_add(struct httpc *h, CURL *easy);
/* Stops a running transfer without a callback. */
void httpc_remove(struct httpc *h, CURL *easy);
/* curl's timer first, then its sockets. */
size_t httpc_pollfds(const struct httpc *h, struct pollfd *out, size_t max);
/* poll()'s answer: drives curl, then calls back for each finished transfer. */
void httpc_dispatch(struct httpc *h, const struct pollfd *pfd, size_t n);

/* base + prefix + route with one '/' at each joint; false when it does not fit. */
bool httpc_url_join(char *buf, size_t size, const char *base, const char *prefix,
		    const char *route);

#endif
