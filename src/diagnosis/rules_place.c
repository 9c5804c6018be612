/* Rules on where chunks run slow: a worker (rules_worker.c), a file, a
 * site (its URLs' host). Each judges chunks' paces (seconds an event), one
 * by one, against the other places' chunks; the worker is judged first and
 * its chunks are left out of the files' and sites' (docs/diagnosis.md). */
#include "paces.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A file or a site needs at least DIAG_PLACE_MIN_SLOW slow chunks (one is
 * a straggler), and more than half of its chunks slow; files are compared
 * among at least DIAG_MIN_FILES files, sites among 2. */
#define DIAG_PLACE_MIN_SLOW 2
#define DIAG_MIN_FILES 3

struct gjudge {
	uint32_t id;
	size_t n, slow, files, workers, slow_workers;
	double ref, ratio, cost, beyond, since;
};

/* How many of the chunks idx[0..n) (by pace, the slowest last) are at
 * `at` or over. */
static size_t group_slow(const struct paces *s, const uint32_t *idx, size_t n, double at)
{
	size_t k = 0;
	while (k < n && s->c[idx[n - 1 - k]].pace >= at)
		k++;
	return k;
}

static void group_cost(const struct paces *s, const uint32_t *idx, size_t n, struct gjudge *j)
{
	double secs = 0, ev = 0;
	j->since = NAN;
	for (size_t i = 0; i < n; i++) {
		const struct pace *c = &s->c[idx[i]];
		secs += c->dur, ev += c->ev;
		if (!(c->t_end >= j->since))
			j->since = c->t_end;
	}
	j->beyond = secs - ev * j->ref;
	j->cost = s->total > 0 ? j->beyond / s->total : 0;
}

/* Whether place id of `by` (a file, a host) is slow: most of its chunks,
 * at least DIAG_PLACE_MIN_SLOW, at DIAG_SLOW_FACTOR times the median pace
 * of the other places' chunks or slower; when several workers read it, on
 * more than one of them. */
static bool group_judge(struct paces *s, enum pace_by by, uint32_t id, struct gjudge *j)
{
	const uint32_t *idx = s->idx[by] + s->start[by][id];
	size_t n = s->count[by][id];
	*j = (struct gjudge){ .id = id, .n = n };
	if (n < DIAG_PLACE_MIN_SLOW || n >= s->n)
		return false;
	j->ref = paces_quantile_but(s, by, id, 0.5, NULL);
	double at = DIAG_SLOW_FACTOR * j->ref;
	j->slow = group_slow(s, idx, n, at);
	if (j->slow < DIAG_PLACE_MIN_SLOW || 2 * j->slow <= n)
		return false;
	j->workers = paces_distinct(s, idx, n, BY_WORKER, 0);
	j->slow_workers = paces_distinct(s, idx, n, BY_WORKER, at);
	if (j->workers >= 2 && j->slow_workers < 2) /* slow on one of its readers only */
		return false;
	j->files = paces_distinct(s, idx, n, BY_FILE, at);
	j->ratio = s->mid[by][id] / j->ref;
	group_cost(s, idx, n, j);
	return j->cost >= DIAG_SLOW_MIN_SHARE;
}

/* The slowest place of `by` by its cost; false when none is slow. */
static bool group_worst(struct paces *s, enum pace_by by, struct gjudge *best)
{
	size_t places = 0;
	for (uint32_t id = 0; id < paces_ids(s, by); id++)
		places += s->count[by][id] > 0;
	if (places < (by == BY_FILE ? DIAG_MIN_FILES : 2))
		return false;
	struct gjudge j = { 0 };
	bool found = false;
	for (uint32_t id = 0; id < paces_ids(s, by); id++)
		if (group_judge(s, by, id, &j) && (by != BY_HOST || j.files >= 2) &&
		    (!found || j.cost > best->cost)) {
			*best = j;
			found = true;
		}
	return found;
}

/* When one worker read all of the place's chunks and nothing else, the
 * evidence cannot tell the place from the worker: it says so. */
static void group_alone(const struct paces *s, enum pace_by by, const struct gjudge *j,
			char *buf, size_t size)
{
	uint32_t w = s->c[s->idx[by][s->start[by][j->id]]].id[BY_WORKER];
	buf[0] = '\0';
	if (j->workers == 1 && w < paces_ids(s, BY_WORKER) && s->count[BY_WORKER][w] == j->n)
		snprintf(buf, size,
			 "; all its chunks ran on %s, which read nothing else: the %s and that "
			 "worker cannot be told apart",
			 paces_name(s, BY_WORKER, w), by == BY_FILE ? "file" : "site");
}

static void group_write(const struct paces *s, enum pace_by by, const char *name,
			const struct gjudge *j, struct finding *f)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], files[48] = "", alone[200];
	const char *what = by == BY_FILE ? "file" : "site", *base = strrchr(name, '/');
	snprintf(f->title, sizeof(f->title), "slow %s: %s", what,
		 by == BY_FILE && base && base[1] ? base + 1 : name);
	if (by == BY_HOST)
		snprintf(files, sizeof(files), ", over %zu files,", j->files);
	group_alone(s, by, j, alone, sizeof(alone));
	snprintf(f->evidence, sizeof(f->evidence),
		 "%s: %zu of its %zu chunks%s at %.0fx the other %ss' median pace or slower, "
		 "on %zu of the %zu workers that read it; a median %s against the other %ss' %s "
		 "(%.1fx slower); %s of chunk time beyond their pace, %.0f%% of the run's%s",
		 name, j->slow, j->n, files, DIAG_SLOW_FACTOR, what, j->slow_workers, j->workers,
		 format_si(a, optnum_of(paces_rate(j->ref * j->ratio)), "ev/s"), what,
		 format_si(b, optnum_of(paces_rate(j->ref)), "ev/s"), j->ratio,
		 format_duration(c, optnum_of(j->beyond)), 100 * j->cost, alone);
}

static void place_rule(struct paces *s, enum pace_by by, struct findings *out)
{
	struct gjudge j = { 0 };
	if (!group_worst(s, by, &j))
		return;
	const char *name = paces_name(s, by, j.id);
	struct finding *f = diag_new(out, by == BY_FILE ? FIND_SLOW_FILE : FIND_SLOW_SITE,
				     by == BY_FILE ? j.since : NAN, j.cost);
	group_write(s, by, by == BY_FILE ? paces_file_key(s, name) : name, &j, f);
	const char *fix = "read these files from another site (a closer replica, a redirector)";
	if (by == BY_FILE)
		fix = "check where this file is read from (its site, its replica); copy it closer";
	snprintf(f->suggestion, sizeof(f->suggestion), "%s", fix);
}

/* The worker judged on the chunks' duration, else on their CPU time when
 * every chunk carries one (a worker slow on the CPU shows there whatever
 * the load of the machine does to the durations); its id in s. */
static uint32_t places_worker(struct diag_eval *e, struct paces *s)
{
	uint32_t w = diag_worker_judge(s, e->out);
	if (w != PACE_ANY)
		return w;
	struct paces cpu;
	if (paces_build(&cpu, e, true) && cpu.n == s->n) {
		uint32_t c = diag_worker_judge(&cpu, e->out);
		const uint32_t *id = c != PACE_ANY ? strmap_get(&s->names[BY_WORKER],
								paces_name(&cpu, BY_WORKER, c))
						   : NULL;
		w = id ? *id : PACE_ANY;
	}
	paces_free(&cpu);
	return w;
}

/* bad_worker: the worker judged first; the chunks' paces without its
 * chunks are left in e for slow_file and slow_site (none: nothing to
 * judge). */
void diag_rule_bad_worker(struct diag_eval *e)
{
	struct paces *s = malloc(sizeof(*s));
	bool ok = s && paces_build(s, e, false) && s->n >= DIAG_MIN_CHUNKS;
	uint32_t w = ok ? places_worker(e, s) : PACE_ANY;
	if (ok && (w == PACE_ANY || paces_drop_worker(s, w))) {
		e->places = s;
		return;
	}
	if (s)
		paces_free(s);
	free(s);
}

void diag_rule_slow_file(struct diag_eval *e)
{
	if (e->places)
		place_rule(e->places, BY_FILE, e->out);
}

void diag_rule_slow_site(struct diag_eval *e)
{
	if (e->places)
		place_rule(e->places, BY_HOST, e->out);
}

void diag_places_free(struct diag_eval *e)
{
	if (e->places)
		paces_free(e->places);
	free(e->places);
}
