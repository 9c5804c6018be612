/* The emitter's heartbeats (docs/protocol.md, "heartbeat") as worker
 * timelines: a table of analysis processes keyed by host:pid, and from it a
 * sample (EV_SAMPLE, source "heartbeat") that the session applies as it
 * would a scheduler's, so runs without Dask get workers, memory and CPU.
 * When a scheduler's samples are coming, the scheduler wins and no sample
 * is made (docs/metrics.md, "Workers without a scheduler"). Everything here
 * is decided by event times alone: a replay makes the same samples. */
#ifndef ROASTOP_BEATS_H
#define ROASTOP_BEATS_H

#include "roastop/event.h"
#include "roastop/strmap.h"

#define BEATS_MAX 1024u /* processes tracked at once; more are counted, not kept */
#define BEATS_MISSED 5.0 /* beats missed (at the process's interval): departed */
#define BEATS_DEPART_MIN 5.0 /* seconds, however short the interval */
#define BEATS_SAMPLE_EVERY 1.0 /* seconds between the samples made */
/* the sample's source: a run counts the samples its workers' heartbeats made */
#define BEATS_SAMPLE_SOURCE "heartbeat"
#define BEATS_SCHEDULER_QUIET 10.0 /* seconds since a scheduler sample before beats count */

struct beat_proc {
	double t_last; /* receive time of its latest beat */
	double depart; /* seconds of silence after which it has departed */
	double t_cpu, cpu; /* the previous beat's time and cpu_time: the CPU rate */
	optnum pid, rss, cpu_pct, in_flight;
	char host[128], worker[128];
};

struct beats {
	struct strmap procs; /* "host:pid" -> struct beat_proc */
	double t_sample; /* the latest sample made; -inf: none */
	double t_scheduler; /* the latest sample from a scheduler; -inf: none */
	uint64_t received, overflow, departed, samples;
	struct event sample; /* the sample made, reused */
};

void beats_init(struct beats *b);
void beats_free(struct beats *b);
/* Charges the process table to pool (a session's, as a run's tables are). */
void beats_set_pool(struct beats *b, struct strmap_pool *pool);
/* A scheduler's sample at t: heartbeats make none for BEATS_SCHEDULER_QUIET. */
void beats_saw_scheduler(struct beats *b, double t);
/* Takes a heartbeat event (NULL: none, only time passing) at time t: the
 * sample to apply now, or NULL when none is due (made at once when a
 * process joins or departs, else at most once per BEATS_SAMPLE_EVERY). The
 * sample stays valid until the next call. */
const struct event *beats_apply(struct beats *b, const struct ev_heartbeat *hb, double t);

#endif
