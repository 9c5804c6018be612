/* The app's source registry (app_sources.h): one small function per
 * operation of source.h the app calls. */
#include "roastop/app_sources.h"

#include <math.h>
#include <stdio.h>

#include "roastop/clock.h"
#include "roastop/metrics_tasks.h"

void app_sources_tell(const struct app_sources *as, const struct event *ev)
{
	for (size_t i = 0; i < as->n; i++)
		source_on_event(as->src[i].ops, as->src[i].s, ev);
}

bool app_sources_busy(const struct app_sources *as)
{
	for (size_t i = 0; i < as->n; i++)
		if (source_busy(as->src[i].ops, as->src[i].s))
			return true;
	return false;
}

const struct source_end *app_sources_ended(const struct app_sources *as)
{
	for (size_t i = 0; i < as->n; i++) {
		const struct source_end *end = source_ended(as->src[i].ops, as->src[i].s);
		if (end)
			return end;
	}
	return NULL;
}

const char *app_sources_alert(const struct app_sources *as)
{
	for (size_t i = 0; i < as->n; i++) {
		const char *t = source_alert(as->src[i].ops, as->src[i].s);
		if (t)
			return t;
	}
	return NULL;
}

const char *app_sources_hint(const struct app_sources *as)
{
	for (size_t i = 0; i < as->n; i++) {
		const char *t = source_hint(as->src[i].ops, as->src[i].s);
		if (t)
			return t;
	}
	return NULL;
}

size_t app_sources_pollfds(const struct app_sources *as, struct pollfd *out, size_t *n_fds)
{
	size_t total = 0;
	for (size_t i = 0; i < as->n; i++) {
		const struct app_source *s = &as->src[i];
		n_fds[i] = s->ops->pollfds ? s->ops->pollfds(s->s, out + total, SOURCE_MAX_FDS) : 0;
		total += n_fds[i];
	}
	return total;
}

/* Seconds until a source wants its dispatch with nothing readable, < 0 none. */
static double app_source_due(const struct app_source *s)
{
	return s->ops->timeout ? s->ops->timeout(s->s) : -1;
}

int app_sources_timeout(const struct app_sources *as, int wait_ms)
{
	for (size_t i = 0; i < as->n; i++) {
		double due = app_source_due(&as->src[i]);
		int ms = due < 0 ? -1 : (int)ceil(due * 1000);
		if (ms >= 0 && (wait_ms < 0 || ms < wait_ms))
			wait_ms = ms;
	}
	return wait_ms;
}

void app_sources_dispatch(struct app_sources *as, const struct pollfd *pfd, const size_t *n_fds,
			  bool polled)
{
	for (size_t i = 0; polled && i < as->n; i++) {
		bool ready = app_source_due(&as->src[i]) == 0;
		for (size_t k = 0; k < n_fds[i] && !ready; k++)
			ready = pfd[k].revents != 0;
		if (ready)
			as->src[i].ops->dispatch(as->src[i].s, pfd, n_fds[i], clock_session());
		pfd += n_fds[i];
	}
}

void app_sources_finish(struct app_sources *as)
{
	for (size_t i = 0; i < as->n; i++)
		source_finish(as->src[i].ops, as->src[i].s, clock_session());
}

bool app_sources_ticked(struct app_sources *as)
{
	bool redraw = false;
	for (size_t i = 0; i < as->n; i++)
		if (source_tick(as->src[i].ops, as->src[i].s))
			redraw = true;
	return redraw;
}

/* As events, so that a replay writes metrics.json's roastop.<source> blocks
 * as the live session did (a source of recorded events describes the
 * replay itself: app_sources_recorded_stats). */
void app_sources_counters(struct app_sources *as, const struct counters *had, bool all)
{
	double now = clock_mono();
	if (!all && now < as->counters_at + 1.0)
		return;
	as->counters_at = now;
	for (size_t i = 0; i < as->n; i++) {
		const struct app_source *s = &as->src[i];
		if (!s->ops->stats || s->ops->recorded)
			continue;
		struct source_stats st = { 0 };
		s->ops->stats(s->s, &st);
		struct event ev = { .type = EV_COUNTERS, .t = clock_session() }, old;
		source_counters_event(s->ops->name, &st, &ev.u.counters);
		if (counters_find(had, s->ops->name, &old.u.counters) &&
		    counters_same(&old.u.counters, &ev.u.counters))
			continue;
		as->deliver(as->ctx, &ev);
	}
}

bool app_sources_take(struct app_sources *as, const char *buf, size_t len, int port, double now)
{
	for (size_t i = 0; i < as->n; i++)
		if (source_take(as->src[i].ops, as->src[i].s, buf, len, port, now))
			return true;
	return false;
}

bool app_sources_address(const struct app_sources *as, struct sockaddr_storage *addr,
			 socklen_t *len)
{
	for (size_t i = 0; i < as->n; i++)
		if (source_address(as->src[i].ops, as->src[i].s, addr, len))
			return true;
	return false;
}

int app_sources_open(struct app_sources *as, const struct source_env *env)
{
	as->recorded = app_sources_recorded(env->cfg);
	as->deliver = env->deliver;
	as->ctx = env->ctx;
	for (const struct source_ops *const *ops = source_registry; *ops; ops++) {
		if (!(*ops)->wanted(env->cfg))
			continue;
		char err[512] = "";
		void *s = as->n < APP_SOURCES_MAX ? (*ops)->open(env, err, sizeof(err)) : NULL;
		if (!s) {
			fprintf(stderr, "roastop: %s\n", err[0] ? err : "too many sources");
			return -1;
		}
		as->src[as->n++] = (struct app_source){ .ops = *ops, .s = s };
	}
	return 0;
}

bool app_sources_recorded(const struct app_config *c)
{
	for (const struct source_ops *const *ops = source_registry; *ops; ops++)
		if ((*ops)->recorded && (*ops)->wanted(c))
			return true;
	return false;
}

void app_sources_close(struct app_sources *as)
{
	for (size_t i = 0; i < as->n; i++)
		as->src[i].ops->close(as->src[i].s);
}

void app_sources_stats(struct app_sources *as, const struct counters *had)
{
	struct app_stats *st = &as->stats;
	struct sockaddr_storage addr;
	socklen_t len;
	st->n = 0;
	st->listener = NULL;
	for (size_t i = 0; i < as->n; i++) {
		const struct source_ops *ops = as->src[i].ops;
		if (!ops->stats)
			continue;
		struct source_stats *of = &st->of[st->n];
		source_stats_read(ops, as->src[i].s, of);
		const char *target = ops->target ? ops->target(as->src[i].s) : NULL;
		st->ui[st->n++] = (struct ui_source){ ops->name, of, target };
		if (!st->listener && source_address(ops, as->src[i].s, &addr, &len))
			st->listener = of, st->listener_name = ops->name;
	}
	/* replayed: the recorded sources' counters, as the live header had them */
	for (size_t i = 0; as->recorded && i < had->n && st->n < APP_SOURCES_MAX; i++) {
		struct ev_counters c;
		counters_view(had, i, &c);
		source_stats_of(&c, &st->of[st->n]);
		st->ui[st->n] = (struct ui_source){ c.source, &st->of[st->n], NULL };
		st->n++;
	}
}

size_t app_sources_recorded_stats(const struct app_sources *as, const char **names,
			    struct source_stats *of, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < as->n && n < max; i++) {
		const struct app_source *s = &as->src[i];
		if (!s->ops->recorded || !s->ops->stats)
			continue;
		names[n] = s->ops->name;
		s->ops->stats(s->s, &of[n++]);
	}
	return n;
}

/* From events, so a replay shows and writes what the live session did. */
bool app_sources_tasks_fed(const struct counters *had, const struct run *r,
			   struct source_typed *feed, bool *fed)
{
	*fed = false;
	struct ev_counters c;
	struct source_typed t;
	for (const struct source_ops *const *ops = source_registry; *ops; ops++) {
		if (!(*ops)->tasks || !counters_find(had, (*ops)->name, &c))
			continue;
		source_typed_of(&c, &t);
		bool measured = metrics_tasks_feed_measured(&t);
		if (!*fed || measured) /* the first feed, unless a later one measured */
			*feed = t;
		*fed = true;
		if (measured)
			break;
	}
	return *fed || (r && r->tasks.count);
}
