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
};

/* Every source's statistics, in the registry's order, as the tick (or a
 * /metrics scrape) took them; the listener's (the first with an address). */
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
	double counters_at; /* clock_mono() when their statistics were last looked at */
	struct app_stats stats;
};

bool app_sources_recorded(const struct app_config *c); /* does c replay recorded events? */
/* Every source c asks for; -1 (said on stderr) when one cannot open. */
int app_sources_open(struct app_sources *as, const struct source_env *env);
void app_sources_close(struct app_sources *as);

/* Every source's descriptors one after another, n_fds[i] of the i-th's;
 * the total. */
size_t app_sources_pollfds(const struct app_sources *as, struct pollfd *out, size_t *n_fds);
/* The loop's wait (ms, -1 = none), shortened to the first source's timeout. */
int app_sources_timeout(const struct app_sources *as, int wait_ms);
void app_sources_dispatch(struct app_sources *as, const struct pollfd *pfd, const size_t *n_fds,
			  bool polled);
void app_sources_finish(struct app_sources *as); /* takes in what is queued */

void app_sources_tell(const struct app_sources *as, const struct event *ev); /* one applied */
bool app_sources_busy(const struct app_sources *as); /* with what a run's end asked */
bool app_sources_ticked(struct app_sources *as); /* an alert began or changed */
/* The first source's; NULL when none has one. */
const struct source_end *app_sources_ended(const struct app_sources *as);
const char *app_sources_alert(const struct app_sources *as);
const char *app_sources_hint(const struct app_sources *as);
bool app_sources_take(struct app_sources *as, const char *buf, size_t len, int port,
		      double now);
bool app_sources_address(const struct app_sources *as, struct sockaddr_storage *addr,
			 socklen_t *len);

/* Each live source's statistics that differ from the session's copy (had),
 * delivered as an EV_COUNTERS; looked at once a second, or now (all). */
void app_sources_counters(struct app_sources *as, const struct counters *had, bool all);
/* Every source's statistics into as->stats; replayed, those of had too. */
void app_sources_stats(struct app_sources *as, const struct counters *had);
/* The sources of recorded events' statistics, at most max; how many. */
size_t app_sources_recorded_stats(const struct app_sources *as, const char **names,
				  struct source_stats *of, size_t max);
/* Run r's task model is shown and written when the registry's source of
 * task events has delivered its counters (had; feed: the first that
 * measured, fed: any) or r has tasks. */
bool app_sources_tasks_fed(const struct counters *had, const struct run *r,
			   struct source_typed *feed, bool *fed);

#endif
