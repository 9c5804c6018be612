/* Every call the app makes of a source's operations (source.h), one small
 * function per operation: the loop, the alerts and the frame ask here. */
#include "apppriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "roastop/clock.h"
#include "roastop/counters.h"

/* The sources that react to events (a run's start and end) see each one
 * applied. */
void app_tell_sources(struct app *a, const struct event *ev)
{
	for (size_t i = 0; i < a->n_src; i++)
		source_on_event(a->src[i].ops, a->src[i].s, ev);
}

/* A source still doing what a run's end asked of it. */
bool app_sources_busy(const struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++)
		if (source_busy(a->src[i].ops, a->src[i].s))
			return true;
	return false;
}

/* How the first source whose input has ended ended (source_recorded.ended),
 * or NULL. */
const struct source_end *app_sources_ended(const struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++) {
		const struct source_ops *ops = a->src[i].ops;
		const struct source_end *end = source_ended(ops, a->src[i].s);
		if (end)
			return end;
	}
	return NULL;
}

/* The first source's alert (source_watch.alert), or NULL. */
const char *app_alert(const struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++) {
		const char *t = source_alert(a->src[i].ops, a->src[i].s);
		if (t)
			return t;
	}
	return NULL;
}

/* The first source's line for its senders (source_senders.hint), or NULL: no
 * source has senders (a replay). */
const char *app_hint(const struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++) {
		const char *t = source_hint(a->src[i].ops, a->src[i].s);
		if (t)
			return t;
	}
	return NULL;
}

/* Every source's descriptors, one after another in out; n_fds[i] says
 * how many are the i-th source's. Returns the total. */
size_t app_sources_pollfds(const struct app *a, struct pollfd *out, size_t *n_fds)
{
	size_t total = 0;
	for (size_t i = 0; i < a->n_src; i++) {
		const struct app_source *as = &a->src[i];
		n_fds[i] = as->ops->pollfds ? as->ops->pollfds(as->s, out + total, SOURCE_MAX_FDS) : 0;
		total += n_fds[i];
	}
	return total;
}

/* Seconds until a source wants its dispatch with nothing readable, < 0 none. */
static double app_source_due(const struct app_source *as)
{
	return as->ops->timeout ? as->ops->timeout(as->s) : -1;
}

/* The loop's wait (ms, -1 = none), shortened to the first source's timeout. */
int app_sources_timeout(const struct app *a, int wait_ms)
{
	for (size_t i = 0; i < a->n_src; i++) {
		double due = app_source_due(&a->src[i]);
		int ms = due < 0 ? -1 : (int)ceil(due * 1000);
		if (ms >= 0 && (wait_ms < 0 || ms < wait_ms))
			wait_ms = ms;
	}
	return wait_ms;
}

/* A source is called back when one of its descriptors is ready or its
 * timeout has come. */
void app_sources_dispatch(struct app *a, const struct pollfd *pfd, const size_t *n_fds,
			  bool polled)
{
	for (size_t i = 0; polled && i < a->n_src; i++) {
		bool ready = app_source_due(&a->src[i]) == 0;
		for (size_t k = 0; k < n_fds[i] && !ready; k++)
			ready = pfd[k].revents != 0;
		if (ready)
			a->src[i].ops->dispatch(a->src[i].s, pfd, n_fds[i], clock_session());
		pfd += n_fds[i];
	}
}

/* At the stop: what the sources have queued already is taken in. */
void app_sources_finish(struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++)
		source_finish(a->src[i].ops, a->src[i].s, clock_session());
}

/* The sources look at what they watch over time: whether an alert began
 * or changed (source_ops.tick). */
bool app_sources_ticked(struct app *a)
{
	bool redraw = false;
	for (size_t i = 0; i < a->n_src; i++)
		if (source_tick(a->src[i].ops, a->src[i].s))
			redraw = true;
	return redraw;
}

/* Each live source's statistics, when they have changed since the model's
 * copy, as an event: looked at once a second, and at the start and the
 * stop (all: true). So metrics.json's roastop.<source> blocks come from
 * events, and a replay writes them as the live session did. (A source of
 * recorded events describes the replay itself: its block is written from
 * its statistics, app_extra.) */
void app_counters(struct app *a, bool all)
{
	double now = clock_mono();
	for (size_t i = 0; i < a->n_src; i++) {
		struct app_source *as = &a->src[i];
		if (!as->ops->stats || as->ops->recorded || (!all && now < as->counters_at + 1.0))
			continue;
		as->counters_at = now;
		struct source_stats st = { 0 };
		as->ops->stats(as->s, &st);
		struct event ev = { .type = EV_COUNTERS, .t = clock_session() }, had;
		source_counters_event(as->ops->name, &st, &ev.u.counters);
		if (counters_find(&a->ses.counters, as->ops->name, &had.u.counters) &&
		    counters_same(&had.u.counters, &ev.u.counters))
			continue;
		app_deliver(a, &ev);
	}
}

/* A datagram that came by another source's path (source_env.datagram): the
 * first source with senders takes it. */
bool app_sources_take(struct app *a, const char *buf, size_t len, int port, double now)
{
	for (size_t i = 0; i < a->n_src; i++)
		if (source_take(a->src[i].ops, a->src[i].s, buf, len, port, now))
			return true;
	return false;
}

/* The first source's listening address (source_senders.address). */
bool app_listen_address(const struct app *a, struct sockaddr_storage *addr, socklen_t *len)
{
	for (size_t i = 0; i < a->n_src; i++)
		if (source_address(a->src[i].ops, a->src[i].s, addr, len))
			return true;
	return false;
}

/* Every source of the registry this configuration asks for. */
int app_open_registry(struct app *a, const struct source_env *env)
{
	for (const struct source_ops *const *ops = source_registry; *ops; ops++) {
		if (!(*ops)->wanted(a->cfg))
			continue;
		char err[512] = "";
		void *s = a->n_src < APP_SOURCES_MAX ? (*ops)->open(env, err, sizeof(err)) : NULL;
		if (!s) {
			fprintf(stderr, "roastop: %s\n", err[0] ? err : "too many sources");
			return -1;
		}
		a->src[a->n_src++] = (struct app_source){ .ops = *ops, .s = s };
	}
	return 0;
}

/* Does the configuration replay recorded events (source_ops.recorded)? */
bool app_wants_recorded(const struct app_config *c)
{
	for (const struct source_ops *const *ops = source_registry; *ops; ops++)
		if ((*ops)->recorded && (*ops)->wanted(c))
			return true;
	return false;
}

void app_sources_close(struct app *a)
{
	for (size_t i = 0; i < a->n_src; i++)
		a->src[i].ops->close(a->src[i].s);
}

/* Every source's statistics into a->stats (the tick's): the header and
 * /metrics read them there. */
void app_stats_take(struct app *a)
{
	struct app_stats *st = &a->stats;
	struct sockaddr_storage addr;
	socklen_t len;
	st->n = 0;
	st->listener = NULL;
	for (size_t i = 0; i < a->n_src; i++) {
		const struct source_ops *ops = a->src[i].ops;
		if (!ops->stats)
			continue;
		struct source_stats *of = &st->of[st->n];
		source_stats_read(ops, a->src[i].s, of);
		const char *target = ops->target ? ops->target(a->src[i].s) : NULL;
		st->ui[st->n] = (struct ui_source){ ops->name, of, target };
		st->names[st->n++] = ops->name;
		if (!st->listener && source_address(ops, a->src[i].s, &addr, &len))
			st->listener = of, st->listener_name = ops->name;
	}
	/* replayed: the recorded sources' counters, as the live header had them */
	for (size_t i = 0; a->recorded && i < a->ses.counters.n && st->n < APP_SOURCES_MAX; i++) {
		struct ev_counters c;
		counters_view(&a->ses.counters, i, &c);
		source_stats_of(&c, &st->of[st->n]);
		st->ui[st->n] = (struct ui_source){ c.source, &st->of[st->n], NULL };
		st->names[st->n++] = c.source;
	}
}
