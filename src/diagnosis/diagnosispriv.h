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

/* A new finding in out (NULL when out is full: never, one per rule). */
struct finding *diag_new(struct findings *out, enum finding_id id, enum finding_severity sev,
			 double since, double cost);
/* The median of v[0..n) (reordered); NAN when n == 0. */
double diag_median(double *v, size_t n);
/* The host of a file's URL ("root://host//path", "https://host/path"),
 * without the port's user part; false for a local path. */
bool diag_host_of(const char *url, char *host, size_t size);
/* "s" after a count n that is not 1, for the texts' nouns; "" after 1. */
static inline const char *diag_s(double n)
{
	return n == 1 ? "" : "s";
}
/* Whether a chunk record's file (its end kept when long) is key. */
bool diag_same_file(const char *key, const char *rc_file);
/* The run's successful chunk records in arrival order (malloc'd; *n set),
 * NULL when none or out of memory. */
const struct rawchunk **diag_chunks(const struct run *r, size_t *n);

void diag_rule_silent(const struct run *r, const struct metrics *m,
		      const struct diagnosis_context *ctx, struct findings *out);
void diag_rule_tail(const struct run *r, const struct metrics *m, struct findings *out);
void diag_rule_small_chunks(const struct run *r, const struct metrics *m, struct findings *out);
/* bad_worker, then slow_file and slow_site without the named worker's
 * chunks (src/diagnosis/rules_place.c). */
void diag_rule_places(const struct run *r, struct findings *out);
void diag_rule_memory_growth(const struct run *r, struct findings *out);
void diag_rule_memory_pressure(const struct run *r, struct findings *out);
/* io_bound and cpu_starved */
void diag_rule_cpu_use(const struct run *r, const struct metrics *m, struct findings *out);
void diag_rule_idle_cluster(const struct run *r, const struct metrics *m, struct findings *out);
void diag_rule_failures(const struct run *r, struct findings *out);

#endif
