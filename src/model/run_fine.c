/* The run model, fine metrics (run.c has the entry point): the
 * scheduler's per-activity rows, keyed by their four parts joined. */
#include "roastop/run.h"
#include "runpriv.h"

#include <stdio.h>
#include <string.h>

#define FINE_SEP '\x1f'

size_t run_fine_key(char *buf, size_t size, const char *context, const char *prefix,
		    const char *activity, const char *unit)
{
	int n = snprintf(buf, size, "%s%c%s%c%s%c%s", context ? context : "", FINE_SEP,
			 prefix ? prefix : "", FINE_SEP, activity ? activity : "", FINE_SEP,
			 unit ? unit : "");
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

bool run_fine_split(char *buf, const char *parts[4])
{
	parts[0] = buf;
	for (int i = 1; i < 4; i++) {
		char *sep = strchr(parts[i - 1], FINE_SEP);
		if (!sep)
			return false;
		*sep = '\0';
		parts[i] = sep + 1;
	}
	return true;
}

double run_fine_value(const struct fine_agg *f)
{
	return f->carried + f->last - f->base;
}

/* Cluster counters include activity from before roastop started: rows in
 * the first cluster snapshot become the baseline; rows that appear later
 * start from 0. A counter that goes down means the scheduler restarted:
 * what the old one counted is carried and the new one counts from 0. */
static void fine_row_apply(struct run *r, double t, struct strmap *m, const struct fine_row *row,
			   bool baseline)
{
	char key[4 * (RUN_FINE_PART_MAX + 1)], part[4][RUN_FINE_PART_MAX + 1];
	const char *in[4] = { row->context, row->prefix, row->activity, row->unit };
	for (int i = 0; i < 4; i++)
		in[i] = run_key(r, t, in[i], RUN_FINE_PART_MAX, part[i]);
	run_fine_key(key, sizeof(key), in[0], in[1], in[2], in[3]);
	bool added = false;
	struct fine_agg *f = strmap_upsert(m, key, &added);
	if (!f) {
		run_overflow(r, t, &r->overflow_fine, "fine_rows", RUN_MAX_FINE_ROWS);
		return;
	}
	if (added) {
		f->base = baseline ? row->value : 0.0;
		f->last = row->value;
		f->span = m == &r->fine_span;
		return;
	}
	if (row->value < f->last) {
		f->carried += f->last - f->base;
		f->base = 0.0;
	}
	f->last = row->value;
}

void run_apply_fine(struct run *r, double t, const struct ev_fine *f)
{
	bool span = f->scope == FINE_SPAN;
	struct strmap *m = span ? &r->fine_span : &r->fine_cluster;
	bool baseline = !span && r->n_fine_cluster == 0;
	for (size_t i = 0; i < f->n_rows; i++)
		fine_row_apply(r, t, m, &f->rows[i], baseline);
	if (span)
		r->n_fine_span++;
	else
		r->n_fine_cluster++;
}
