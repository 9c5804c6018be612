/* The app's alerts (app_alerts.h); docs/recording.md, "log", says which
 * notes are recorded and why. */
#include "roastop/app_alerts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/clock.h"
#include "roastop/format.h"

/* Short enough for an 80-column header: the reasons only; the event log
 * has the file and the directory. */
static void app_alerts_update(struct app_alerts *al)
{
	char *t = al->out;
	size_t n = sizeof(al->out);
	int ck = al->checkpoint_errno, rec = al->record_errno;
	if (ck && ck == rec)
		snprintf(t, n, "checkpoint failed, recording stopped: %s", strerror(ck));
	else if (ck && rec)
		snprintf(t, n, "checkpoint failed: %s; recording stopped: %s", strerror(ck),
			 strerror(rec));
	else if (ck || rec)
		snprintf(t, n, "%s: %s", ck ? "checkpoint failed" : "recording stopped",
			 strerror(ck ? ck : rec));
	else
		t[0] = '\0';
}

void app_alerts_record_failed(struct app_alerts *al, int e, const char *path, char *text)
{
	al->record_errno = e;
	snprintf(text, RUN_LOG_TEXT, "recording stopped: %s (%s ends with the last whole line)",
		 strerror(e), path);
	app_alerts_update(al);
}

bool app_alerts_write_outcome(struct app_alerts *al, int rc, int e, const char *err, char *text,
			      enum log_kind *kind)
{
	if (rc == 0 && al->checkpoint_errno) {
		snprintf(text, RUN_LOG_TEXT, "measurement written again, after %llu failed checkpoint%s",
			 (unsigned long long)al->checkpoints_failing,
			 al->checkpoints_failing == 1 ? "" : "s");
		al->checkpoint_errno = 0;
		al->checkpoints_failing = 0;
		*kind = LOG_INFO;
		app_alerts_update(al);
		return true;
	}
	if (rc == 0)
		return false;
	al->checkpoints_failing++;
	if (e == al->checkpoint_errno)
		return false;
	al->checkpoint_errno = e;
	snprintf(text, RUN_LOG_TEXT, "checkpoint failed: %s", err);
	*kind = LOG_ERROR;
	app_alerts_update(al);
	return true;
}

bool app_alerts_warning(struct app_alerts *al, uint64_t runs_total,
			const struct metrics_warning *w)
{
	if (al->runs_seen != runs_total) { /* a new run: its warnings are news */
		al->runs_seen = runs_total;
		al->n_warned = 0;
	}
	for (size_t k = 0; k < al->n_warned; k++)
		if (strcmp(al->warned[k], w->key) == 0)
			return false;
	if (al->n_warned == METRICS_MAX_WARNINGS)
		return false;
	al->warned[al->n_warned++] = w->key;
	return true;
}

/* Quiet: the run is going and has had no chunk since it began, the latest
 * scheduler sample (at most QUIET_FRESH seconds old) says tasks execute,
 * and both have held for QUIET_AFTER seconds. The likely cause is a
 * processor not decorated or workers that do not send here. */
#define QUIET_AFTER 15.0
#define QUIET_FRESH 10.0
void app_alerts_quiet(struct app_alerts *al, const struct run *r, const struct metrics *m,
		      double now, bool listening)
{
	double mono = clock_mono();
	optnum busy = m->tasks_executing_now;
	bool fresh = r->tl_executing.has_last && now - r->tl_executing.t_last < QUIET_FRESH;
	bool begun = r->started || r->begun;
	bool quiet = listening && !r->ended && r->n_chunks == 0 && fresh && busy.valid &&
		     busy.value >= 1;
	if (!quiet || r != al->quiet_run || begun != al->quiet_begun)
		al->quiet_since = NAN;
	al->quiet_run = r;
	al->quiet_begun = begun;
	al->quiet[0][0] = al->quiet[1][0] = '\0';
	if (!quiet)
		return;
	if (isnan(al->quiet_since))
		al->quiet_since = mono;
	if (mono - al->quiet_since < QUIET_AFTER)
		return;
	char n[FMT_LEN];
	format_num(n, busy, "%.0f");
	snprintf(al->quiet[0], sizeof(al->quiet[0]),
		 "scheduler runs %s tasks, no chunk arrived: is process() decorated and "
		 "ROASTOP_ADDR/KEY exported to this roastop?", n);
	snprintf(al->quiet[1], sizeof(al->quiet[1]),
		 "%s tasks run, no chunk came: process() decorated? ROASTOP_* exported?", n);
}

/* A step of the system clock moves no live time (clock.h): told when the
 * session's times part from the system's by a second or more. */
bool app_alerts_clock_step(struct app_alerts *al, char *text)
{
	double now = clock_mono();
	if (now < al->clock_checked_at + 1.0)
		return false;
	al->clock_checked_at = now;
	double off = clock_session_offset();
	if (fabs(off - al->clock_offset_told) < 1.0)
		return false;
	snprintf(text, RUN_LOG_TEXT, "system clock moved %+.1f s; roastop's times keep counting "
		 "from the session's start (%+.1f s from the system clock now)",
		 off - al->clock_offset_told, -off);
	al->clock_offset_told = off;
	return true;
}
