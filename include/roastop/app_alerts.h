/* The app's alerts: the output's (checkpoints failing, the recording
 * stopped), the metrics' warnings, the quiet alert and the system clock's
 * steps. A function with something to tell fills text (RUN_LOG_TEXT
 * bytes) and returns true; the app tells it. */
#ifndef ROASTOP_APP_ALERTS_H
#define ROASTOP_APP_ALERTS_H

#include "roastop/metrics.h"

struct app_alerts {
	/* errno of the failing checkpoints and of the recording's stop (0:
	 * none), and the header's alert made of them (ui_frame.out_alert) */
	int checkpoint_errno, record_errno;
	uint64_t checkpoints_failing; /* in a row, up to now */
	char out[128];
	/* the metrics said n/a in the event log (their warning's key), of the
	 * session's runs_seen-th run */
	uint64_t runs_seen;
	const char *warned[METRICS_MAX_WARNINGS];
	size_t n_warned;
	/* chunks that do not come while the scheduler runs tasks: the run
	 * looked at, since when (monotonic; NAN: not quiet), the alert whole
	 * and for 80 columns ("": none) */
	const struct run *quiet_run;
	bool quiet_begun;
	double quiet_since;
	char quiet[2][160];
	/* the system clock against the session's (clock.h), as last told */
	double clock_offset_told, clock_checked_at; /* seconds; monotonic */
};

void app_alerts_record_failed(struct app_alerts *al, int e, const char *path, char *text);
/* Told when checkpoints start failing or their reason changes, and at the
 * first success after. */
bool app_alerts_write_outcome(struct app_alerts *al, int rc, int e, const char *err, char *text,
			      enum log_kind *kind);
/* Whether a metric shown as n/a (w) is news: once per metric and run. */
bool app_alerts_warning(struct app_alerts *al, uint64_t runs_total,
			const struct metrics_warning *w);
/* Run r's quiet alert (m: its metrics at now) while a listener waits for
 * chunks with no key alert to explain their absence (listening). */
void app_alerts_quiet(struct app_alerts *al, const struct run *r, const struct metrics *m,
		      double now, bool listening);
bool app_alerts_clock_step(struct app_alerts *al, char *text); /* looked at once a second */

#endif
