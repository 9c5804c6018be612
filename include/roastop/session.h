/* A session: every run roastop sees between its start and its exit, each
 * with its own state (run.h). session_apply() routes each event to the run
 * it belongs to: a chunk or report by its run_id (a late chunk of an ended
 * run goes to that run), the scheduler's data to every run still going.
 * While no run is going, a "watch" run takes the scheduler's data; the
 * next run to begin takes it over (its totals count from its start), and
 * when the session ends without any run, the watch is its one implicit run.
 *
 * Memory: the runs' tables share one byte pool (SESSION_TABLE_BYTES, one
 * run's worst case in docs/architecture.md), and at most
 * SESSION_DETAIL_RUNS runs are kept in detail; an older run that has ended
 * keeps only its row (session_run), counted in runs_summarised. */
#ifndef ROASTOP_SESSION_H
#define ROASTOP_SESSION_H

#include "roastop/beats.h"
#include "roastop/counters.h"
#include "roastop/event.h"
#include "roastop/run.h"
#include "roastop/strmap.h"

#define SESSION_DETAIL_RUNS 8
#define SESSION_MAX_RUNS 1024 /* rows; past it the oldest row goes (rows_dropped) */
#define SESSION_TABLE_BYTES ((size_t)59 << 20)
/* An ended run still takes the scheduler's data this long (its last fine
 * metrics come after its end), then it is closed: its final figures. */
#define SESSION_SETTLE 1.0
#define SESSION_DIR_LEN 192

/* A run's line in the run list, from the metrics module (the app sends
 * it as an EV_ROW_FIGURES at each refresh and each write); all that is
 * left of a summarised run. */
struct session_figures {
	double t_start; /* wall seconds; NAN when unknown */
	optnum elapsed, chunks, failed, events, event_rate_hz;
};

struct session_run {
	char run_id[64]; /* the collector's; roastop's "implicit-N" when it has none */
	bool own_id; /* run_id is roastop's */
	char name[RUN_NAME_LEN];
	char dir[SESSION_DIR_LEN]; /* its measurement directory's name; "" until written
				    * (EV_ROW_WRITE) */
	bool implicit; /* no run_start: no collector */
	bool closed; /* ended and settled */
	bool dirty; /* changed after its close (a late chunk): written again */
	int write_errno; /* why its last write failed (EV_ROW_WRITE); 0 after a success */
	enum run_status status;
	struct run *run; /* NULL once only this row is kept */
	struct session_figures fig;
	uint64_t late_lost; /* its chunks that came after it was summarised */
};

/* Called as a run closes (ended and settled, or at EV_CLOSE_ALL), before
 * anything of it can be dropped: the app writes its measurement and says
 * how it went (EV_ROW_FIGURES, EV_ROW_WRITE through session_apply). */
typedef void (*session_close_fn)(void *ctx, struct session_run *row);

struct session {
	struct session_run *rows; /* oldest first */
	size_t n_rows;
	struct run *watch; /* NULL while a run takes the scheduler's data */
	struct strmap_pool pool;
	struct beats beats; /* heartbeats: workers when no scheduler is connected */
	struct counters counters; /* each source's latest statistics (EV_COUNTERS) */
	uint64_t runs_total, runs_summarised, rows_dropped, runs_refused;
	uint64_t late_lost, unrouted;
	session_close_fn on_close;
	void *ctx;
};

/* 0, or -1 when out of memory. */
int session_init(struct session *s, session_close_fn on_close, void *ctx);
void session_destroy(struct session *s);
/* Routes ev to its run(s): 0 when some run applied it, 1 when none did. A
 * log line goes to the newest run's log (session_newest), a source's
 * counters to the session's (s->counters), roastop's own changes (event.h's
 * internal kinds: a row's figures and write, the settled runs' close, the
 * exit's) to the session. The only way the session and its runs change
 * after session_init. */
int session_apply(struct session *s, const struct event *ev);
/* Would an event at `now` close a run? (the app then brings the sources'
 * counters up to date first: a run is written at its close) */
bool session_due(const struct session *s, double now);
/* The run the dashboard follows: the newest row's, else the watch. */
const struct run *session_newest(const struct session *s);
/* A row in lists: its name, else its run_id (every row has one). */
const char *session_run_label(const struct session_run *row);

#endif
