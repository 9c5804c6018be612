/* Rules on where chunks run slow: a file, a site (its URL's host), a
 * worker. Each place's rate is events per second of its chunks' own time,
 * compared with the median place's (docs/diagnosis.md). */
#include "diagnosispriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slow: a rate under the median's / DIAG_SLOW_FACTOR, costing at least
 * DIAG_SLOW_MIN_SHARE of the chunks' time; compared among at least
 * DIAG_MIN_FILES files (two hosts, two workers). */
#define DIAG_SLOW_FACTOR 3.0
#define DIAG_SLOW_MIN_SHARE 0.05
#define DIAG_MIN_FILES 3
#define DIAG_WORKER_FACTOR 2.0
#define DIAG_WORKER_MIN_CHUNKS 3

struct place {
	const char *name; /* the run's key, a chunk record's worker, or hosts[] */
	double events, seconds, since;
	uint64_t n; /* chunks (files: files, for a host) */
	size_t idx; /* a file's entry in the run's table */
};

#define DIAG_HOST_LEN 128

static double place_rate(const struct place *p)
{
	return p->seconds > 0 && p->events > 0 ? p->events / p->seconds : NAN;
}

/* The slowest of the places against the median of the others (left out,
 * so that two places compare); its index, or -1 when none is slow enough. */
static int place_slowest(const struct place *p, size_t n, double factor, double *median)
{
	double *v = malloc((n ? n : 1) * sizeof(*v));
	int worst = -1;
	for (size_t i = 0; v && i < n; i++)
		if (!isnan(place_rate(&p[i])) &&
		    (worst < 0 || place_rate(&p[i]) < place_rate(&p[worst])))
			worst = (int)i;
	size_t k = 0;
	for (size_t i = 0; v && worst >= 0 && i < n; i++)
		if (!isnan(place_rate(&p[i])) && (int)i != worst)
			v[k++] = place_rate(&p[i]);
	*median = diag_median(v, k);
	free(v);
	if (worst < 0 || !(place_rate(&p[worst]) * factor < *median))
		return -1;
	return worst;
}

/* The chunk time beyond what the median rate would have taken, as a share
 * of all the places' chunk time. */
static double place_cost(const struct place *p, size_t n, const struct place *w, double median)
{
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += p[i].seconds;
	return total > 0 ? (w->seconds - w->events / median) / total : 0;
}

static void place_write(struct finding *f, const char *what, const struct place *w,
			const char *unit, double median, double share)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
	double rate = place_rate(w);
	const char *base = strrchr(w->name, '/');
	snprintf(f->title, sizeof(f->title), "slow %s: %s", what, base && base[1] ? base + 1 : w->name);
	snprintf(f->evidence, sizeof(f->evidence),
		 "%s: %s over %llu %s against the median %s's %s (%.1fx slower); %s of chunk time "
		 "beyond the median's pace, %.0f%% of the run's",
		 w->name, format_si(a, optnum_of(rate), "ev/s"), (unsigned long long)w->n, unit, what,
		 format_si(b, optnum_of(median), "ev/s"), median / rate,
		 format_duration(c, optnum_of(share > 0 ? w->seconds - w->events / median : 0)),
		 100 * share);
}

/* When a file's evidence began: its first chunk's end among the records. */
static double file_since(const struct rawchunk **c, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (diag_same_file(key, c[i]->file))
			return c[i]->v[RC_T_END];
	return NAN;
}

static size_t files_collect(const struct run *r, struct place *p)
{
	size_t k = 0;
	for (size_t i = 0; i < r->files.count; i++) {
		const struct file_agg *fa = strmap_val_at(&r->files, i);
		if (fa->n_chunks == 0)
			continue;
		p[k].name = strmap_key_at(&r->files, i);
		p[k].events = fa->total_events;
		p[k].seconds = fa->total_duration;
		p[k].n = fa->n_chunks;
		p[k].idx = i;
		k++;
	}
	return k;
}

const char *diag_rule_slow_file(const struct run *r, struct findings *out)
{
	struct place *p = malloc((r->files.count ? r->files.count : 1) * sizeof(*p));
	size_t n = p ? files_collect(r, p) : 0;
	double median;
	int w = n >= DIAG_MIN_FILES ? place_slowest(p, n, DIAG_SLOW_FACTOR, &median) : -1;
	double share = w >= 0 ? place_cost(p, n, &p[w], median) : 0;
	const char *name = NULL;
	if (w >= 0 && share >= DIAG_SLOW_MIN_SHARE) {
		size_t nc;
		const struct rawchunk **c = diag_chunks(r, &nc);
		double since = file_since(c, nc, p[w].name);
		free(c);
		struct finding *f = diag_new(out, FIND_SLOW_FILE, SEV_WARNING, since, share);
		place_write(f, "file", &p[w], "chunks", median, share);
		snprintf(f->suggestion, sizeof(f->suggestion),
			 "check where this file is read from (its site, its replica); copy it closer");
		name = strmap_key_at(&r->files, p[w].idx);
	}
	free(p);
	return name;
}

/* Per host of the files' URLs (names kept in hosts); a host of one file is
 * that file's finding. */
static size_t hosts_collect(const struct run *r, struct place *p, char (*hosts)[DIAG_HOST_LEN])
{
	size_t k = 0;
	char host[DIAG_HOST_LEN];
	for (size_t i = 0; i < r->files.count; i++) {
		const struct file_agg *fa = strmap_val_at(&r->files, i);
		if (fa->n_chunks == 0 || !diag_host_of(strmap_key_at(&r->files, i), host, sizeof(host)))
			continue;
		size_t j = 0;
		while (j < k && strcmp(p[j].name, host) != 0)
			j++;
		if (j == k && k == DIAG_MAX_PLACES)
			continue;
		if (j == k) {
			memcpy(hosts[k], host, sizeof(host));
			p[k++] = (struct place){ .name = hosts[j] };
		}
		p[j].events += fa->total_events;
		p[j].seconds += fa->total_duration;
		p[j].n++;
	}
	return k;
}

void diag_rule_slow_site(const struct run *r, struct findings *out)
{
	struct place *p = malloc(DIAG_MAX_PLACES * sizeof(*p));
	char (*hosts)[DIAG_HOST_LEN] = malloc(DIAG_MAX_PLACES * sizeof(*hosts));
	size_t n = p && hosts ? hosts_collect(r, p, hosts) : 0;
	double median;
	int w = n >= 2 ? place_slowest(p, n, DIAG_SLOW_FACTOR, &median) : -1;
	double share = w >= 0 ? place_cost(p, n, &p[w], median) : 0;
	if (w >= 0 && p[w].n >= 2 && share >= DIAG_SLOW_MIN_SHARE) {
		struct finding *f = diag_new(out, FIND_SLOW_SITE, SEV_WARNING, NAN, share);
		place_write(f, "site", &p[w], "files", median, share);
		snprintf(f->suggestion, sizeof(f->suggestion),
			 "read these files from another site (a closer replica, a redirector)");
	}
	free(hosts);
	free(p);
}

/* Per worker, from the chunk records, leaving out the slow file's chunks
 * (they would make whichever worker read them look slow). */
static size_t workers_collect(const struct rawchunk **c, size_t nc, const char *slow,
			      struct place *p)
{
	size_t k = 0;
	for (size_t i = 0; i < nc; i++) {
		double ev = c[i]->v[RC_NUM_EVENTS], s = c[i]->v[RC_DURATION];
		if (!c[i]->worker[0] || isnan(ev) || isnan(s) || (slow && diag_same_file(slow, c[i]->file)))
			continue;
		size_t j = 0;
		while (j < k && strcmp(p[j].name, c[i]->worker) != 0)
			j++;
		if (j == k && k == DIAG_MAX_PLACES)
			continue;
		if (j == k)
			p[k++] = (struct place){ .name = c[i]->worker, .since = c[i]->v[RC_T_END] };
		p[j].events += ev;
		p[j].seconds += s;
		p[j].n++;
	}
	for (size_t j = 0; j < k; j++) /* too few chunks to judge: out of the comparison */
		if (p[j].n < DIAG_WORKER_MIN_CHUNKS)
			p[j].events = 0;
	return k;
}

void diag_rule_bad_worker(const struct run *r, const char *slow_file, struct findings *out)
{
	size_t nc;
	const struct rawchunk **c = diag_chunks(r, &nc);
	struct place *p = c ? malloc(DIAG_MAX_PLACES * sizeof(*p)) : NULL;
	size_t n = p ? workers_collect(c, nc, slow_file, p) : 0;
	double median;
	int w = n >= 2 ? place_slowest(p, n, DIAG_WORKER_FACTOR, &median) : -1;
	double share = w >= 0 ? place_cost(p, n, &p[w], median) : 0;
	if (w >= 0 && share >= DIAG_SLOW_MIN_SHARE) {
		struct finding *f = diag_new(out, FIND_BAD_WORKER, SEV_WARNING, p[w].since, share);
		place_write(f, "worker", &p[w], "chunks", median, share);
		snprintf(f->suggestion, sizeof(f->suggestion),
			 "look at this worker's node (view 2, Enter: its CPU and memory); retire it");
	}
	free(p);
	free(c);
}
