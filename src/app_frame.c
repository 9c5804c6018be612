/* The runs' snapshots (app_snap: taken by the tick and at a run's close)
 * and their readers: the run list's figures (EV_ROW_FIGURES), the writes,
 * the summary, the dashboard. Drawing changes nothing of the session. */
#include "apppriv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/fsutil.h"
#include "roastop/metrics_tasks.h"
#include "roastop/serve.h"
#include "roastop/strbuf.h"
#include "roastop/timer.h"

/* The session's runs as a snapshot was taken among them: a run's pointer
 * is still its own while none opened, was summarised or dropped since
 * (three counters that only grow). */
static uint64_t app_frame_key(const struct app *a)
{
	return a->ses.runs_total + a->ses.runs_summarised + a->ses.rows_dropped;
}

/* Where run r's snapshot is or goes: its old one's (no run has two), else
 * the least used lately. */
static struct app_snap *app_snap_slot(struct app *a, const struct run *r)
{
	struct app_snap *slot = &a->snaps[0];
	for (size_t i = 0; i < APP_SNAPS_KEPT; i++) {
		if (a->snaps[i].run == r && a->snaps[i].used)
			return &a->snaps[i];
		if (a->snaps[i].used < slot->used)
			slot = &a->snaps[i];
	}
	return slot;
}

/* Is s run r's, taken among the session's runs as they are? */
static bool app_snap_current(const struct app *a, const struct app_snap *s, const struct run *r)
{
	return s->used && s->run == r && s->key == app_frame_key(a);
}

/* Measured again only when the run has changed (run.changes) or "now" has
 * moved; its findings are evaluated at their first read (app_snap). */
struct app_snap *app_snap_take(struct app *a, const struct run *r)
{
	double now = app_now(a);
	struct app_snap *s = app_snap_slot(a, r);
	bool same = app_snap_current(a, s, r) && s->changes == (r ? r->changes : 0) && s->now == now;
	s->used = ++a->snap_uses;
	if (same)
		return s;
	struct metrics_options opt = { .processor_prefix = a->cfg->processor_prefix };
	metrics_compute(r, now, &opt, &s->m);
	s->run = r;
	s->changes = r ? r->changes : 0;
	s->now = now;
	s->key = app_frame_key(a);
	s->diagnosed = false;
	return s;
}

static void app_diagnose(struct app *a, struct app_snap *s)
{
	struct diagnosis_context ctx = { .now = s->now,
					 .listening = app_sources_hint(&a->src) != NULL,
					 .key_alert = app_sources_alert(&a->src) != NULL };
	struct diagnosis_previous before; /* a run's last evaluation waits for its look */
	const struct past_run *prev =
		app_previous_of(&a->prev, s->run, s->run && (s->run->ended || a->finishing));
	if (prev) {
		previous_for_diagnosis(prev, s->run, &s->m, &before);
		ctx.previous = &before;
	}
	s->all.n = 0;
	if (s->run)
		diagnosis_evaluate(s->run, &s->m, &ctx, &s->all);
	diagnosis_of_record(&s->all, &s->record);
	s->diagnosed = true;
	a->n_diagnoses++;
}

/* One is taken when there is none (a run opened since the tick). */
const struct app_snap *app_snap(struct app *a, const struct run *r, bool diagnosed)
{
	struct app_snap *s = app_snap_slot(a, r);
	if (!app_snap_current(a, s, r))
		s = app_snap_take(a, r);
	if (diagnosed && !s->diagnosed)
		app_diagnose(a, s);
	return s;
}

/* The run list's figures of run r (session.h), to its row. */
static void app_figures(struct app *a, const struct run *r, const struct metrics *m)
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

/* The run picked in the run list while kept in detail, else the newest. */
static const struct run *app_shown(const struct app *a)
{
	size_t k = a->ui ? ui_picked_run(a->ui, &a->ses) : 0;
	if (k && k <= a->ses.n_rows && a->ses.rows[k - 1].run)
		return a->ses.rows[k - 1].run;
	return session_newest(&a->ses);
}

/* The snapshots of the tick: every run not closed (or changed since its
 * close) and the shown run, the rows' figures, the quiet alert. Also
 * before a frame of a replay when events came since, and before a write
 * finds its run changed since its snapshot: a file never holds less than
 * the events read. Each is counted as a tick (roastop_ticks). */
void app_refresh(struct app *a)
{
	a->n_ticks++;
	a->refreshed_at = a->t_latest;
	app_sources_stats(&a->src, &a->ses.counters);
	const struct run *shown = app_shown(a);
	bool settled = false; /* the shown run is closed: its snapshot is its close's */
	for (size_t i = 0; i < a->ses.n_rows; i++) {
		const struct session_run *row = &a->ses.rows[i];
		if (row->run && (!row->closed || row->dirty))
			app_figures(a, row->run, &app_snap_take(a, row->run)->m);
		else if (row->run == shown)
			settled = true;
	}
	const struct app_snap *s = settled ? app_snap(a, shown, false) : app_snap_take(a, shown);
	bool was = a->alerts.quiet[0][0] != '\0';
	app_alerts_quiet(&a->alerts, shown, &s->m, app_now(a),
			 app_sources_hint(&a->src) && !app_sources_alert(&a->src));
	if (a->headless && !was && a->alerts.quiet[0][0])
		fprintf(stderr, "roastop: %s\n", a->alerts.quiet[0]);
}

/* metrics.json's roastop block of run r (metrics_extra.h), to free; NULL
 * when out of memory (no block is written). */
static struct metrics_extra_input *app_extra(const struct app *a, const struct run *r)
{
	struct metrics_extra_input *in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	*in = (struct metrics_extra_input){ .ses = &a->ses, .serve_error = a->serve_error,
					    .serve_failures = a->serve_failures };
	if (a->srv) {
		struct serve_stats st;
		serve_get_stats(a->srv, &st);
		serve_stats_counters(&st, &in->serve_counters);
		in->serve_listen = serve_address(a->srv);
	}
	in->n_recorded = app_sources_recorded_stats(&a->src, in->recorded_names,
						    in->recorded_stats, METRICS_EXTRA_RECORDED);
	in->tasks = r && app_sources_tasks_fed(&a->ses.counters, r, &in->tasks_feed, &in->tasks_fed);
	/* a run's last write waits for the look at its previous run */
	in->previous = app_previous_of(&a->prev, r, r && (r->ended || a->finishing));
	return in;
}

/* One run's measurement from its snapshot (closing: one taken now, else
 * the tick's), its row told how it went: -1 with errno and err. */
static int app_write_run(struct app *a, const struct session_run *row, bool closing, char *err,
			 size_t errsz)
{
	const struct run *r = row->run;
	if (closing)
		app_snap_take(a, r);
	else if (app_snap(a, r, false)->changes != r->changes)
		app_refresh(a); /* a chunk came since the tick: the write holds it */
	const struct app_snap *s = app_snap(a, r, true);
	app_figures(a, r, &s->m);
	struct metrics_extra_input *extra = app_extra(a, r);
	struct event ev = { .type = EV_ROW_WRITE, .t = app_now(a) };
	int rc = app_output_write(&a->out, &a->ses, row, &s->m, &s->record, extra, &ev.u.row_write,
				  err, errsz);
	int saved = errno;
	free(extra);
	session_apply(&a->ses, &ev);
	errno = saved;
	return rc;
}

/* Every run not closed (and one changed since its close), the outcome
 * told: 0, or the last failure's -1 with errno and err. */
int app_write_open(struct app *a, char *err, size_t errsz)
{
	int rc = 0, e = 0;
	for (size_t i = 0; i < a->ses.n_rows; i++) {
		const struct session_run *row = &a->ses.rows[i];
		if (!row->run || (row->closed && !row->dirty))
			continue;
		if (app_write_run(a, row, false, err, errsz) != 0) {
			rc = -1;
			e = errno;
		}
	}
	app_write_outcome(a, rc, e, err);
	errno = e;
	return rc;
}

/* A run closes (session.h): its final measurement; a failed one is tried
 * again at the next checkpoint and at the exit (the row stays dirty). */
void app_run_closed(void *ctx, struct session_run *row)
{
	struct app *a = ctx;
	char err[512] = "";
	int rc = app_write_run(a, row, true, err, sizeof(err));
	int e = errno;
	if (rc != 0 && a->finishing) {
		a->finish_failed = true;
		fprintf(stderr, "roastop: could not write the measurement: %s\n", err);
	}
	app_write_outcome(a, rc, e, err);
}

int app_print_summary(struct app *a)
{
	const struct run *newest = session_newest(&a->ses);
	const struct app_snap *s = app_snap(a, newest, true);
	struct metrics_extra_input *extra = app_extra(a, newest); /* its summary.txt, tasks too */
	int rc = app_output_summary(&a->out, &a->ses, &s->m, &s->record, extra, a->stop_reason);
	free(extra);
	return rc;
}

/* Draws what the tick took; changes nothing of the session. */
void app_ui_draw(struct app *a)
{
	const struct run *shown = app_shown(a);
	const struct app_snap *s = app_snap(a, shown, true);
	const struct app_stats *st = &a->src.stats;
	struct ui_frame f = {
		.run = shown,
		.session = &a->ses,
		.m = &s->m,
		.sources = st->ui,
		.n_sources = st->n,
		.out_dir = a->out.root,
		.out_alert = a->alerts.out[0] ? a->alerts.out : NULL,
		.key_alert = app_sources_alert(&a->src),
		.quiet_alert = { a->alerts.quiet[0][0] ? a->alerts.quiet[0] : NULL, a->alerts.quiet[1] },
		.emitter_hint = app_sources_hint(&a->src),
		.now = app_now(a),
		.findings = &s->all,
		.past = app_previous_past(&a->prev, &a->ses,
					  !a->src.recorded && ui_showing(a->ui, UI_VIEW_RUNS)),
	};
	const struct past_run *prev = app_previous_of(&a->prev, shown, false);
	if (prev) {
		f.previous_rate_khz = prev->rate_khz;
		f.previous_eta = previous_eta(prev, &s->m);
	}
	struct source_typed feed;
	bool fed;
	if (app_sources_tasks_fed(&a->ses.counters, shown, &feed, &fed)) { /* the task view */
		f.tasks = &shown->tasks;
		f.tasks_state = fed ? metrics_tasks_feed_state(&feed) : NULL;
	}
	ui_draw(a->ui, &f);
}

/* The emitter line in a file beside the key (KEY.env, 0600) for a shell to
 * source, where a terminal cannot copy it whole. */
static void app_write_emitter(struct app *a)
{
	char path[PATH_MAX + 16];
	const char *hint = app_sources_hint(&a->src);
	if (!hint) {
		ui_message(a->ui, "no listener in a replay: no emitter line to write");
		return;
	}
	if (a->cfg->no_auth)
		snprintf(path, sizeof(path), "%s/roastop.env", a->out.root);
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
	if (app_write_open(a, err, sizeof(err)) == 0)
		ui_message(a->ui, "measurement written under %s", a->out.root);
	else
		ui_message(a->ui, "could not write the measurement: %s", err);
}

void app_ui_input(struct app *a)
{
	unsigned act = ui_input(a->ui);
	if (act & UI_QUIT) {
		app_stop(a, "q pressed");
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
 * hold one (said). */
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
	if (app_sources_hint(&a->src)) /* what was printed before the screen opened, again */
		ui_message(a->ui, "emitters: ? shows the export line, w writes it to a file");
	double iv = ui_interval(a->ui);
	timer_set_periodic(a->fds[FD_FRAME], iv, iv);
	app_sources_stats(&a->src, &a->ses.counters);
	app_ui_draw(a);
}

void app_close_ui(struct app *a)
{
	ui_close(a->ui);
	a->ui = NULL;
	a->fds[FD_UI] = -1; /* closed with the UI */
}
