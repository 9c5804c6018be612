/* The runs' metrics as the tick measures them (app_metrics: once for each
 * run's state and "now"), the run list's figures (EV_ROW_FIGURES), and the
 * dashboard: the frame assembled from what the tick measured, its keys.
 * Drawing changes nothing of the session. */
#include "apppriv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/fsutil.h"
#include "roastop/metrics_tasks.h"
#include "roastop/strbuf.h"
#include "roastop/timer.h"

/* The session's runs are those the frame's metrics were measured among:
 * no run opened, summarised or dropped since (a run's pointer is then
 * still its own). */
static void app_frame_key(const struct app *a, uint64_t key[3])
{
	key[0] = a->ses.runs_total;
	key[1] = a->ses.runs_summarised;
	key[2] = a->ses.rows_dropped;
}

static bool app_kept_is(const struct app_kept *k, const struct run *r, double now,
			const uint64_t key[3])
{
	return k->used && k->run == r && k->changes == (r ? r->changes : 0) && k->now == now &&
	       memcmp(k->key, key, sizeof(k->key)) == 0;
}

/* Where run r's metrics go: its old ones', else the least used lately. */
static struct app_kept *app_kept_slot(struct app *a, const struct run *r)
{
	struct app_kept *slot = &a->kept[0];
	for (size_t i = 0; i < APP_METRICS_KEPT; i++) {
		if (a->kept[i].run == r && a->kept[i].used)
			return &a->kept[i];
		if (a->kept[i].used < slot->used)
			slot = &a->kept[i];
	}
	return slot;
}

/* Run r's metrics at the session's "now": measured once, and again only
 * when the run has changed (run.changes), "now" has moved or the session's
 * runs are others; the tick, the frame, the run list, checkpoints, the
 * writes and the server all read them here. Valid until the next call. */
const struct metrics *app_metrics(struct app *a, const struct run *r)
{
	uint64_t key[3];
	app_frame_key(a, key);
	double now = app_now(a);
	for (size_t i = 0; i < APP_METRICS_KEPT; i++) {
		if (app_kept_is(&a->kept[i], r, now, key)) {
			a->kept[i].used = ++a->kept_uses;
			return &a->kept[i].m;
		}
	}
	struct app_kept *k = app_kept_slot(a, r);
	struct metrics_options opt = { .processor_prefix = a->cfg->processor_prefix };
	metrics_compute(r, now, &opt, &k->m);
	k->run = r;
	k->changes = r ? r->changes : 0;
	k->now = now;
	memcpy(k->key, key, sizeof(key));
	k->used = ++a->kept_uses;
	return &k->m;
}

/* The run list's figures of run r, from its metrics (session.h), as an
 * event to its row. */
void app_figures(struct app *a, const struct run *r, const struct metrics *m)
{
	struct event ev = { .type = EV_ROW_FIGURES, .t = app_now(a) };
	ev.u.row_figures = (struct ev_row_figures){
		.run = r,
		.t_start = m->elapsed_time_seconds.valid ? m->t_start : NAN,
		.elapsed = m->elapsed_time_seconds,
		.chunks = m->num_chunks,
		.failed = m->num_failed_chunks,
		.events = m->total_events,
		.event_rate_hz = m->event_rate_elapsed_khz.valid
					 ? optnum_of(m->event_rate_elapsed_khz.value * 1e3)
					 : optnum_none(),
	};
	session_apply(&a->ses, &ev);
}

/* The run the dashboard shows: the one picked in the run list while it
 * is kept in detail, else the newest. */
static const struct run *app_shown(const struct app *a)
{
	size_t k = a->ui ? ui_picked_run(a->ui, &a->ses) : 0;
	if (k && k <= a->ses.n_rows && a->ses.rows[k - 1].run)
		return a->ses.rows[k - 1].run;
	return session_newest(&a->ses);
}

/* ---- findings (docs/diagnosis.md): the frame's, evaluated by the first
 * frame after each tick (app_refresh marks them stale) or after another
 * run is picked. Only a frame reads them, so a headless replay evaluates
 * none: the files evaluate their own at the write. ---- */

static void app_diagnose_run(struct app *a, const struct run *r, const struct metrics *m)
{
	struct diagnosis_context ctx = { .now = app_now(a), .listening = app_hint(a) != NULL,
					 .key_alert = app_alert(a) != NULL };
	a->findings.n = 0;
	if (r)
		diagnosis_evaluate(r, m, &ctx, &a->findings);
	a->findings_run = r;
	a->findings_stale = false;
}

static const struct findings *app_frame_findings(struct app *a, const struct run *shown,
						 const struct metrics *m)
{
	if (a->findings_stale || shown != a->findings_run)
		app_diagnose_run(a, shown, m);
	return &a->findings;
}

/* The view's figures: the rows' going on, the shown run's metrics, the
 * quiet alert. At each tick, and before a frame when events came since
 * the last (a replay waiting for input shows what it has read): what no
 * file reads, so its times do not matter. */
void app_refresh(struct app *a)
{
	a->refreshed_at = a->t_latest;
	for (size_t i = 0; i < a->ses.n_rows; i++) {
		const struct run *r = a->ses.rows[i].run;
		if (r && !a->ses.rows[i].closed)
			app_figures(a, r, app_metrics(a, r));
	}
	const struct run *shown = app_shown(a);
	a->frame_m = *app_metrics(a, shown);
	a->frame_run = shown;
	app_frame_key(a, a->frame_key);
	bool was = a->quiet_alert[0][0] != '\0';
	app_note_quiet(a, a->frame_run, &a->frame_m);
	if (a->headless && !was && a->quiet_alert[0][0])
		fprintf(stderr, "roastop: %s\n", a->quiet_alert[0]);
	a->findings_stale = true; /* the next frame evaluates the live findings */
}

/* A frame between ticks may show another run than the tick measured (a
 * run picked, a run opened): that one's metrics. No state of the session
 * changes. */
static const struct metrics *app_frame_metrics(struct app *a)
{
	uint64_t key[3];
	app_frame_key(a, key);
	const struct run *shown = app_shown(a);
	if (shown != a->frame_run || memcmp(key, a->frame_key, sizeof(key)) != 0) {
		a->frame_m = *app_metrics(a, shown);
		a->frame_run = shown;
		memcpy(a->frame_key, key, sizeof(key));
	}
	return &a->frame_m;
}

/* Draws what the tick computed; changes nothing of the session. */
void app_ui_draw(struct app *a)
{
	const struct metrics *m = app_frame_metrics(a);
	const struct run *shown = a->frame_run;
	struct app_stats *st = app_stats(a);
	struct ui_frame f = {
		.run = shown,
		.session = &a->ses,
		.m = m,
		.sources = st ? st->ui : NULL,
		.n_sources = st ? st->n : 0,
		.out_dir = a->out_dir,
		.out_alert = a->out_alert[0] ? a->out_alert : NULL,
		.key_alert = app_alert(a),
		.quiet_alert = { a->quiet_alert[0][0] ? a->quiet_alert[0] : NULL, a->quiet_alert[1] },
		.emitter_hint = app_hint(a),
		.now = app_now(a),
		.findings = app_frame_findings(a, shown, m),
	};
	struct source_typed feed;
	bool fed;
	if (app_tasks_fed(a, shown, &feed, &fed)) { /* the task view, with its feed's state */
		f.tasks = &shown->tasks;
		f.tasks_state = fed ? metrics_tasks_feed_state(&feed) : NULL;
	}
	ui_draw(a->ui, &f);
	free(st);
}

/* The emitter line in a file beside the key (KEY.env, 0600) for a shell
 * to source, where a terminal cannot copy it whole. */
static void app_write_emitter(struct app *a)
{
	char path[PATH_MAX + 16];
	const char *hint = app_hint(a);
	if (!hint) {
		ui_message(a->ui, "no listener in a replay: no emitter line to write");
		return;
	}
	if (a->cfg->no_auth)
		snprintf(path, sizeof(path), "%s/roastop.env", a->out_dir);
	else
		snprintf(path, sizeof(path), "%s.env", a->key.path);
	struct strbuf line;
	strbuf_init(&line);
	strbuf_appendf(&line, "%s\n", hint);
	int rc = line.failed ? -1 : fsutil_write_private(path, line.data);
	strbuf_free(&line);
	if (rc != 0)
		ui_message(a->ui, "could not write %s: %s", path, strerror(errno));
	else
		ui_message(a->ui, "emitter line written to %s; in the analysis's shell: . %s", path, path);
}

/* w: every run not written since it changed, now. */
static void app_write_now(struct app *a)
{
	if (a->ses.n_rows == 0) {
		ui_message(a->ui, "no run yet: nothing to write (watching only is written at the exit)");
		return;
	}
	char err[512] = "";
	int rc = app_write_open(a, err, sizeof(err));
	app_write_outcome(a, rc, errno, err);
	if (rc == 0)
		ui_message(a->ui, "measurement written under %s", a->out_dir);
	else
		ui_message(a->ui, "could not write the measurement: %s", err);
}

void app_ui_input(struct app *a)
{
	unsigned act = ui_input(a->ui);
	if (act & UI_QUIT) {
		a->stop = true;
		a->stop_reason = "q pressed";
		return;
	}
	if (act & UI_WRITE_NOW)
		app_write_now(a);
	if (act & UI_WRITE_EMITTER)
		app_write_emitter(a);
	if (act & UI_INTERVAL_CHANGED) {
		double iv = ui_interval(a->ui);
		timer_set_periodic(a->fds[FD_FRAME], iv, iv);
	}
	if (act & UI_REDRAW)
		app_ui_draw(a);
}

/* The dashboard, unless headless was asked for or the terminal cannot
 * hold one (then roastop says why and runs headless). */
void app_open_ui(struct app *a)
{
	const struct app_config *c = a->cfg;
	a->headless = c->headless;
	if (a->headless)
		return;
	struct ui_config uc = { .theme = c->theme, .no_color = c->no_color, .ascii = c->ascii };
	char err[512];
	a->ui = ui_open(&uc, err, sizeof(err));
	if (!a->ui) {
		fprintf(stderr, "roastop: no dashboard: %s; running headless\n", err);
		a->headless = true;
		return;
	}
	a->fds[FD_UI] = ui_fd(a->ui);
	if (app_hint(a)) /* what was printed before the screen opened, again */
		ui_message(a->ui, "emitters: ? shows the export line, w writes it to a file");
	double iv = ui_interval(a->ui);
	timer_set_periodic(a->fds[FD_FRAME], iv, iv);
	app_ui_draw(a);
}

void app_close_ui(struct app *a)
{
	ui_close(a->ui);
	a->ui = NULL;
	a->fds[FD_UI] = -1; /* closed with the UI */
}
