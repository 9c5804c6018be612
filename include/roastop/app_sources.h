/* The app's source registry: the sources open (source.h), and every call
 * the app makes of their operations. */
#ifndef ROASTOP_APP_SOURCES_H
#define ROASTOP_APP_SOURCES_H

#include "roastop/counters.h"
#include "roastop/source.h"
#include "roastop/ui.h"

#define APP_SOURCES_MAX 16 /* sources open at once */

struct app_source {
	const struct source_ops *ops;
	void *s;
	double counters_at; /* clock_mono() when its statistics were last looked at */
};

/* Every source's statistics, in the registry's order (the header's), as
 * the tick (or a /metrics scrape) took them; the listener's (the first
 * source with an address) for /metrics. */
struct app_stats {
	struct source_stats of[APP_SOURCES_MAX];
	struct ui_source ui[APP_SOURCES_MAX];
	size_t n;
	const struct source_stats *listener; /* NULL: none (a replay) */
	const char *listener_name;
};

struct app_sources {
	struct app_source src[APP_SOURCES_MAX];
	size_t n;
	bool recorded; /* a source replays recorded events (source_ops.recorded) */
	event_deliver_fn deliver; /* the sources' (source_env): their counters go there */
	void *ctx;
	struct app_stats stats;
};

/* Does the configuration replay recorded events? */
bool app_sources_recorded(const struct app_config *c);
/* Every source of the registry the configuration asks for; -1 (said on
 * stderr) when one cannot open. */
int app_sources_open(struct app_sources *as, const struct source_env *env);
void app_sources_close(struct app_sources *as);

/* Every source's descriptors one after another in out, n_fds[i] of the
 * i-th's; the total. */
size_t app_sources_pollfds(const struct app_sources *as, struct pollfd *out, size_t *n_fds);
/* The loop's wait (ms, -1 = none), shortened to the first source's timeout. */
int app_sources_timeout(const struct app_sources *as, int wait_ms);
/* Each source whose descriptor is ready or whose timeout has come. */
void app_sources_dispatch(struct app_sources *as, const struct pollfd *pfd, const size_t *n_fds,
			  bool polled);
/* At the stop: what the sources have queued already is taken in. */
void app_sources_finish(struct app_sources *as);

/* Each event applied, to the sources that react to events. */
void app_sources_tell(const struct app_sources *as, const struct event *ev);
/* Whether a source is still doing what a run's end asked of it. */
bool app_sources_busy(const struct app_sources *as);
/* Whether an alert began or changed (source_ops.tick). */
bool app_sources_ticked(struct app_sources *as);
/* The first source's: how its input ended, its alert, its senders' line;
 * NULL when none has one. */
const struct source_end *app_sources_ended(const struct app_sources *as);
const char *app_sources_alert(const struct app_sources *as);
const char *app_sources_hint(const struct app_sources *as);
/* A datagram that came by another source's path (source_env.datagram). */
bool app_sources_take(struct app_sources *as, const char *buf, size_t len, int port,
		      double now);
/* The first source's listening address (source_senders.address). */
bool app_sources_address(const struct app_sources *as, struct sockaddr_storage *addr,
			 socklen_t *len);

/* Each live source's statistics that differ from the session's copy (had),
 * delivered as an EV_COUNTERS; looked at once a second, or now (all). */
void app_sources_counters(struct app_sources *as, const struct counters *had, bool all);
/* Every source's statistics into as->stats; replayed, the recorded ones
 * (had) too. */
void app_sources_stats(struct app_sources *as, const struct counters *had);
/* The statistics of the sources of recorded events, at most max; how many. */
size_t app_sources_recorded_stats(const struct app_sources *as, const char **names,
			    struct source_stats *of, size_t max);
/* Run r's task model is shown and written when the registry's source of
 * task events has delivered its counters (had; feed is then the first
 * that measured, fed whether any) or r has tasks. */
bool app_sources_tasks_fed(const struct counters *had, const struct run *r,
			   struct source_typed *feed, bool *fed);

#endif
