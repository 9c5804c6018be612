/* What the app writes: each run's measurement directory (named at its
 * first write, after its start and name), the `latest` link, checkpoints,
 * a run's final write as it closes, and the summary on standard output at
 * the exit. A write's outcome (the directory's name, its errno, whether a
 * closed run must be written again) goes to the run's row as an event
 * (EV_ROW_WRITE); the alerts of writing are app_alerts.c's. */
#include "apppriv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/counters.h"
#include "roastop/format.h"
#include "roastop/fsutil.h"
#include "roastop/measurement.h"
#include "roastop/metrics_extra.h"
#include "roastop/metrics_tasks.h"
#include "roastop/report_text.h"
#include "roastop/serve.h"
#include "roastop/strbuf.h"

/* Run r's task model is shown and written when the registry's source of
 * task events has delivered its counters (live, or in the recording
 * replayed: feed is then the model's copy of them) or r has tasks. From
 * events, so a replay shows and writes what the live session did. */
bool app_tasks_fed(const struct app *a, const struct run *r, struct source_typed *feed,
		   bool *fed)
{
	*fed = false;
	struct ev_counters c;
	struct source_typed t;
	for (const struct source_ops *const *ops = source_registry; *ops; ops++) {
		if (!(*ops)->tasks || !counters_find(&a->ses.counters, (*ops)->name, &c))
			continue;
		source_typed_of(&c, &t);
		bool measured = metrics_tasks_feed_measured(&t);
		if (!*fed || measured) /* the first feed, unless a later one measured */
			*feed = t;
		*fed = true;
		if (measured)
			break;
	}
	return *fed || (r && r->tasks.count);
}

/* metrics.json's roastop block of run r (metrics_extra.h): what the
 * session, the server and the sources of recorded events say; the
 * caller frees it. NULL when out of memory (no block is written). */
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
	for (size_t i = 0; i < a->n_src && in->n_recorded < METRICS_EXTRA_RECORDED; i++) {
		const struct app_source *as = &a->src[i];
		if (!as->ops->recorded || !as->ops->stats)
			continue;
		in->recorded_names[in->n_recorded] = as->ops->name;
		as->ops->stats(as->s, &in->recorded_stats[in->n_recorded++]);
	}
	in->tasks = r && app_tasks_fed(a, r, &in->tasks_feed, &in->tasks_fed);
	/* a run's last write waits for the look at its previous run */
	in->previous = app_previous_of(a, r, r && (r->ended || a->finishing));
	return in;
}

/* Is name taken by another run of the session, or by anything on disk? */
static bool app_dir_taken(const struct app *a, const struct session_run *self, const char *name)
{
	for (size_t i = 0; i < a->ses.n_rows; i++)
		if (&a->ses.rows[i] != self && strcmp(a->ses.rows[i].dir, name) == 0)
			return true;
	char path[PATH_MAX + SESSION_DIR_LEN + 2];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", a->out_dir, name);
	return lstat(path, &st) == 0;
}

/* A run's directory: named at its first write, after its start and name;
 * "-2", "-3"... when that is taken. */
static void app_name_dir(const struct app *a, const struct session_run *row,
			 const struct metrics *m, char *dir, size_t size)
{
	char base[SESSION_DIR_LEN - 8];
	measurement_dir_name(base, sizeof(base), m->elapsed_time_seconds.valid ? m->t_start : NAN,
			     row->run->name);
	snprintf(dir, size, "%s", base);
	for (unsigned k = 2; app_dir_taken(a, row, dir) && k < 1000000; k++)
		snprintf(dir, size, "%s-%u", base, k);
}

/* latest -> the newest run written (dir: row's directory). */
static int app_link_latest(const struct app *a, const struct session_run *row, const char *dir,
			   char *err, size_t errsz)
{
	for (const struct session_run *r = row + 1; r < a->ses.rows + a->ses.n_rows; r++)
		if (r->dir[0])
			return 0;
	return measurement_link_latest(a->out_dir, dir, err, errsz);
}

/* The write's outcome, to the row: its directory's name at the first
 * write, the measurement's errno (GET .../metrics.json says it,
 * serve_route.h) and whether it failed (a closed run is written again). */
static void app_written(struct app *a, const struct run *r, const char *dir, int write_errno,
			bool failed)
{
	struct event ev = { .type = EV_ROW_WRITE, .t = app_now(a) };
	ev.u.row_write = (struct ev_row_write){ .run = r, .dir = dir, .write_errno = write_errno,
						.failed = failed };
	session_apply(&a->ses, &ev);
}

/* Writes one run's measurement from its snapshot (closing: one taken now,
 * else the tick's): -1 with the cause in errno and a line in err when it
 * fails. */
static int app_write_run(struct app *a, const struct session_run *row, bool closing, char *err,
			 size_t errsz)
{
	const struct run *r = row->run;
	if (closing)
		app_snap_take(a, r);
	else if (app_snap(a, r, false)->changes != r->changes)
		app_refresh(a); /* a chunk came since the tick: the write holds it */
	const struct app_snap *s = app_snap(a, r, true);
	const struct metrics *m = &s->m;
	app_figures(a, r, m);
	char dir[SESSION_DIR_LEN];
	bool fresh = !row->dir[0];
	if (fresh)
		app_name_dir(a, row, m, dir, sizeof(dir));
	else
		snprintf(dir, sizeof(dir), "%s", row->dir);
	char path[PATH_MAX + SESSION_DIR_LEN + 2];
	snprintf(path, sizeof(path), "%s/%s", a->out_dir, dir);
	struct metrics_extra_input *extra = app_extra(a, r);
	int rc = measurement_write(path, m, r, &s->record, extra, err, errsz);
	int saved = errno, write_errno = rc ? saved : 0;
	free(extra);
	if (rc == 0 && fresh)
		a->n_written++;
	if (rc == 0 && app_link_latest(a, row, dir, err, errsz) != 0) {
		saved = errno;
		rc = -1;
	}
	app_written(a, r, fresh ? dir : NULL, write_errno, rc != 0);
	errno = saved;
	return rc;
}

/* Every run not closed (and one changed since its close): 0, or the
 * last failure's -1 with errno and err. */
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
	errno = e;
	return rc;
}

/* Headless runs print one progress line per checkpoint, for batch logs. */
static void app_progress(const struct metrics *m)
{
	char el[FMT_LEN], ch[FMT_LEN], ev[FMT_LEN], wk[FMT_LEN], rate[FMT_LEN];
	fprintf(stderr, "roastop: %s elapsed, %s chunks, %s events (%s), %s workers\n",
		format_duration(el, m->elapsed_time_seconds), format_count(ch, m->num_chunks),
		format_count(ev, m->total_events),
		format_rate(rate, m->event_rate_elapsed_khz, 1e3, "Hz"),
		format_num(wk, m->workers_now, "%.0f"));
}

void app_checkpoint(struct app *a)
{
	char err[512] = "";
	if (a->headless)
		app_progress(&app_snap(a, session_newest(&a->ses), false)->m);
	int rc = app_write_open(a, err, sizeof(err));
	app_write_outcome(a, rc, errno, err);
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

/* The runs, the newest in full, and the last line, in one write to
 * standard output, whose failure (a full disk, a closed pipe) is an error
 * like any other. */
int app_print_summary(struct app *a)
{
	struct strbuf sb;
	strbuf_init(&sb);
	text_runs(&a->ses, &sb);
	strbuf_puts(&sb, "\n");
	const struct run *newest = session_newest(&a->ses);
	const struct app_snap *s = app_snap(a, newest, true);
	struct metrics_extra_input *extra = app_extra(a, newest); /* its summary.txt, tasks too */
	text_run_summary(&s->m, newest, &s->record, extra, &sb);
	free(extra);
	const struct session_run *last = a->ses.n_rows ? &a->ses.rows[a->ses.n_rows - 1] : NULL;
	if (a->n_written)
		strbuf_appendf(&sb, "\nroastop: stopped (%s); %zu measurement%s written under %s "
			       "(latest: %s)\n", a->stop_reason ? a->stop_reason : "done", a->n_written,
			       a->n_written == 1 ? "" : "s", a->out_dir, last ? last->dir : "");
	int rc = -1;
	if (sb.failed)
		errno = ENOMEM;
	else if (fflush(stdout) == 0 && fsutil_write_all(STDOUT_FILENO, sb.data, sb.len) == 0)
		rc = 0;
	if (rc != 0)
		fprintf(stderr, "roastop: could not print the summary on standard output: %s%s%s\n",
			strerror(errno), a->n_written ? "; the runs are under " : "",
			a->n_written ? a->out_dir : "");
	strbuf_free(&sb);
	return rc;
}
