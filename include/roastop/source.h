/* A data source: something that turns the outside world into events
 * (docs/architecture.md, "Adding a source"). The app knows sources only
 * through this table of operations and the registry below, as nvtop knows
 * its GPU vendors: a small core every source fills (it opens each source
 * the configuration asks for, polls the descriptors it names, calls it back
 * on readiness or when its timeout is due, and writes its statistics: the
 * dashboard's header and metrics.json's "roastop" block), and capabilities
 * only some sources have, each a table of its own the core points to, NULL
 * when absent: senders (a listener's hint, address, alert), run hooks (told
 * of run starts and ends, and of the stop), recorded events replayed.
 * The app asks for a capability through source_hint, source_busy, ...,
 * which answer for a source without it. Events go to the deliver callback
 * and nowhere else: the model never knows their source. */
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

/* What a source is given when it opens. */
struct auth_key;
struct source_env {
	const struct app_config *cfg;
	event_deliver_fn deliver;
	/* a warning for the session's log ("datagrams lost: ..."), stamped
	 * with the session's now (the recorded events' clock in a replay) */
	void (*note)(void *ctx, const char *text);
	void *ctx; /* for deliver, note and stopping */
	/* The session is stopping (a signal, q, a run's end with
	 * --exit-on-run-end): a source delivering a backlog stops between two
	 * events, so that nothing is applied after the stop's cause. */
	bool (*stopping)(void *ctx);
	/* the session's key (auth.h), NULL with --no-auth: what a source that
	 * authenticates its input checks it with */
	const struct auth_key *key;
	/* A sender's datagram that came by another path than the senders'
	 * source (the Dask poller's datagrams.json: a worker's own Dask
	 * connection), addressed to port (the port of the sender's
	 * ROASTOP_ADDR): the app hands it to the source with senders, whose
	 * checks, sequences and counts it goes through as if it had come to
	 * that source (source_senders.take). False: no source takes it (none
	 * has senders, or it was addressed to another port: another roastop's). */
	bool (*datagram)(void *ctx, const char *buf, size_t len, int port, double now);
};

/* A figure rather than a count (a factor; a count not measured): NAN is
 * written as null. */
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
 * counters, by field (source_typed_of): its role, and the counters its
 * table (source_ops.fields) names, 0 for those it has not. No reader names
 * a source or a counter. */
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

/* A row of a source's table: its counter (group, name) is the field at
 * off in struct source_typed. */
struct source_field {
	const char *group, *name;
	size_t off;
};
#define SOURCE_FIELD(group, name, field) { group, name, offsetof(struct source_typed, field) }

/* A source's statistics: its block under metrics.json's "roastop", and
 * the same typed (source_stats_read, source_stats_of). */
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

/* How a source's input ended (source_recorded.ended). Headless, the session
 * stops (a failure stops it always, with exit status 1); a run still going
 * at the exit is then incomplete. */
struct source_end {
	const char *reason; /* the stop's reason: "end of recording" */
	const char *cut; /* why a run still going is incomplete */
	bool failed; /* the input could not be read: exit status 1 */
};

/* A source with senders that send to it (the UDP listener): what the
 * user is told about them. Every slot is filled. */
struct source_senders {
	/* The line the senders need ("export ROASTOP_ADDR=..."), shown by ?
	 * and written by w, or NULL. */
	const char *(*hint)(const void *src);
	/* The address the source listens on: where the HTTP server serves by
	 * default (TCP on the same host and port), and whose counters /metrics
	 * gives. False: none (yet). */
	bool (*address)(const void *src, struct sockaddr_storage *addr, socklen_t *len);
	/* A datagram of its senders that came through the scheduler (a Dask
	 * worker's connection), addressed to port: the same checks and
	 * sequence as its own when it is the source's port; false (not
	 * counted) when it is another's. */
	bool (*take)(void *src, const char *buf, size_t len, int port, double now);
};

/* A source that watches its input over time and says in the header what
 * is wrong with it (the listener's rejected keys, the task stream that fell
 * behind the scheduler's count). */
struct source_watch {
	/* What the header says is wrong with the input now ("all 33 datagrams
	 * rejected: wrong key ..."), or NULL. Filled. */
	const char *(*alert)(const void *src);
	/* Called after every wake-up of the loop, for what the source watches
	 * over time (its losses, written with env->note). True: the header
	 * should be drawn now (its alert began or changed). NULL: nothing. */
	bool (*tick)(void *src);
};

/* A source that takes part in the session's course. A NULL slot: none. */
struct source_run_hooks {
	/* Every event applied, for the few a source reacts to (run start and
	 * end: the Dask poller looks for the collector's route, and takes the
	 * scheduler's last word). */
	void (*on_event)(void *src, const struct event *ev);
	/* Still doing what on_event asked at a run's end: the app waits for
	 * it (up to a deadline) before it stops. */
	bool (*busy)(const void *src);
	/* At the stop: take in what is already queued (the listener's socket,
	 * the task stream's last messages), briefly and never waiting (a flood
	 * must not hold the exit). */
	void (*finish)(void *src, double now);
};

/* A source that replays recorded events. The session's "now" is then the
 * latest event's time, not the wall clock; roastop takes no decision of
 * its own (a run's idle end, a system clock step: the recording has its
 * decisions in it), and makes no key (no senders: --serve reads it). Its
 * statistics describe the replay itself. Every slot is filled. */
struct source_recorded {
	/* Has the input ended for good (a recording read to its end, or
	 * unreadable)? NULL while it goes on. */
	const struct source_end *(*ended)(const void *src);
};

/* A source: the core every source fills (only timeout and target may be
 * NULL), then the capabilities it has, each NULL when it has not. */
struct source_ops {
	const char *name; /* the metrics.json block and the log's prefix */
	/* Does this configuration ask for the source? (a replay asks for no
	 * live source, a live session for no replay) */
	bool (*wanted)(const struct app_config *cfg);
	/* NULL with err filled when the source cannot start: the app stops.
	 * Says what it does on stderr (the address it listens on, ...). */
	void *(*open)(const struct source_env *env, char *err, size_t errsz);
	/* The descriptors to watch now, at most max; they may change from one
	 * call to the next (a reconnecting socket, curl's sockets). */
	size_t (*pollfds)(const void *src, struct pollfd *out, size_t max);
	/* poll()'s answer for what pollfds gave (revents may all be 0: the
	 * timeout came). now: the session clock, for stamping events. */
	void (*dispatch)(void *src, const struct pollfd *pfd, size_t n, double now);
	/* Seconds until dispatch must run even with nothing readable (a
	 * reconnect's backoff, a nap's end): 0 when due (an overdue source says
	 * 0, not a negative number), < 0: never. NULL: never. The loop sleeps
	 * at most that long (rounded up to a millisecond) and then calls
	 * dispatch when this says 0. */
	double (*timeout)(const void *src);
	void (*stats)(const void *src, struct source_stats *out);
	enum source_role role;
	/* The counters others read by field, ending with a NULL name; NULL: none. */
	const struct source_field *fields;
	/* What the source reads, for the header ("http://host:8787"), or
	 * NULL. NULL op: nothing to show. */
	const char *(*target)(const void *src);
	void (*close)(void *src);
	/* Delivers task events (EV_TASK): the task view is offered while it is
	 * open. A flag, as it has no operation. */
	bool tasks;
	const struct source_senders *senders;
	const struct source_watch *watch;
	const struct source_run_hooks *run_hooks;
	const struct source_recorded *recorded;
};

/* The capabilities asked of a source, for any source: what one that has
 * not the capability (or the slot) answers is what the loop does without
 * it (no hint, no address, not busy, not ended, ...). */
const char *source_hint(const struct source_ops *ops, const void *src);
bool source_address(const struct source_ops *ops, const void *src,
		    struct sockaddr_storage *addr, socklen_t *len);
/* False: the source has no senders, or the datagram is not for it. */
bool source_take(const struct source_ops *ops, void *src, const char *buf, size_t len, int port,
		 double now);
const char *source_alert(const struct source_ops *ops, const void *src);
bool source_tick(const struct source_ops *ops, void *src);
void source_on_event(const struct source_ops *ops, void *src, const struct event *ev);
bool source_busy(const struct source_ops *ops, const void *src);
void source_finish(const struct source_ops *ops, void *src, double now);
const struct source_end *source_ended(const struct source_ops *ops, const void *src);

/* Appends a counter to st (dropped past SOURCE_COUNTERS_MAX); group as in
 * struct source_counter. */
void source_count(struct source_stats *st, const char *group, const char *name, uint64_t value);
/* Appends a figure (dropped past SOURCE_FIGURES_MAX). */
void source_figure(struct source_stats *st, const char *name, double value);

/* A source's statistics as an EV_COUNTERS payload (event.h), pointing
 * into st: how the app hands them to the model. */
void source_counters_event(const char *name, const struct source_stats *st,
			   struct ev_counters *out);
/* The other way: a source's counters as the model holds them (a replay's
 * copy of the recorded ones) as statistics, pointing into c (no figures). */
void source_stats_of(const struct ev_counters *c, struct source_stats *out);
/* Fills st->typed from st's counters, those of the registry's source named so. */
void source_stats_type(const char *name, struct source_stats *st);
/* A source's statistics now (its stats op), typed as well. */
void source_stats_read(const struct source_ops *ops, const void *src, struct source_stats *out);
/* c's counters by field, as the registry's source of c's name (c's
 * source) names them; role SOURCE_PLAIN and zeros for a name it lacks. */
void source_typed_of(const struct ev_counters *c, struct source_typed *out);
/* The name of the registry's source of that role (the one a source's
 * status events speak of), or "" when there is none. */
const char *source_role_name(enum source_role role);

/* Every source roastop has, NULL-terminated (src/source/source.c). */
extern const struct source_ops *const source_registry[];

#endif
