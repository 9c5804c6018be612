/* bad_worker: a worker whose chunks run slow whatever they read, judged
 * chunk by chunk against the other workers' chunks, from many chunks (their
 * median) or from few (each beyond the others' slowest), before any file
 * is (docs/diagnosis.md). */
#include "paces.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Median form: at least DIAG_WORKER_MIN_CHUNKS chunks whose median pace is
 * DIAG_WORKER_FACTOR times the other workers' median and over their
 * DIAG_WORKER_HI_QUANTILE quantile. Few form: at least
 * DIAG_WORKER_FEW_MIN chunks, each slower than DIAG_WORKER_FEW_FACTOR times
 * the other workers' DIAG_WORKER_HI_QUANTILE quantile. Either compares with
 * at least DIAG_WORKER_MIN_OTHERS chunks of other workers. */
#define DIAG_WORKER_FACTOR 2.0
#define DIAG_WORKER_MIN_CHUNKS 3
#define DIAG_WORKER_FEW_FACTOR 2.0
#define DIAG_WORKER_FEW_MIN 2
#define DIAG_WORKER_HI_QUANTILE 0.9
#define DIAG_WORKER_MIN_OTHERS 4

struct wjudge {
	uint32_t w;
	bool few; /* judged by the few form */
	size_t n, others; /* its chunks in evidence; the other workers' */
	size_t files, elsewhere; /* its slow chunks' files; of them, read by others */
	double ref, hi, ratio, cost, since, beyond;
};

/* File f as other workers than w read it: bit 1, they read it; bit 0,
 * slowly (the median of their chunks of it DIAG_SLOW_FACTOR times med). */
static unsigned char worker_file(const struct paces *s, uint32_t w, uint32_t f, double med)
{
	size_t m = 0, n = s->count[BY_FILE][f];
	const uint32_t *idx = s->idx[BY_FILE] + s->start[BY_FILE][f];
	for (size_t i = 0; i < n && m == 0; i++)
		m = s->c[idx[i]].id[BY_WORKER] != w;
	if (m == 0)
		return 0;
	if (s->c[idx[n - 1]].pace < DIAG_SLOW_FACTOR * med) /* none of its chunks is */
		return 2;
	struct pace_keep others = paces_keep_all();
	others.id[BY_WORKER] = w;
	return (unsigned char)(2 | (paces_quantile(s, idx, n, &others, 0.5, NULL) >=
				    DIAG_SLOW_FACTOR * med));
}

/* The files as the other workers than the one judged read them
 * (worker_file's flags), kept between workers: a worker resets only the
 * entries it changed, so that judging one costs its own chunks, not the
 * run's files. */
struct wfiles {
	unsigned char *flag;
	struct fmid {
		double mid;
		uint32_t f;
	} *slowest; /* the files by their median pace, slowest first */
	uint32_t *dirty;
	size_t n, ndirty;
};

static int cmp_fmid(const void *a, const void *b)
{
	double x = ((const struct fmid *)a)->mid, y = ((const struct fmid *)b)->mid;
	return (x < y) - (x > y);
}

static bool wfiles_init(const struct paces *s, struct wfiles *wf)
{
	wf->n = paces_ids(s, BY_FILE);
	wf->ndirty = 0;
	wf->flag = malloc(wf->n + 1);
	wf->slowest = malloc((wf->n + 1) * sizeof(*wf->slowest));
	wf->dirty = malloc((2 * wf->n + 1) * sizeof(*wf->dirty));
	if (!wf->flag || !wf->slowest || !wf->dirty)
		return false;
	for (uint32_t f = 0; f < wf->n; f++) {
		wf->flag[f] = s->count[BY_FILE][f] ? 2 : 0; /* read by others, not slowly */
		wf->slowest[f] = (struct fmid){ s->count[BY_FILE][f] ? s->mid[BY_FILE][f] : 0, f };
	}
	qsort(wf->slowest, wf->n, sizeof(*wf->slowest), cmp_fmid);
	return true;
}

static void wfiles_set(struct wfiles *wf, uint32_t f, unsigned char flag)
{
	wf->flag[f] = flag;
	wf->dirty[wf->ndirty++] = f;
}

static void wfiles_free(struct wfiles *wf)
{
	free(wf->flag);
	free(wf->slowest);
	free(wf->dirty);
}

/* Every file as the other workers than w read it: those w did not read
 * by their median, those it read by worker_file. Whether any is read
 * slowly (then w's chunks of it are the file's). */
static bool worker_files(struct paces *s, uint32_t w, double med, struct wfiles *wf)
{
	const uint32_t *mine = s->idx[BY_WORKER] + s->start[BY_WORKER][w];
	for (size_t i = 0; i < wf->ndirty; i++)
		wf->flag[wf->dirty[i]] = s->count[BY_FILE][wf->dirty[i]] ? 2 : 0;
	wf->ndirty = 0;
	for (size_t k = 0; k < wf->n && wf->slowest[k].mid >= DIAG_SLOW_FACTOR * med; k++)
		wfiles_set(wf, wf->slowest[k].f, 3);
	s->stamp++;
	for (size_t i = 0; i < s->count[BY_WORKER][w]; i++) { /* the files w read too */
		uint32_t f = s->c[mine[i]].id[BY_FILE];
		if (s->mark[f] != s->stamp && wf->ndirty < 2 * wf->n)
			wfiles_set(wf, f, worker_file(s, w, f, med));
		s->mark[f] = s->stamp;
	}
	bool any = false;
	for (size_t i = 0; i < wf->ndirty; i++)
		any = any || (wf->flag[wf->dirty[i]] & 1);
	return any;
}

/* The files of w's slow chunks (in evidence, at DIAG_WORKER_FACTOR times
 * the others' median or slower), which of them other workers read, and
 * what w's chunks in evidence took beyond the others' median pace. */
static void worker_attribute(struct paces *s, const unsigned char *file, struct wjudge *j)
{
	const uint32_t *mine = s->idx[BY_WORKER] + s->start[BY_WORKER][j->w];
	double secs = 0, ev = 0;
	j->files = j->elsewhere = 0;
	j->since = NAN;
	s->stamp++;
	for (size_t i = 0; i < s->count[BY_WORKER][j->w]; i++) {
		const struct pace *c = &s->c[mine[i]];
		uint32_t f = c->id[BY_FILE];
		if (file[f] & 1)
			continue;
		secs += c->dur, ev += c->ev;
		if (!(c->t_end >= j->since))
			j->since = c->t_end;
		if (c->pace < DIAG_WORKER_FACTOR * j->ref || s->mark[f] == s->stamp)
			continue;
		s->mark[f] = s->stamp;
		j->files++;
		j->elsewhere += (file[f] & 2) != 0;
	}
	j->beyond = secs - ev * j->ref;
	j->cost = s->total > 0 ? j->beyond / s->total : 0;
}

/* Whether worker w is slow, by either form, and its own (not one file's
 * that no other worker read, which the file's rule tells). */
static bool worker_judge(struct paces *s, uint32_t w, struct wfiles *wf, struct wjudge *j)
{
	const unsigned char *file = wf->flag;
	const uint32_t *mine = s->idx[BY_WORKER] + s->start[BY_WORKER][w];
	size_t nw = s->count[BY_WORKER][w], no;
	struct pace_keep others = paces_keep_all(), evidence = paces_keep_all();
	others.id[BY_WORKER] = w;
	double med = paces_quantile_but(s, BY_WORKER, w, 0.5, &no);
	if (nw < DIAG_WORKER_FEW_MIN || no < DIAG_WORKER_MIN_OTHERS)
		return false;
	bool out = worker_files(s, w, med, wf);
	others.file_out = evidence.file_out = file;
	*j = (struct wjudge){ .w = w, .ref = med, .others = no };
	j->hi = paces_quantile_but(s, BY_WORKER, w, DIAG_WORKER_HI_QUANTILE, NULL);
	if (out) { /* files read slowly elsewhere left out: a pass over the set */
		j->ref = paces_quantile(s, NULL, 0, &others, 0.5, &j->others);
		j->hi = paces_quantile(s, NULL, 0, &others, DIAG_WORKER_HI_QUANTILE, NULL);
	}
	double mid = paces_quantile(s, mine, nw, &evidence, 0.5, &j->n);
	double least = paces_quantile(s, mine, nw, &evidence, 0, NULL);
	if (j->n < DIAG_WORKER_FEW_MIN || j->others < DIAG_WORKER_MIN_OTHERS)
		return false;
	bool median = j->n >= DIAG_WORKER_MIN_CHUNKS && mid >= DIAG_WORKER_FACTOR * j->ref &&
		      mid > j->hi; /* and most of them beyond nearly all of the others' */
	j->few = !median && least > DIAG_WORKER_FEW_FACTOR * j->hi;
	if (!median && !j->few)
		return false;
	j->ratio = median ? mid / j->ref : least / j->hi;
	worker_attribute(s, file, j);
	if (j->files == 1 && j->elsewhere == 0) /* one file only it read */
		return false;
	return j->cost >= DIAG_SLOW_MIN_SHARE;
}

/* The few form's chunks, as rates: "5.6 kev/s, 8.4 kev/s" (4 at most). */
static void worker_rates(const struct paces *s, const struct wjudge *j, const unsigned char *file,
			 char *buf, size_t size)
{
	const uint32_t *mine = s->idx[BY_WORKER] + s->start[BY_WORKER][j->w];
	size_t used = 0, shown = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < s->count[BY_WORKER][j->w] && used < size; i++) {
		const struct pace *c = &s->c[mine[i]];
		if (file[c->id[BY_FILE]] & 1)
			continue;
		char a[FMT_LEN];
		if (++shown > 4) {
			snprintf(buf + used, size - used, ", ...");
			break;
		}
		used += (size_t)snprintf(buf + used, size - used, "%s%s", shown > 1 ? ", " : "",
					 format_si(a, optnum_of(paces_rate(c->pace)), "ev/s"));
	}
}

static void worker_write(const struct paces *s, const struct wjudge *j, const unsigned char *file,
			 struct finding *f)
{
	char a[FMT_LEN], b[FMT_LEN], d[FMT_LEN], rates[160];
	const char *name = paces_name(s, BY_WORKER, j->w);
	snprintf(f->title, sizeof(f->title), "slow worker: %s", name);
	format_si(b, optnum_of(paces_rate(j->few ? j->hi : j->ref)), "ev/s");
	if (j->few) {
		worker_rates(s, j, file, rates, sizeof(rates));
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s: %zu chunks at %s%s (%.1fx slower or more each) against the other "
			 "workers' slowest, %s (the %.0fth percentile of their %zu chunks)",
			 name, j->n, rates, s->cpu ? " of CPU time" : "", j->ratio, b,
			 100 * DIAG_WORKER_HI_QUANTILE, j->others);
	} else {
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s: %zu chunks at a median %s%s (%.1fx slower) against the other "
			 "workers' median %s over their %zu chunks",
			 name, j->n, format_si(a, optnum_of(paces_rate(j->ref * j->ratio)), "ev/s"),
			 s->cpu ? " of CPU time" : "", j->ratio, b, j->others);
	}
	size_t len = strlen(f->evidence);
	snprintf(f->evidence + len, sizeof(f->evidence) - len,
		 "; its slow chunks read %zu file%s, %zu of them read by other workers at their "
		 "pace; %s of %s time beyond the other workers' median pace, %.0f%% of the run's",
		 j->files, diag_s((double)j->files), j->elsewhere,
		 format_duration(d, optnum_of(j->beyond)), s->cpu ? "CPU" : "chunk", 100 * j->cost);
	snprintf(f->suggestion, sizeof(f->suggestion),
		 "look at this worker's node (its CPU and memory); retire it");
}

uint32_t diag_worker_judge(struct paces *s, struct findings *out)
{
	struct wfiles wf;
	struct wjudge j, best = { .w = PACE_ANY };
	bool ok = wfiles_init(s, &wf);
	for (uint32_t w = 0; ok && w < paces_ids(s, BY_WORKER); w++)
		if (worker_judge(s, w, &wf, &j) && (best.w == PACE_ANY || j.cost > best.cost))
			best = j;
	if (best.w != PACE_ANY && worker_judge(s, best.w, &wf, &j)) { /* its files' flags */
		struct finding *f = diag_new(out, FIND_BAD_WORKER, j.since, j.cost);
		worker_write(s, &j, wf.flag, f);
	}
	wfiles_free(&wf);
	return best.w;
}
