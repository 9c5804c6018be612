/* What a run's numbers mean for it: findings, each with the numbers it
 * rests on and what to change. Pure functions of a run and its metrics, like
 * the metrics module: no I/O, no clocks (the caller's `now` is the end of a
 * live run, as for metrics_compute). Evaluated at each tick while the run
 * goes (live) and once more on its final state; the same rules either way.
 * The catalogue (formulas, thresholds, why): docs/diagnosis.md. */
#ifndef ROASTOP_DIAGNOSIS_H
#define ROASTOP_DIAGNOSIS_H

#include "roastop/metrics.h"
#include "roastop/run.h"

/* Most severe first when ordered. */
enum finding_severity { SEV_INFO = 0, SEV_WARNING, SEV_CRITICAL };

/* One finding per rule at most (the worst file, worker, ...): the
 * findings of a run fit a fixed array. */
enum finding_id {
	FIND_SILENT_RUN = 0, /* the scheduler runs tasks, no chunk arrives */
	FIND_SILENT_SCHEDULER, /* chunks arrive, the scheduler shows no task */
	FIND_TAIL, /* the run's end waited on a few chunks, cores idle */
	FIND_SLOW_FILE,
	FIND_SLOW_SITE, /* the host of files' URLs (root://host//...) */
	FIND_BAD_WORKER,
	FIND_SMALL_CHUNKS, /* time outside process() large against inside */
	FIND_MEMORY_GROWTH, /* one worker's memory grows chunk after chunk */
	FIND_MEMORY_PRESSURE, /* a worker near its limit, spilling or paused */
	FIND_IO_BOUND, /* process() waits off the CPU, the cores' rate low */
	FIND_IDLE_CLUSTER, /* threads without work: too few chunks, or queued elsewhere */
	FIND_FAILURES, /* chunks lost or retried, and where they concentrate */
	FIND_CPU_STARVED, /* process() waits for a CPU: more busy threads than cores */
	FIND_SLOWER_THAN_BEFORE, /* slower than the last comparable run; reads the others */
	FIND__COUNT
};

#define DIAG_TITLE_LEN 300
#define DIAG_EVIDENCE_LEN 640
#define DIAG_SUGGESTION_LEN 200

struct finding {
	enum finding_id id;
	enum finding_severity severity;
	char title[DIAG_TITLE_LEN]; /* one line, names the file/host/worker */
	char evidence[DIAG_EVIDENCE_LEN]; /* the numbers, with units */
	char suggestion[DIAG_SUGGESTION_LEN];
	/* When it began to hold, epoch seconds, read off the run's own
	 * timeline (each rule says which time: docs/diagnosis.md); NAN: not
	 * known */
	double since;
	/* what it cost, for the order among equal severities: a share of the
	 * run's time in [0, 1], or 0 when the rule has none */
	double cost;
};

struct findings {
	size_t n;
	struct finding f[FIND__COUNT]; /* most severe first, then by cost */
};

/* The last comparable run (previous.h finds it): what slower_than_before
 * compares the run with. */
struct diagnosis_previous {
	char dir[256]; /* its measurement directory's name */
	optnum rate_khz, workers; /* event_rate_elapsed_khz, avg_workers */
	char differs[64]; /* what of the identity differs; "" the same analysis */
	size_t n_ids;
	char ids[8][32]; /* its findings */
	char fell_file[96]; /* the file whose rate fell most (its end), "" none */
	optnum fell_percent; /* its change */
};

/* What the caller knows and the run does not hold. */
struct diagnosis_context {
	double now; /* the end of a live run, as metrics_compute's */
	bool listening; /* a source has senders that should send chunks */
	bool key_alert; /* it already explains their silence */
	const struct diagnosis_previous *previous; /* NULL: none known */
};

/* Fills out with every rule that holds for r (measured as m). */
void diagnosis_evaluate(const struct run *r, const struct metrics *m,
			const struct diagnosis_context *ctx, struct findings *out);
/* The findings the files and /metrics carry, of those evaluated: all but
 * the silent run, which is about the listener (the screen's). */
void diagnosis_of_record(const struct findings *all, struct findings *out);
/* The most severe finding, or NULL: a healthy run. */
const struct finding *diagnosis_top(const struct findings *fs);
/* "tail", "slow_file", ...: metrics.json's id, the OpenMetrics label. */
const char *diagnosis_id_name(enum finding_id id);
/* "info", "warning", "critical". */
const char *diagnosis_severity_name(enum finding_severity s);

#endif
