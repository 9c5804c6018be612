/* The event log's notes and the header's alerts: app_note(), the one way
 * a line enters the log (docs/recording.md, "log"); the output's alert
 * (checkpoints failing, the recording stopped), the metrics' warnings, the
 * quiet alert and the system clock's steps. */
#include "apppriv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/clock.h"
#include "roastop/format.h"
#include "roastop/record.h"

/* A line into the newest run's log, as an EV_LOG through session_apply():
 * recorded or not as `how` says (docs/recording.md, "log", says which
 * notes are which and why). t: the session's "now" (app_now), or the
 * session's clock before any event. */
void app_note(struct app *a, double t, enum log_kind kind, const char *text,
	      enum app_note_how how)
{
	struct event ev = { .type = EV_LOG, .t = t };
	ev.u.log = (struct ev_log){ .level = kind, .text = text, .own = how == APP_NOTE_OWN };
	if (how == APP_NOTE_RECORDED)
		app_deliver(a, &ev);
	else if (how == APP_NOTE_DERIVED)
		app_apply(a, &ev);
	else
		session_apply(&a->ses, &ev);
}

/* Said at once, in all three places a user may be looking: stderr (held
 * while the dashboard is up), the event log, the header's alert (made by
 * the caller). About roastop's own output, not its input: not recorded,
 * stamped with the session's "now" (a replay's: the recording's time). */
static void app_tell(struct app *a, enum log_kind kind, const char *text)
{
	fprintf(stderr, "roastop: %s\n", text);
	app_note(a, app_now(a), kind, text, APP_NOTE_OWN);
}

/* Short enough for an 80-column header: the reasons only; the event log
 * has the file and the directory. */
static void app_alert_update(struct app *a)
{
	char *t = a->out_alert;
	size_t n = sizeof(a->out_alert);
	int ck = a->checkpoint_errno, rec = a->record_errno;
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

/* The recording ends at its first failure (record.h); the exit status
 * says so too (app_finish). */
void app_record_failed(struct app *a, int e)
{
	char text[RUN_LOG_TEXT];
	recorder_close(a->rec);
	a->rec = NULL;
	a->record_errno = e;
	snprintf(text, sizeof(text), "recording stopped: %s (%s ends with the last whole line)",
		 strerror(e), a->cfg->record_path);
	app_tell(a, LOG_ERROR, text);
	app_alert_update(a);
}

void app_record_flush(struct app *a)
{
	if (a->rec && recorder_flush(a->rec) != 0)
		app_record_failed(a, errno);
}

/* A failing checkpoint is told when it starts failing or its reason
 * changes, not every interval; the first write that succeeds after it
 * clears the alert and says so. */
void app_write_outcome(struct app *a, int rc, int e, const char *err)
{
	char text[RUN_LOG_TEXT];
	if (rc == 0 && a->checkpoint_errno) {
		snprintf(text, sizeof(text), "measurement written again, after %llu failed checkpoint%s",
			 (unsigned long long)a->checkpoints_failing, a->checkpoints_failing == 1 ? "" : "s");
		a->checkpoint_errno = 0;
		a->checkpoints_failing = 0;
		app_tell(a, LOG_INFO, text);
		app_alert_update(a);
	}
	if (rc == 0)
		return;
	a->checkpoints_failing++;
	if (e == a->checkpoint_errno)
		return;
	a->checkpoint_errno = e;
	snprintf(text, sizeof(text), "checkpoint failed: %s", err);
	app_tell(a, LOG_ERROR, text);
	app_alert_update(a);
}

/* A metric the screen shows as n/a because its inputs contradict each
 * other: why, once per metric, in the event log. */
void app_note_warnings(struct app *a, const struct metrics *m)
{
	if (a->runs_seen != a->ses.runs_total) { /* a new run: its warnings are news */
		a->runs_seen = a->ses.runs_total;
		a->n_warned = 0;
	}
	for (size_t i = 0; i < m->n_warnings; i++) {
		const struct metrics_warning *w = &m->warnings[i];
		bool seen = false;
		for (size_t k = 0; k < a->n_warned && !seen; k++)
			seen = strcmp(a->warned[k], w->key) == 0;
		if (seen || a->n_warned == METRICS_MAX_WARNINGS)
			continue;
		a->warned[a->n_warned++] = w->key;
		char text[RUN_LOG_TEXT];
		snprintf(text, sizeof(text), "%s n/a: %s", w->key, w->reason);
		fprintf(stderr, "roastop: %s\n", text);
		/* a replay derives it again from the same events, at the same tick */
		app_note(a, app_now(a), LOG_WARN, text, APP_NOTE_DERIVED);
	}
}

/* Nothing arrives while the scheduler shows tasks running: the run shown
 * is going and has had no chunk since it began, the latest scheduler sample (at most
 * QUIET_FRESH seconds old) says tasks execute, and both have held for
 * QUIET_AFTER seconds. The likely cause is a processor not decorated or
 * workers that do not send here; not said while the key alert explains it. */
#define QUIET_AFTER 15.0
#define QUIET_FRESH 10.0
void app_note_quiet(struct app *a, const struct run *r, const struct metrics *m)
{
	double now = clock_mono();
	optnum busy = m->tasks_executing_now;
	bool fresh = r->tl_executing.has_last && app_now(a) - r->tl_executing.t_last < QUIET_FRESH;
	bool begun = r->started || r->begun;
	bool quiet = app_hint(a) && !app_alert(a) && !r->ended && r->n_chunks == 0 && fresh &&
		     busy.valid && busy.value >= 1;
	if (!quiet || r != a->quiet_run || begun != a->quiet_begun)
		a->quiet_since = NAN;
	a->quiet_run = r;
	a->quiet_begun = begun;
	a->quiet_alert[0][0] = a->quiet_alert[1][0] = '\0';
	if (!quiet)
		return;
	if (isnan(a->quiet_since))
		a->quiet_since = now;
	if (now - a->quiet_since < QUIET_AFTER)
		return;
	char n[FMT_LEN];
	format_num(n, busy, "%.0f");
	snprintf(a->quiet_alert[0], sizeof(a->quiet_alert[0]),
		 "scheduler runs %s tasks, no chunk arrived: is process() decorated and "
		 "ROASTOP_ADDR/KEY exported to this roastop?", n);
	snprintf(a->quiet_alert[1], sizeof(a->quiet_alert[1]),
		 "%s tasks run, no chunk came: process() decorated? ROASTOP_* exported?", n);
}

/* A step of the system clock moves no live time (clock.h): the log says
 * when the session's times part from the system's by a second or more,
 * looked at once a second. A note about the input: recorded. */
void app_note_clock_step(struct app *a)
{
	double now = clock_mono();
	if (a->recorded || now < a->clock_checked_at + 1.0)
		return;
	a->clock_checked_at = now;
	double off = clock_session_offset();
	if (fabs(off - a->clock_offset_told) < 1.0)
		return;
	char text[RUN_LOG_TEXT];
	snprintf(text, sizeof(text), "system clock moved %+.1f s; roastop's times keep counting "
		 "from the session's start (%+.1f s from the system clock now)",
		 off - a->clock_offset_told, -off);
	a->clock_offset_told = off;
	app_note(a, app_now(a), LOG_WARN, text, APP_NOTE_RECORDED);
	if (a->headless)
		fprintf(stderr, "roastop: %s\n", text);
}
