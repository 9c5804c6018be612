/* Failures and retries: chunks lost (their last attempt failed) told apart
 * from attempts retried (the retries model, retries.h), and where the
 * failed attempts concentrate: one file, host, worker or exception type
 * (docs/diagnosis.md). */
#include "diagnosispriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Fires on a lost chunk, or on DIAG_FAIL_MIN_ATTEMPTS failed attempts even
 * when all were retried. A place holds the failures when at least
 * DIAG_FAIL_SHARE of the kept attempts (and at least 2) are its, and at
 * least twice its even share among the places (1 / places). */
#define DIAG_FAIL_MIN_ATTEMPTS 3
#define DIAG_FAIL_SHARE 0.6

enum fail_dim { DIM_FILE, DIM_HOST, DIM_WORKER, DIM_TYPE, DIM__COUNT };

static const char *const dim_names[DIM__COUNT] = { "file", "host", "worker", "exception type" };

/* The attempt's place along dim into buf; false when it has none. */
static bool fail_key(const struct failed_chunk *c, enum fail_dim dim, char *buf, size_t size)
{
	const char *v = dim == DIM_FILE ? c->file : dim == DIM_WORKER ? c->worker : c->error;
	if (dim == DIM_HOST)
		return diag_host_of(c->file, buf, size);
	snprintf(buf, size, "%s", v);
	return v[0] != '\0';
}

struct conc {
	char name[FAILED_FILE_LEN];
	size_t top, kept, distinct;
};

/* The most common place along dim among the kept attempts. */
static struct conc fail_count(const struct failed *fl, enum fail_dim dim)
{
	struct conc c = { .kept = 0 };
	char a[FAILED_FILE_LEN], b[FAILED_FILE_LEN];
	for (size_t i = 0; failed_get(fl, i); i++) {
		c.kept++;
		if (!fail_key(failed_get(fl, i), dim, a, sizeof(a)))
			continue;
		size_t same = 0, earlier = 0;
		for (size_t j = 0; failed_get(fl, j); j++)
			if (fail_key(failed_get(fl, j), dim, b, sizeof(b)) && strcmp(a, b) == 0)
				same++, earlier += j < i;
		c.distinct += earlier == 0;
		if (same > c.top)
			c.top = same, memcpy(c.name, a, sizeof(c.name));
	}
	return c;
}

/* The places the run had along dim, beyond those that failed. */
static size_t fail_places(const struct run *r, enum fail_dim dim)
{
	if (dim == DIM_FILE)
		return r->files.count;
	if (dim == DIM_WORKER)
		return r->workers.count;
	if (dim == DIM_TYPE)
		return 1;
	char host[FAILED_FILE_LEN], seen[FAILED_FILE_LEN] = "";
	size_t n = 0;
	for (size_t i = 0; i < r->files.count && n < 2; i++)
		if (diag_host_of(strmap_key_at(&r->files, i), host, sizeof(host)) &&
		    strcmp(host, seen) != 0)
			n++, memcpy(seen, host, sizeof(seen));
	return n;
}

static bool fail_concentrated(const struct run *r, enum fail_dim dim, struct conc *c)
{
	*c = fail_count(&r->failed, dim);
	size_t places = fail_places(r, dim);
	places = places > c->distinct ? places : c->distinct;
	double share = c->kept ? (double)c->top / (double)c->kept : 0;
	if (dim == DIM_TYPE)
		return c->top > 0 && share >= DIAG_FAIL_SHARE;
	return places >= 2 && c->top >= 2 && share >= DIAG_FAIL_SHARE && share >= 2.0 / (double)places;
}

static void fail_write(struct finding *f, const struct run *r, enum fail_dim dim,
		       const struct conc *c)
{
	unsigned long long lost = r->n_failed, retried = r->retries.count;
	const char *base = strrchr(c->name, '/');
	const char *shown = dim == DIM_FILE && base && base[1] ? base + 1 : c->name;
	if (lost)
		snprintf(f->title, sizeof(f->title), "failures: %llu chunk%s lost, %zu of %zu on %s %s",
			 lost, diag_s((double)lost), c->top, c->kept, dim_names[dim], shown);
	else
		snprintf(f->title, sizeof(f->title),
			 "retries: %llu attempt%s retried, no chunk lost; %zu of %zu on %s %s", retried,
			 diag_s((double)retried), c->top, c->kept, dim_names[dim], shown);
	snprintf(f->evidence, sizeof(f->evidence),
		 "failed attempts %llu: retried by a later attempt %llu (chunks recovered %llu), "
		 "chunks lost (their last attempt failed) %llu; of the latest %zu, %zu on %s %s",
		 (unsigned long long)r->failed.n, retried, (unsigned long long)r->retries.recovered,
		 lost, c->kept, c->top, dim_names[dim], c->name);
	snprintf(f->suggestion, sizeof(f->suggestion), "%s",
		 dim == DIM_FILE	 ? "check this file (damaged, or its replica unreachable); skipbadfiles skips it"
		 : dim == DIM_HOST	 ? "read these files from another site"
		 : dim == DIM_WORKER ? "look at this worker's node; retire it"
				     : "the failed chunks' messages (in metrics.json) say why they failed");
}

void diag_rule_failures(struct diag_eval *e)
{
	const struct run *r = e->r;
	if (r->n_failed == 0 && r->failed.n < DIAG_FAIL_MIN_ATTEMPTS)
		return;
	struct conc c = { .kept = 0 };
	enum fail_dim dim = DIM_FILE;
	while (dim < DIM__COUNT && !fail_concentrated(r, dim, &c))
		dim++;
	if (dim == DIM__COUNT) /* the types scattered too: the commonest one */
		dim = DIM_TYPE, c = fail_count(&r->failed, DIM_TYPE);
	const struct failed_chunk *first = failed_get(&r->failed, c.kept ? c.kept - 1 : 0);
	double cost = r->n_chunks ? (double)r->n_failed / (double)r->n_chunks : 0;
	struct finding *f = diag_new(e->out, FIND_FAILURES, first ? first->t : NAN, cost);
	if (r->n_failed == 0) /* every failed attempt retried: worth knowing, not a warning */
		f->severity = SEV_INFO;
	fail_write(f, r, dim, &c);
}
