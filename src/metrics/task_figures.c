/* The task figures: formulas only, over the model's state. */
#include "roastop/task_figures.h"

#include <math.h>
#include <string.h>

static double erred_of(const struct tasks_prefix *p)
{
	return fmax(p->erred_route, (double)p->erred);
}

/* The stream's erred are tasks the route counts too: the larger, not the
 * sum. */
static optnum erred_total(const struct tasks *t)
{
	if (!t->route.erred_measured)
		return optnum_none();
	double n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += erred_of(&t->prefixes[i]);
	return optnum_of(n);
}

static optnum running_of(const struct tasks *t, const struct tasks_prefix *p)
{
	const struct tasks_route *r = &t->route;
	if (!r->running_measured)
		return optnum_none();
	size_t n = 0;
	for (size_t i = 0; i < r->n_running; i++)
		n += !strncmp(r->running[i].prefix, p->name, TASKS_NAME_LEN - 1);
	return optnum_of((double)n);
}

static void prefix_compute(const struct tasks *t, const struct tasks_prefix *p,
			   struct task_prefix_figures *f)
{
	f->erred = t->route.erred_measured ? optnum_of(erred_of(p)) : optnum_none();
	f->in_flight = running_of(t, p);
	f->in_flight_partial = t->route.running_count > t->route.n_running;
	f->compute_p50 = hist_quantile(&p->compute, 0.5);
	f->compute_p90 = hist_quantile(&p->compute, 0.9);
	f->compute_p99 = hist_quantile(&p->compute, 0.99);
	f->compute_max = p->compute.count ? optnum_of(p->compute.max) : optnum_none();
	f->compute_seconds = p->compute_measured ? optnum_of(p->compute_s) : optnum_none();
	bool records = p->count > p->from_totals || !p->from_totals;
	f->transfers = records ? optnum_of((double)p->transfers) : optnum_none();
	f->disk_reads = records ? optnum_of((double)p->disk_reads) : optnum_none();
	f->stragglers = records ? optnum_of((double)p->stragglers) : optnum_none();
	f->transfer_seconds = p->transfers ? optnum_of(p->transfer_s) : optnum_none();
	f->disk_read_seconds = p->disk_reads ? optnum_of(p->disk_read_s) : optnum_none();
	f->straggler_after = tasks_straggler_after(t, p);
}

/* A running task is judged as a finished one of its prefix would be. */
static void running_compute(const struct tasks *t, struct task_figures *out)
{
	const struct tasks_route *r = &t->route;
	for (size_t i = 0; i < r->n_running; i++) {
		const struct tasks_running *run = &r->running[i];
		optnum after = tasks_judged_after(t, tasks_prefix_find(t, run->prefix));
		out->running_straggler[i] = after.valid && run->seconds > after.value;
		out->running_stragglers += out->running_straggler[i];
	}
}

void task_figures_compute(const struct tasks *t, struct task_figures *out)
{
	out->erred = erred_total(t);
	out->in_flight = t->route.running_measured ? optnum_of((double)t->route.running_count)
						   : optnum_none();
	memset(out->running_straggler, 0, sizeof(out->running_straggler));
	out->running_stragglers = 0;
	running_compute(t, out);
	out->n = t->n;
	for (size_t i = 0; i < t->n; i++)
		prefix_compute(t, &t->prefixes[i], &out->prefix[i]);
}
