/* What the app writes (app_output.h). */
#include "roastop/app_output.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/format.h"
#include "roastop/fsutil.h"
#include "roastop/measurement.h"
#include "roastop/report_text.h"
#include "roastop/strbuf.h"

int app_output_open(struct app_output *o, const char *dir, char *err, size_t errsz)
{
	snprintf(o->root, sizeof(o->root), "%s", dir && dir[0] ? dir : "roastop-measurements");
	return measurement_check_dir(o->root, err, errsz);
}

/* Is name taken by another run of the session, or by anything on disk? */
static bool app_output_taken(const struct app_output *o, const struct session *ses,
			     const struct session_run *self, const char *name)
{
	for (size_t i = 0; i < ses->n_rows; i++)
		if (&ses->rows[i] != self && strcmp(ses->rows[i].dir, name) == 0)
			return true;
	char path[PATH_MAX + SESSION_DIR_LEN + 2];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", o->root, name);
	return lstat(path, &st) == 0;
}

/* Row's directory into o->dir, after its start and name; "-2", "-3"...
 * when that is taken. */
static void app_output_name(struct app_output *o, const struct session *ses,
			    const struct session_run *row, const struct metrics *m)
{
	char base[SESSION_DIR_LEN - 8];
	measurement_dir_name(base, sizeof(base), m->elapsed_time_seconds.valid ? m->t_start : NAN,
			     row->run->name);
	snprintf(o->dir, sizeof(o->dir), "%s", base);
	for (unsigned k = 2; app_output_taken(o, ses, row, o->dir) && k < 1000000; k++)
		snprintf(o->dir, sizeof(o->dir), "%s-%u", base, k);
}

/* latest -> o->dir, unless a newer run than row's has been written. */
static int app_output_latest(const struct app_output *o, const struct session *ses,
			     const struct session_run *row, char *err, size_t errsz)
{
	for (const struct session_run *r = row + 1; r < ses->rows + ses->n_rows; r++)
		if (r->dir[0])
			return 0;
	return measurement_link_latest(o->root, o->dir, err, errsz);
}

int app_output_write(struct app_output *o, const struct session *ses,
		     const struct session_run *row, const struct metrics *m,
		     const struct findings *record, const struct metrics_extra_input *extra,
		     struct ev_row_write *w, char *err, size_t errsz)
{
	bool fresh = !row->dir[0];
	if (fresh)
		app_output_name(o, ses, row, m);
	else
		snprintf(o->dir, sizeof(o->dir), "%s", row->dir);
	char path[PATH_MAX + SESSION_DIR_LEN + 2];
	snprintf(path, sizeof(path), "%s/%s", o->root, o->dir);
	int rc = measurement_write(path, m, row->run, record, extra, err, errsz);
	int saved = errno;
	*w = (struct ev_row_write){ .run = row->run, .dir = fresh ? o->dir : NULL,
				    .write_errno = rc ? saved : 0 };
	if (rc == 0 && fresh)
		o->n_written++;
	if (rc == 0 && app_output_latest(o, ses, row, err, errsz) != 0) {
		saved = errno;
		rc = -1;
	}
	w->failed = rc != 0;
	errno = saved;
	return rc;
}

void app_output_progress(const struct metrics *m)
{
	char el[FMT_LEN], ch[FMT_LEN], ev[FMT_LEN], wk[FMT_LEN], rate[FMT_LEN];
	fprintf(stderr, "roastop: %s elapsed, %s chunks, %s events (%s), %s workers\n",
		format_duration(el, m->elapsed_time_seconds), format_count(ch, m->num_chunks),
		format_count(ev, m->total_events),
		format_rate(rate, m->event_rate_elapsed_khz, 1e3, "Hz"),
		format_num(wk, m->workers_now, "%.0f"));
}

/* Its failure (a full disk, a closed pipe) is an error like any other. */
int app_output_summary(const struct app_output *o, const struct session *ses,
		       const struct metrics *m, const struct findings *record,
		       const struct metrics_extra_input *extra, const char *stop_reason)
{
	struct strbuf sb;
	strbuf_init(&sb);
	text_runs(ses, &sb);
	strbuf_puts(&sb, "\n");
	text_run_summary(m, session_newest(ses), record, extra, &sb);
	const struct session_run *last = ses->n_rows ? &ses->rows[ses->n_rows - 1] : NULL;
	size_t n = o->n_written;
	if (n)
		strbuf_appendf(&sb, "\nroastop: stopped (%s); %zu measurement%s written under %s "
			       "(latest: %s)\n", stop_reason ? stop_reason : "done", n,
			       n == 1 ? "" : "s", o->root, last ? last->dir : "");
	int rc = -1;
	if (sb.failed)
		errno = ENOMEM;
	else if (fflush(stdout) == 0 && fsutil_write_all(STDOUT_FILENO, sb.data, sb.len) == 0)
		rc = 0;
	if (rc != 0)
		fprintf(stderr, "roastop: could not print the summary on standard output: %s%s%s\n",
			strerror(errno), n ? "; the runs are under " : "", n ? o->root : "");
	strbuf_free(&sb);
	return rc;
}
