/* The shared HTTP client: libcurl's multi interface driven from roastop's
 * one poll() loop (no thread, no blocking call), for any source that
 * speaks HTTP. The caller owns its easy handles (their options, bodies
 * and CURLOPT_PRIVATE); httpc owns the multi handle, curl's sockets and
 * its timer, and calls back once per finished transfer. */
#ifndef ROASTOP_HTTPC_H
#define ROASTOP_HTTPC_H

#include <curl/curl.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#define HTTPC_MAX_SOCKS 62 /* sockets curl may ask to watch at once */

struct httpc;

/* A transfer finished (removed from the multi handle already): result is
 * curl's, code the HTTP status (0 when none came). */
typedef void (*httpc_done_fn)(void *ctx, CURL *easy, CURLcode result, long code);

/* The options every request to a scheduler shares (docs/scheduler.md): no
 * signals, a 3 s connect and max(10 s, 2 x interval) whole, compressed
 * bodies, http and https only, redirects never followed by curl (it would
 * carry --header values to any host one names, and follow https -> http:
 * the poller follows them by hand), the CA file or no verification. The
 * caller sets its URL, body callback and headers. Without a CA file, the
 * bundle libcurl was built to read, or, where this system has none there
 * (the wheel's libcurl is Debian's, run on AlmaLinux), the system's own. */
void httpc_easy_defaults(CURL *e, double interval, const char *cacert, bool insecure);

/* The CA bundle to give libcurl: NULL when builtin is readable (libcurl's
 * own default serves), else the first readable of candidates, else NULL. */
const char *httpc_cainfo_pick(const char *builtin, const char *const *candidates, size_t n);

/* NULL when curl or the timer cannot be set up. */
struct httpc *httpc_open(httpc_done_fn done, void *ctx);
/* Removes what is still running; the easy handles stay the caller's. */
void httpc_close(struct httpc *h);
/* Starts a transfer: 0, or -1 when curl refuses it. */
int httpc_add(struct httpc *h, CURL *easy);
/* Stops a running transfer without a callback. */
void httpc_remove(struct httpc *h, CURL *easy);
/* curl's timer first, then its sockets: at most max; returns how many. */
size_t httpc_pollfds(const struct httpc *h, struct pollfd *out, size_t max);
/* poll()'s answer for what httpc_pollfds gave: drives curl, then calls
 * back for each transfer that finished. */
void httpc_dispatch(struct httpc *h, const struct pollfd *pfd, size_t n);

/* base + prefix + route with exactly one '/' at each joint (a scheduler's
 * URL, its dashboard's prefix, a route). Returns false when it does not fit. */
bool httpc_url_join(char *buf, size_t size, const char *base, const char *prefix,
		    const char *route);

#endif
