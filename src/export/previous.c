/* The last comparable run against the run at hand; see previous.h. */
#include "roastop/previous.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"

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
}

/* Dataset name's rate in prev (kHz of its chunks' time), invalid when absent. */
static optnum previous_dataset_rate(const struct past_run *prev, const char *name)
{
	for (size_t i = 0; i < prev->n_datasets; i++)
		if (strcmp(prev->datasets[i].name, name) == 0 && prev->datasets[i].seconds > 0)
			return optnum_of(prev->datasets[i].events / prev->datasets[i].seconds / 1e3);
	return optnum_none();
}

/* Each dataset of r that prev had too: its rate now, then, the change. */
static void previous_datasets_json(struct jsonw *w, const struct past_run *prev,
				   const struct run *r, const struct metrics *m)
{
	struct dataset_metrics d;
	optnum delta, pct;
	jsonw_object(w, "per_dataset");
	for (size_t i = 0; metrics_dataset(r, m, i, &d); i++) {
		optnum was = previous_dataset_rate(prev, d.name);
		if (!was.valid)
			continue;
		metrics_change(was, d.event_rate_khz, &delta, &pct);
		jsonw_object(w, d.name);
		jsonw_opt(w, "event_rate_khz", d.event_rate_khz);
		jsonw_opt(w, "previous_event_rate_khz", was);
		jsonw_opt(w, "rate_change_percent", pct);
		jsonw_end(w, '}');
	}
	jsonw_end(w, '}');
}

void previous_json(struct jsonw *w, const struct past_run *prev,
			   const struct run *r, const struct metrics *m)
{
	char differs[64];
	optnum delta, pct;
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
	previous_datasets_json(w, prev, r, m);
	jsonw_array(w, "findings");
	for (size_t i = 0; i < prev->n_ids; i++)
		jsonw_str(w, NULL, prev->ids[i]);
	jsonw_end(w, ']');
	jsonw_end(w, '}');
}

static void previous_row(struct strbuf *o, const char *label, const char *now,
			 const char *then, optnum pct)
{
	char p[FMT_LEN];
	strbuf_appendf(o, "%-18s %12s, was %12s  %s\n", label, now, then,
		       pct.valid ? format_num(p, pct, "%+.1f %%") : "");
}

void previous_text(struct strbuf *o, const struct past_run *prev, const struct run *r,
		   const struct metrics *m)
{
	char differs[64], a[FMT_LEN], b[FMT_LEN], name[20];
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
	struct dataset_metrics d;
	for (size_t i = 0; metrics_dataset(r, m, i, &d); i++) {
		optnum was = previous_dataset_rate(prev, d.name);
		metrics_change(was, d.event_rate_khz, &delta, &pct);
		snprintf(name, sizeof(name), "  %s", d.name);
		for (char *p = name; *p; p++)
			*p = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
		if (was.valid)
			previous_row(o, name, format_rate(a, d.event_rate_khz, 1e3, "Hz"),
				     format_rate(b, was, 1e3, "Hz"), pct);
	}
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
