/* The measurements under an output directory; see history.h. */
#include "roastop/history.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "roastop/compare.h"
#include "roastop/format.h"
#include "roastop/jsonw.h"
#include "roastop/strutil.h"

int history_parse(char *text, struct past_run *run, struct past_file *files)
{
	struct compare_side *s = calloc(1, sizeof(*s));
	char err[64];
	int rc = -1;
	if (s) {
		s->files = files;
		rc = compare_parse(text, s, err, sizeof(err));
	}
	if (rc == 0) {
		strutil_copy(run->name, sizeof(run->name), s->name);
		strutil_copy(run->status, sizeof(run->status), s->status);
		run->chunks = s->m.num_chunks;
		run->events = s->m.total_events;
		run->rate_khz = s->m.event_rate_elapsed_khz;
		run->elapsed = s->m.elapsed_time_seconds;
		run->workers = s->m.avg_workers;
		run->findings = s->findings_total;
		run->finding[0] = run->severity[0] = '\0';
		if (s->n_findings) {
			strutil_copy(run->finding, sizeof(run->finding), s->findings[0].id);
			strutil_copy(run->severity, sizeof(run->severity), s->findings[0].severity);
		}
		for (run->n_ids = 0; run->n_ids < s->n_findings && run->n_ids < PAST_IDS;
		     run->n_ids++)
			strutil_copy(run->ids[run->n_ids], sizeof(run->ids[0]),
				     s->findings[run->n_ids].id);
		run->n_datasets = s->n_datasets < PAST_DATASETS ? s->n_datasets : PAST_DATASETS;
		memcpy(run->datasets, s->datasets, run->n_datasets * sizeof(run->datasets[0]));
		run->files = files;
		run->n_files = s->n_files;
		run->has_identity = s->has_identity;
		run->id = s->id;
	}
	free(s);
	return rc;
}

/* The directory's names worth reading: ours, directories, not links. */
struct names {
	char **v;
	size_t n;
};

static void names_add(int dfd, const char *name, uid_t uid, struct names *out,
		      struct history *h)
{
	struct stat st;
	if (out->n == HISTORY_MAX_SCANNED) {
		h->not_read++;
		return;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
		h->unrelated++;
	else if (st.st_uid != uid)
		h->foreign++;
	else if ((out->v[out->n] = strdup(name)) != NULL)
		out->n++;
}

static int names_desc(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

static int names_list(DIR *d, uid_t uid, struct names *out, struct history *h)
{
	out->n = 0;
	out->v = calloc(HISTORY_MAX_SCANNED, sizeof(*out->v));
	if (!out->v)
		return -1;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && strcmp(e->d_name, "latest") != 0)
			names_add(dirfd(d), e->d_name, uid, out, h);
	qsort(out->v, out->n, sizeof(*out->v), names_desc);
	return 0;
}

/* name/metrics.json whole, never through a link; NULL, and *corrupt when
 * it is there but cannot be read whole or is too large. */
static char *read_metrics(int dfd, const char *name, bool *corrupt)
{
	int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool absent = true;
	char err[64];
	char *text = sub < 0 ? NULL
			     : compare_read_at(sub, "metrics.json", O_NOFOLLOW, &absent, err,
					       sizeof(err));
	if (sub >= 0)
		close(sub);
	*corrupt = !text && !absent;
	return text;
}

/* Reads the listed measurements newest first until visit says stop. */
static void walk_read(int dfd, const struct names *nm, size_t max_runs, struct history *h,
		      bool (*visit)(void *, const struct past_run *), void *ctx)
{
	struct past_run run;
	size_t read_n = 0;
	bool go = true;
	for (size_t i = 0; i < nm->n; i++) {
		if (!go || read_n == max_runs) {
			h->not_read++;
			continue;
		}
		bool corrupt;
		char *text = read_metrics(dfd, nm->v[i], &corrupt);
		memset(&run, 0, sizeof(run));
		strutil_copy(run.dir, sizeof(run.dir), nm->v[i]);
		if (!text)
			*(corrupt ? &h->corrupt : &h->unrelated) += 1;
		else if (history_parse(text, &run, h->files) != 0)
			h->corrupt++;
		else {
			read_n++;
			go = visit(ctx, &run);
		}
		free(text);
	}
}

int history_walk(const char *root, uid_t uid, size_t max_runs, struct history *h,
		 bool (*visit)(void *ctx, const struct past_run *run), void *ctx,
		 char *err, size_t errsz)
{
	DIR *d = opendir(root);
	if (!d) {
		snprintf(err, errsz, "%s: %s", root, strerror(errno));
		return -1;
	}
	struct names nm;
	int rc = names_list(d, uid, &nm, h);
	if (rc == 0)
		walk_read(dirfd(d), &nm, max_runs, h, visit, ctx);
	else
		snprintf(err, errsz, "%s: out of memory", root);
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	closedir(d);
	return rc;
}

static bool history_keep(void *ctx, const struct past_run *run)
{
	struct history *h = ctx;
	h->runs[h->n++] = *run;
	return true;
}

int history_scan(const char *root, uid_t uid, struct history *h, char *err, size_t errsz)
{
	memset(h, 0, sizeof(*h));
	h->runs = calloc(HISTORY_MAX_RUNS, sizeof(*h->runs));
	if (!h->runs) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	return history_walk(root, uid, HISTORY_MAX_RUNS, h, history_keep, h, err, errsz);
}

struct previous_look {
	const struct identity *now;
	struct past_run *out;
	bool found;
};

static bool previous_visit(void *ctx, const struct past_run *run)
{
	struct previous_look *l = ctx;
	char differs[64];
	if (!run->has_identity || !run->rate_khz.valid || !(run->id.t_start < l->now->t_start) ||
	    identity_match(l->now, &run->id, differs, sizeof(differs)) == IDENTITY_OTHER)
		return true;
	*l->out = *run;
	l->found = true;
	return false;
}

/* The newest comparable run with a rate: one that processed nothing says
 * nothing of this one. */
bool history_find_previous(const char *root, uid_t uid, const struct identity *now,
			   struct past_run *out, struct past_file *files)
{
	struct history h = { .files = files };
	struct previous_look look = { .now = now, .out = out };
	char err[64];
	history_walk(root, uid, HISTORY_PREVIOUS_READ, &h, previous_visit, &look, err, sizeof(err));
	return look.found;
}

void history_free(struct history *h)
{
	free(h->runs);
	memset(h, 0, sizeof(*h));
}

/* ---- the list ----------------------------------------------------------- */

static bool history_shown(const struct past_run *run, const char *filter)
{
	return !filter || !filter[0] || strstr(run->name, filter) || strstr(run->dir, filter);
}

/* When the run started: its identity's t_start, else its directory's
 * name ("2026-11-29_12-30-00_..."). */
static const char *history_when(char out[20], const struct past_run *run)
{
	time_t t = (time_t)run->id.t_start;
	struct tm tm;
	if (run->has_identity && run->id.t_start >= 0 && run->id.t_start < 1e11 &&
	    localtime_r(&t, &tm) && strftime(out, 20, "%Y-%m-%d %H:%M:%S", &tm) == 19)
		return out;
	strutil_copy(out, 20, strlen(run->dir) >= 19 ? run->dir : "n/a");
	if (strlen(run->dir) >= 19) {
		out[10] = ' ';
		out[13] = out[16] = ':';
	}
	return out;
}

static void history_line(struct strbuf *o, const struct past_run *run)
{
	char when[20], ev[FMT_LEN], rate[FMT_LEN], el[FMT_LEN], wk[FMT_LEN], name[25];
	strutil_copy(name, sizeof(name), run->name[0] ? run->name : "n/a");
	for (char *p = name; *p; p++)
		if (*p == ' ')
			*p = '_'; /* a column for cut and awk */
	strbuf_appendf(o, "%-19s  %-24s  %-9s  %12s  %11s  %9s  %7s  %s%s%s%s\n",
		       history_when(when, run), name, run->status[0] ? run->status : "n/a",
		       format_count(ev, run->events), format_rate(rate, run->rate_khz, 1e3, "Hz"),
		       format_duration(el, run->elapsed), format_num(wk, run->workers, "%.1f"),
		       run->finding[0] ? run->finding : "-", run->finding[0] ? " (" : "",
		       run->severity, run->finding[0] ? ")" : "");
}

void history_write_text(struct strbuf *o, const struct history *h, const char *filter)
{
	strbuf_appendf(o, "%-19s  %-24s  %-9s  %12s  %11s  %9s  %7s  %s\n", "when", "name", "status",
		       "events", "rate", "duration", "workers", "finding");
	for (size_t i = 0; i < h->n; i++)
		if (history_shown(&h->runs[i], filter))
			history_line(o, &h->runs[i]);
}

static void history_json_run(struct jsonw *w, const struct past_run *run)
{
	char key[17];
	jsonw_object(w, NULL);
	jsonw_str(w, "dir", run->dir);
	jsonw_str(w, "run_name", run->name[0] ? run->name : NULL);
	jsonw_str(w, "run_status", run->status[0] ? run->status : NULL);
	jsonw_num(w, "t_start", run->has_identity ? run->id.t_start : NAN);
	jsonw_opt(w, "total_events", run->events);
	jsonw_opt(w, "event_rate_elapsed_khz", run->rate_khz);
	jsonw_opt(w, "elapsed_time_seconds", run->elapsed);
	jsonw_opt(w, "avg_workers", run->workers);
	jsonw_num(w, "findings", (double)run->findings);
	jsonw_str(w, "finding", run->finding[0] ? run->finding : NULL);
	jsonw_str(w, "severity", run->severity[0] ? run->severity : NULL);
	identity_key(&run->id, key);
	jsonw_str(w, "identity", run->has_identity ? key : NULL);
	jsonw_end(w, '}');
}

void history_write_json(struct strbuf *o, const struct history *h, const char *filter)
{
	struct jsonw w;
	jsonw_init(&w, o);
	jsonw_object(&w, NULL);
	jsonw_array(&w, "runs");
	for (size_t i = 0; i < h->n; i++)
		if (history_shown(&h->runs[i], filter))
			history_json_run(&w, &h->runs[i]);
	jsonw_end(&w, ']');
	jsonw_object(&w, "skipped");
	jsonw_num(&w, "another_user", (double)h->foreign);
	jsonw_num(&w, "corrupt", (double)h->corrupt);
	jsonw_num(&w, "unrelated", (double)h->unrelated);
	jsonw_num(&w, "not_read", (double)h->not_read);
	jsonw_end(&w, '}');
	jsonw_end(&w, '}');
	strbuf_puts(o, "\n");
}

int history_main(const char *root, const char *filter, bool json, FILE *out, FILE *errs)
{
	struct history h;
	char err[512];
	if (history_scan(root, getuid(), &h, err, sizeof(err)) != 0) {
		fprintf(errs, "roastop history: %s\n", err);
		history_free(&h);
		return 1;
	}
	struct strbuf o;
	strbuf_init(&o);
	(json ? history_write_json : history_write_text)(&o, &h, filter);
	fputs(o.failed ? "" : o.data, out);
	fprintf(errs, "roastop history: %zu runs in %s; skipped %zu of another user, %zu corrupt, "
		      "%zu unrelated, %zu not read\n", h.n, root, h.foreign, h.corrupt, h.unrelated,
		h.not_read);
	strbuf_free(&o);
	history_free(&h);
	return 0;
}
