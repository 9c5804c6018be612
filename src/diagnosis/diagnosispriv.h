/* Shared by the files of src/diagnosis only: the rules and their helpers.
 * Not a public header. Thresholds: docs/diagnosis.md. */
#ifndef ROASTOP_DIAGNOSISPRIV_H
#define ROASTOP_DIAGNOSISPRIV_H

#include "roastop/diagnosis.h"
#include "roastop/format.h"

/* No rule about chunks speaks from fewer chunks than this. */
#define DIAG_MIN_CHUNKS 8
/* Places (files, hosts, workers) told apart in one evaluation; more are
 * left out of the comparison (counted nowhere: a finding, not a metric). */
#define DIAG_MAX_PLACES 256

/* One evaluation (diagnosis_evaluate): what its rules read, the findings
 * so far, and what is worked out once for all its rules. */
struct paces;
struct diag_eval {
	const struct run *r;
	const struct metrics *m;
	const struct diagnosis_context *ctx;
	struct findings *out;
	/* the run's successful chunk records in arrival order, copied at the
	 * first rule that asks (diag_chunks) */
	const struct rawchunk **chunks;
	size_t n_chunks;
	bool chunked;
	/* bad_worker's judgment, which slow_file and slow_site depend on: the
	 * chunks' paces without the worker it named; NULL: nothing to judge */
	struct paces *places;
};

/* A rule: a row of diagnosis.c's table. */
typedef void diag_rule_fn(struct diag_eval *e);

/* A new finding in out, of its rule's severity (the table's; the rule may
 * change it); NULL when out is full: never, one per rule. */
struct finding *diag_new(struct findings *out, enum finding_id id, double since, double cost);
/* The host of a file's URL ("root://host//path", "https://host/path"),
 * without the port's user part; false for a local path. */
bool diag_host_of(const char *url, char *host, size_t size);
/* "s" after a count n that is not 1, for the texts' nouns; "" after 1. */
static inline const char *diag_s(double n)
{
	return n == 1 ? "" : "s";
}
/* The run's successful chunk records in arrival order (*n set), copied once
 * per evaluation; NULL when none or out of memory. */
const struct rawchunk *const *diag_chunks(struct diag_eval *e, size_t *n);

diag_rule_fn diag_rule_silent_run, diag_rule_silent_scheduler, diag_rule_tail,
	diag_rule_small_chunks, diag_rule_memory_growth, diag_rule_memory_pressure,
	diag_rule_idle_cluster, diag_rule_failures;
/* rules_place.c: bad_worker, then slow_file and slow_site (which depend on
 * it) without the named worker's chunks */
diag_rule_fn diag_rule_bad_worker, diag_rule_slow_file, diag_rule_slow_site;
void diag_places_free(struct diag_eval *e);
/* rules_cluster.c */
diag_rule_fn diag_rule_io_bound, diag_rule_cpu_starved;
/* rules_before.c: reads the findings of every rule before it */
diag_rule_fn diag_rule_slower_than_before;

#endif
