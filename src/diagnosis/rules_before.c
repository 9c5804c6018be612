/* slower_than_before (docs/diagnosis.md): the run's rate against the last
 * comparable run's, with what this run has and that one had not as the
 * contributors. */
#include "diagnosispriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A fall in the event rate larger than this share is beyond the spread of
 * runs of one analysis on one cluster. */
#define DIAG_SLOWER_SHARE 0.25
#define DIAG_SLOWER_NAMED 3 /* contributors named, largest cost first */

static bool had_before(const struct diagnosis_previous *p, enum finding_id id)
{
	for (size_t i = 0; i < p->n_ids; i++)
		if (strcmp(p->ids[i], diagnosis_id_name(id)) == 0)
			return true;
	return false;
}

/* The findings so far that the previous run had not, largest cost first. */
static size_t new_findings(const struct diag_eval *e, const struct finding **out)
{
	size_t n = 0;
	for (size_t i = 0; i < e->out->n; i++) {
		const struct finding *f = &e->out->f[i];
		if (f->id == FIND_SLOWER_THAN_BEFORE || had_before(e->ctx->previous, f->id))
			continue;
		size_t j = n++;
		for (; j > 0 && out[j - 1]->cost < f->cost; j--)
			out[j] = out[j - 1];
		out[j] = f;
	}
	return n < DIAG_SLOWER_NAMED ? n : DIAG_SLOWER_NAMED;
}

static void because(char *ev, size_t size, const struct diag_eval *e)
{
	const struct diagnosis_previous *p = e->ctx->previous;
	const struct finding *fs[FIND__COUNT];
	size_t n = new_findings(e, fs), len = strlen(ev);
	for (size_t i = 0; i < n && len < size; i++, len = strlen(ev))
		snprintf(ev + len, size - len, "%s%s (%s)", i ? "; " : "; new since: ",
			 diagnosis_id_name(fs[i]->id), fs[i]->title);
	optnum w = e->m->avg_workers;
	if (len < size && w.valid && p->workers.valid && w.value < 0.9 * p->workers.value)
		snprintf(ev + len, size - len, "; workers %.1f, were %.1f", w.value,
			 p->workers.value);
	len = strlen(ev);
	if (len < size && p->fell_file[0])
		snprintf(ev + len, size - len, "; largest fall: %s, %+.0f %%", p->fell_file,
			 p->fell_percent.value);
	len = strlen(ev);
	if (len < size && p->differs[0])
		snprintf(ev + len, size - len, "; %s differ", p->differs);
}

/* Reads every other rule's finding: the table's last row, evaluated last. */
void diag_rule_slower_than_before(struct diag_eval *e)
{
	const struct diagnosis_previous *p = e->ctx ? e->ctx->previous : NULL;
	optnum now = e->m->event_rate_elapsed_khz;
	if (!p || !p->rate_khz.valid || !(p->rate_khz.value > 0) || !now.valid ||
	    e->r->n_chunks < DIAG_MIN_CHUNKS)
		return;
	double fall = 1 - now.value / p->rate_khz.value;
	if (!(fall > DIAG_SLOWER_SHARE))
		return;
	struct finding *f = diag_new(e->out, FIND_SLOWER_THAN_BEFORE, NAN, fall);
	if (!f)
		return;
	char a[FMT_LEN], b[FMT_LEN];
	snprintf(f->title, sizeof(f->title), "%.0f %% slower than the last run, %s", 100 * fall,
		 p->dir);
	snprintf(f->evidence, sizeof(f->evidence), "%s now, %s in %s", format_rate(a, now, 1e3, "Hz"),
		 format_rate(b, p->rate_khz, 1e3, "Hz"), p->dir);
	because(f->evidence, sizeof(f->evidence), e);
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "look first at what this run has and the last one had not (named here); "
		 "roastop compare puts the two side by side");
}
