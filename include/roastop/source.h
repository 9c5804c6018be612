/* A data source: something that turns the outside world into events
 * (docs/architecture.md, "Adding a source"). The app knows sources only
 * through this table of operations and the registry: a core every source
 * fills, and capabilities only some have, each a table of its own (NULL
 * when absent), asked through source_hint, source_busy, ..., which answer
 * for a source without it. Events go to the deliver callback alone: the
 * model never knows their source. */
#ifndef ROASTOP_SOURCE_H
#define ROASTOP_SOURCE_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "roastop/config.h"
#include "roastop/event.h"

#define SOURCE_MAX_FDS 64 /* descriptors one source may ask the loop to watch */
#define SOURCE_COUNTERS_MAX EVENT_COUNTERS_MAX /* struct source_counter: event.h */
#define SOURCE_FIGURES_MAX 4

struct auth_key;
struct source_env {
	const struct app_config *cfg;
	event_deliver_fn deliver;
	/* a line for the session's log, stamped with the session's now */
	void (*note)(void *ctx, const char *text);
	void *ctx; /* for deliver, note and stopping */
	/* The session is stopping: a source delivering a backlog stops between
	 * two events, so that nothing is applied after the stop's cause. */
	bool (*stopping)(void *ctx);
	const struct auth_key *key; /* the session's key, NULL with --no-auth */
	/* A sender's datagram that came another way (the poller's
	 * datagrams.json), addressed to port: handed to the source with
	 * senders (source_senders.take). False: no source takes it. */
	bool (*datagram)(void *ctx, const char *buf, size_t len, int port, double now);
};

/* A figure rather than a count: NAN is written as null. */
struct source_figure {
	const char *name;
	double value;
};

/* What a source is to the readers of its counters (source_ops.role). */
enum source_role {
	SOURCE_PLAIN,
	SOURCE_LISTENER, /* senders send to it: its state is the address */
	SOURCE_RECORDING, /* recorded events replayed: the state "ended" once all is read */
	SOURCE_TASK_ROUTE, /* task records off the collector's route, or the per-prefix totals */
	SOURCE_TASK_STREAM, /* task events off /eventstream: its state is the stream's */
};

/* What the header, the task block and /metrics read of a source's
 * counters (source_typed_of): its role, and the counters its table
 * (source_ops.fields) names, 0 for those it has not. */
struct source_typed {
	enum source_role role;
	const char *state; /* pointing into the counters read, or NULL */
	/* a listener's: received, applied, lost, its senders by path and refused */
	uint64_t datagrams, bytes, applied, missing, kernel_drops;
	uint64_t senders_direct, senders_relayed, senders_full;
	/* a task feed's: has it measured, has it fallen behind, the route's records */
	uint64_t connects, task_answers, prefix_answers, behind, missed;
	uint64_t tasks, tasks_lost, tasks_capped, tasks_rejected;
};

/* A row of a source's table: counter (group, name) is the field at off. */
struct source_field {
	const char *group, *name;
	size_t off;
};
#define SOURCE_FIELD(group, name, field) { group, name, offsetof(struct source_typed, field) }

/* A source's statistics: its block under metrics.json's "roastop". */
struct source_stats {
	const char *state_key; /* the state's key in the block ("mode"), or NULL */
	/* "prometheus", "lost", "127.0.0.1:9999" (a host name up to 255), ... */
	char state[EVENT_COUNTER_STATE_MAX + 1];
	struct source_figure figures[SOURCE_FIGURES_MAX]; /* written before the counters */
	size_t n_figures;
	struct source_counter counters[SOURCE_COUNTERS_MAX];
	size_t n_counters;
	struct source_typed typed; /* its state points into state */
};

/* How a source's input ended (source_recorded.ended): the session stops. */
struct source_end {
	const char *reason; /* the stop's reason: "end of recording" */
	const char *cut; /* why a run still going is incomplete */
	bool failed; /* the input could not be read: exit status 1 */
};

/* A source senders send to (the UDP listener). Every slot is filled. */
struct source_senders {
	/* The line the senders need ("export ROASTOP_ADDR=..."), or NULL. */
	const char *(*hint)(const void *src);
	/* The address it listens on (the HTTP server's default). False: none. */
	bool (*address)(const void *src, struct sockaddr_storage *addr, socklen_t *len);
	/* A datagram of its senders that came through the scheduler: false
	 * (not counted) when port is not the source's. */
	bool (*take)(void *src, const char *buf, size_t len, int port, double now);
};

/* A source that says in the header what is wrong with its input. */
struct source_watch {
	const char *(*alert)(const void *src); /* NULL: nothing wrong */
	/* After every wake-up of the loop. True: the alert began or changed
	 * (draw the header now). NULL: nothing to watch. */
	bool (*tick)(void *src);
};

/* A source that takes part in the session's course. A NULL slot: none. */
struct source_run_hooks {
	void (*on_event)(void *src, const struct event *ev); /* every event applied */
	/* Still doing what on_event asked at a run's end: the app waits for
	 * it (up to a deadline) before it stops. */
	bool (*busy)(const void *src);
	/* At the stop: take in what is already queued, never waiting. */
	void (*finish)(void *src, double now);
};

/* A source that replays recorded events: the session's "now" is the
 * latest event's time, and roastop takes no decision of its own (the
 * recording has its decisions in it). */
struct source_recorded {
	const struct source_end *(*ended)(const void *src); /* NULL while it goes on */
};

/* A source: the core every source fills (only timeout and target may be
 * NULL), then the capabilities it has, each NULL when it has not. */
struct source_ops {
	const char *name; /* the metrics.json block and the log's prefix */
	bool (*wanted)(const struct app_config *cfg);
	/* NULL with err filled when the source cannot start: the app stops. */
	void *(*open)(const struct source_env *env, char *err, size_t errsz);
	/* The descriptors to watch now (they may change from call to call). */
	size_t (*pollfds)(const void *src, struct pollfd *out, size_t max);
	/* poll()'s answer for what pollfds gave (revents may all be 0: the
	 * timeout came). now: the session clock, for stamping events. */
	void (*dispatch)(void *src, const struct pollfd *pfd, size_t n, double now);
	/* Seconds until dispatch must run even with nothing readable: 0 when
	 * due (never negative), < 0 or a NULL op: never. */
	double (*timeout)(const void *src);
	void (*stats)(const void *src, struct source_stats *out);
	enum source_role role;
	const struct source_field *fields; /* NULL-name terminated; NULL: none */
	const char *(*target)(const void *src); /* what it reads, for the header */
	void (*close)(void *src);
	bool tasks; /* delivers EV_TASK events: the task view is offered */
	const struct source_senders *senders;
	const struct source_watch *watch;
	const struct source_run_hooks *run_hooks;
	const struct source_recorded *recorded;
};

/* The capabilities asked of any source: one without answers as the loop
 * does without it (no hint, no address, not busy, not ended, ...). */
const char *source_hint(const struct source_ops *ops, const void *src);
bool source_address(const struct source_ops *ops, const void *src,
		    struct sockaddr_storage *addr, socklen_t *len);
bool source_take(const struct source_ops *ops, void *src, const char *buf, size_t len, int port,
		 double now);
const char *source_alert(const struct source_ops *ops, const void *src);
bool source_tick(const struct source_ops *ops, void *src);
void source_on_event(const struct source_ops *ops, void *src, const struct event *ev);
bool source_busy(const struct source_ops *ops, const void *src);
void source_finish(const struct source_ops *ops, void *src, double now);
const struct source_end *source_ended(const struct source_ops *ops, const void *src);

/* Appends a counter (dropped past SOURCE_COUNTERS_MAX). */
void source_count(struct source_stats *st, const char *group, const char *name, uint64_t value);
/* Appends a figure (dropped past SOURCE_FIGURES_MAX). */
void source_figure(struct source_stats *st, const char *name, double value);

/* A source's statistics as an EV_COUNTERS payload, pointing into st. */
void source_counters_event(const char *name, const struct source_stats *st,
			   struct ev_counters *out);
/* The other way, pointing into c (no figures). */
void source_stats_of(const struct ev_counters *c, struct source_stats *out);
/* Fills st->typed from st's counters, those of the registry's source named so. */
void source_stats_type(const char *name, struct source_stats *st);
/* A source's statistics now (its stats op), typed as well. */
void source_stats_read(const struct source_ops *ops, const void *src, struct source_stats *out);
/* c's counters by field, as the registry's source of c's name names
 * them; role SOURCE_PLAIN and zeros for a name it lacks. */
void source_typed_of(const struct ev_counters *c, struct source_typed *out);
/* The name of the registry's source of that role, or "". */
const char *source_role_name(enum source_role role);

/* Every source roastop has, NULL-terminated (src/source/source.c). */
extern const struct source_ops *const source_registry[];

#endif
