/* The last comparable run against the run at hand; see previous.h. */
#include "roastop/previous.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"
#include "roastop/rawchunks.h"
#include "roastop/strmap.h"
#include "roastop/strutil.h"

uint64_t previous_file_hash(const char *name)
{
	char tail[RAWCHUNKS_FILE_LEN];
	strutil_copy_tail(tail, sizeof(tail), name);
	return strmap_hash(tail, strlen(tail));
}

/* The first of files (n, in order of hash) whose hash is not below h. */
static size_t previous_file_at(const struct past_file *files, size_t n, uint64_t h)
{
	size_t lo = 0;
	while (lo < n) {
		size_t mid = lo + (n - lo) / 2;
		if (files[mid].hash < h)
			lo = mid + 1;
		else
			n = mid;
	}
	return lo;
}

void previous_file_add(struct past_file *files, size_t *n, const char *name, double events,
		       double seconds)
{
	uint64_t h = previous_file_hash(name);
	size_t i = previous_file_at(files, *n, h);
	if (i == *n || files[i].hash != h) {
		if (*n == PAST_FILES)
			return;
		memmove(&files[i + 1], &files[i], (*n - i) * sizeof(*files));
		files[i] = (struct past_file){ .hash = h };
		++*n;
	}
	files[i].events += events;
	files[i].seconds += seconds;
}

/* A dataset or file of the run that prev had too: its rate now, then, the
 * change. */
struct change {
	const char *name;
	optnum now, was, pct;
};

/* The files of r that prev read too, the largest falls first: at most
 * PREVIOUS_FILES into out; how many. */
static size_t previous_files(const struct past_run *prev, const struct run *r,
			     struct change *out)
{
	struct change c;
	optnum delta;
	size_t n = 0;
	for (size_t i = 0; metrics_file(r, i, &c.name, &c.now); i++) {
		uint64_t h = previous_file_hash(c.name);
		size_t at = previous_file_at(prev->files, prev->n_files, h);
		if (at == prev->n_files || prev->files[at].hash != h)
			continue;
		c.was = metrics_event_rate_khz(prev->files[at].events, prev->files[at].seconds);
		metrics_change(c.was, c.now, &delta, &c.pct);
		if (!c.pct.valid || (n == PREVIOUS_FILES && out[n - 1].pct.value <= c.pct.value))
			continue;
		size_t j = n < PREVIOUS_FILES ? n++ : n - 1;
		for (; j > 0 && out[j - 1].pct.value > c.pct.value; j--)
			out[j] = out[j - 1];
		out[j] = c;
	}
	return n;
}

/* The datasets of r that prev had too (their rate by their chunks' time),
 * in r's order: at most PAST_DATASETS into out; how many. */
static size_t previous_datasets(const struct past_run *prev, const struct run *r,
				const struct metrics *m, struct change *out)
{
	struct dataset_metrics d;
	optnum delta;
	size_t n = 0;
	for (size_t i = 0; n < PAST_DATASETS && metrics_dataset(r, m, i, &d); i++) {
		const struct past_dataset *p = prev->datasets, *end = p + prev->n_datasets;
		while (p < end && (strcmp(p->name, d.name) != 0 || !(p->seconds > 0)))
			p++;
		if (p == end)
			continue;
		struct change *c = &out[n++];
		*c = (struct change){ .name = d.name, .now = d.event_rate_khz,
				      .was = metrics_event_rate_khz(p->events, p->seconds) };
		metrics_change(c->was, c->now, &delta, &c->pct);
	}
	return n;
}

static const char *previous_match(const struct past_run *prev, const struct run *r,
				  const struct metrics *m, char *differs, size_t size)
{
	struct identity now;
	identity_of_run(r, m, &now);
	enum identity_match how = identity_match(&now, &prev->id, differs, size);
	return how == IDENTITY_SAME ? "same" : how == IDENTITY_COMPARABLE ? "comparable" : "other";
}

void previous_for_diagnosis(const struct past_run *prev, const struct run *r,
			    const struct metrics *m, struct diagnosis_previous *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->dir, sizeof(out->dir), "%s", prev->dir);
	out->rate_khz = prev->rate_khz;
	out->workers = prev->workers;
	previous_match(prev, r, m, out->differs, sizeof(out->differs));
	for (; out->n_ids < prev->n_ids && out->n_ids < 8; out->n_ids++)
		snprintf(out->ids[out->n_ids], sizeof(out->ids[0]), "%s", prev->ids[out->n_ids]);
	struct change fc[PREVIOUS_FILES];
	if (previous_files(prev, r, fc) && fc[0].pct.value < 0) {
		strutil_copy_tail(out->fell_file, sizeof(out->fell_file), fc[0].name);
		out->fell_percent = fc[0].pct;
	}
}

/* The changes as roastop.previous has them: per_dataset, an object by
 * name, or per_file, an array. */
static void changes_json(struct jsonw *w, const struct change *c, size_t n, bool files)
{
	if (files)
		jsonw_array(w, "per_file");
	else
		jsonw_object(w, "per_dataset");
	for (size_t i = 0; i < n; i++) {
		jsonw_object(w, files ? NULL : c[i].name);
		if (files)
			jsonw_str(w, "file", c[i].name);
		jsonw_opt(w, "event_rate_khz", c[i].now);
		jsonw_opt(w, "previous_event_rate_khz", c[i].was);
		jsonw_opt(w, "rate_change_percent", c[i].pct);
		jsonw_end(w, '}');
	}
	jsonw_end(w, files ? ']' : '}');
}

void previous_json(struct jsonw *w, const struct past_run *prev,
			   const struct run *r, const struct metrics *m)
{
	char differs[64];
	optnum delta, pct;
	struct change ds[PAST_DATASETS], fc[PREVIOUS_FILES];
	jsonw_object(w, "previous");
	jsonw_str(w, "dir", prev->dir);
	jsonw_str(w, "run_name", prev->name[0] ? prev->name : NULL);
	jsonw_str(w, "analysis", previous_match(prev, r, m, differs, sizeof(differs)));
	jsonw_str(w, "differs", differs[0] ? differs : NULL);
	jsonw_opt(w, "event_rate_elapsed_khz", prev->rate_khz);
	metrics_change(prev->rate_khz, m->event_rate_elapsed_khz, &delta, &pct);
	jsonw_opt(w, "rate_change_percent", pct);
	jsonw_opt(w, "elapsed_time_seconds", prev->elapsed);
	jsonw_opt(w, "avg_workers", prev->workers);
	changes_json(w, ds, previous_datasets(prev, r, m, ds), false);
	changes_json(w, fc, previous_files(prev, r, fc), true);
	jsonw_array(w, "findings");
	for (size_t i = 0; i < prev->n_ids; i++)
		jsonw_str(w, NULL, prev->ids[i]);
	jsonw_end(w, ']');
	jsonw_end(w, '}');
}

static void previous_row(struct strbuf *o, const char *label, const char *now,
			 const char *then, optnum pct)
{
	char p[FMT_LEN], l[64];
	strbuf_appendf(o, "%-18s %12s, was %12s  %s\n", strutil_copy_line(l, sizeof(l), label),
		       now, then, pct.valid ? format_num(p, pct, "%+.1f %%") : "");
}

/* The changes' rows: a dataset's name cut to 17 bytes, a file's to its
 * end, under a heading of their own. */
static void changes_text(struct strbuf *o, const struct change *c, size_t n, bool files)
{
	char a[FMT_LEN], b[FMT_LEN], tail[56], label[64];
	if (n && files)
		strbuf_puts(o, "Files, largest fall first\n");
	for (size_t i = 0; i < n; i++) {
		strutil_copy_tail(tail, sizeof(tail), c[i].name);
		snprintf(label, files ? sizeof(label) : 20, "  %s", files ? tail : c[i].name);
		previous_row(o, label, format_rate(a, c[i].now, 1e3, "Hz"),
			     format_rate(b, c[i].was, 1e3, "Hz"), c[i].pct);
	}
}

void previous_text(struct strbuf *o, const struct past_run *prev, const struct run *r,
		   const struct metrics *m)
{
	char differs[64], a[FMT_LEN], b[FMT_LEN];
	optnum delta, pct;
	const char *how = previous_match(prev, r, m, differs, sizeof(differs));
	strbuf_appendf(o, "\nPrevious Run\n------------\n%s (%s analysis%s%s)\n", prev->dir, how,
		       differs[0] ? "; differ: " : "", differs);
	metrics_change(prev->rate_khz, m->event_rate_elapsed_khz, &delta, &pct);
	previous_row(o, "Event rate", format_rate(a, m->event_rate_elapsed_khz, 1e3, "Hz"),
		     format_rate(b, prev->rate_khz, 1e3, "Hz"), pct);
	metrics_change(prev->elapsed, m->elapsed_time_seconds, &delta, &pct);
	previous_row(o, "Duration", format_duration(a, m->elapsed_time_seconds),
		     format_duration(b, prev->elapsed), pct);
	metrics_change(prev->workers, m->avg_workers, &delta, &pct);
	previous_row(o, "Workers", format_num(a, m->avg_workers, "%.1f"),
		     format_num(b, prev->workers, "%.1f"), pct);
	struct change ds[PAST_DATASETS], fc[PREVIOUS_FILES];
	changes_text(o, ds, previous_datasets(prev, r, m, ds), false);
	changes_text(o, fc, previous_files(prev, r, fc), true);
	strbuf_appendf(o, "%-18s %s\n", "Its findings", prev->n_ids ? "" : "none");
	for (size_t i = 0; i < prev->n_ids; i++)
		strbuf_appendf(o, "  %s\n", prev->ids[i]);
}

optnum previous_eta(const struct past_run *prev, const struct metrics *m)
{
	if (!prev->elapsed.valid)
		return optnum_none();
	if (m->progress_fraction.valid)
		return optnum_of(prev->elapsed.value * fmax(0, 1 - m->progress_fraction.value));
	double ran = m->elapsed_time_seconds.valid ? m->elapsed_time_seconds.value : 0;
	return optnum_of(fmax(0, prev->elapsed.value - ran));
}
