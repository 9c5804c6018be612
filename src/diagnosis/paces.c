/* The chunks' paces and their places, for the place rules (paces.h). */
#include "paces.h"

#include "roastop/strutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t paces_id(struct paces *s, enum pace_by by, const char *name)
{
	bool added;
	uint32_t *v = strmap_upsert(&s->names[by], name, &added);
	if (!v)
		return PACE_NOID;
	if (added)
		*v = (uint32_t)(s->names[by].count - 1);
	return *v;
}

static int cmp_pace(const void *a, const void *b)
{
	double x = ((const struct pace *)a)->pace, y = ((const struct pace *)b)->pace;
	return (x > y) - (x < y);
}

/* A chunk's own time: its duration less its wait for a CPU where measured
 * (at most its time off the CPU, as cpu_starved counts it), so that a node
 * short of cores, which is cpu_starved's finding, makes no place look slow. */
static double pace_time(const struct rawchunk *rc)
{
	double d = rc->v[RC_DURATION], cpu = rc->v[RC_CPU_TIME], wait = rc->v[RC_CPU_WAIT];
	if (!isfinite(wait) || !(wait > 0) || !isfinite(cpu) || !isfinite(d))
		return d;
	return d - fmin(wait, fmax(d - fmin(cpu, d), 0));
}

/* One chunk record as a pace; false when it has no events or no time in
 * the set's measure (its own time, or process()'s CPU time). */
static bool pace_of(struct paces *s, const struct rawchunk *rc, struct pace *p)
{
	double ev = rc->v[RC_NUM_EVENTS], dur = s->cpu ? rc->v[RC_CPU_TIME] : pace_time(rc);
	if (!(ev > 0) || !(dur > 0) || !isfinite(ev) || !isfinite(dur))
		return false;
	char host[128];
	*p = (struct pace){ .pace = dur / ev, .dur = dur, .ev = ev, .t_end = rc->v[RC_T_END] };
	p->id[BY_FILE] = paces_id(s, BY_FILE, rc->file);
	p->id[BY_WORKER] = rc->worker[0] ? paces_id(s, BY_WORKER, rc->worker) : PACE_NOID;
	p->id[BY_HOST] = diag_host_of(paces_file_key(s, rc->file), host, sizeof(host))
				 ? paces_id(s, BY_HOST, host)
				 : PACE_NOID;
	return p->id[BY_FILE] != PACE_NOID;
}

/* Each id's chunks, by pace (the set is sorted: a counting sort keeps it). */
static bool paces_group(struct paces *s, enum pace_by by)
{
	size_t ids = s->names[by].count;
	free(s->idx[by]), free(s->start[by]), free(s->count[by]), free(s->mid[by]);
	s->idx[by] = malloc((s->n ? s->n : 1) * sizeof(uint32_t));
	s->start[by] = calloc(ids + 1, sizeof(size_t));
	s->count[by] = calloc(ids + 1, sizeof(size_t));
	s->mid[by] = calloc(ids + 1, sizeof(double));
	if (!s->idx[by] || !s->start[by] || !s->count[by] || !s->mid[by])
		return false;
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].id[by] < ids)
			s->count[by][s->c[i].id[by]]++;
	for (size_t k = 1; k <= ids; k++)
		s->start[by][k] = s->start[by][k - 1] + s->count[by][k - 1];
	memset(s->count[by], 0, (ids + 1) * sizeof(size_t));
	for (size_t i = 0; i < s->n; i++) {
		uint32_t k = s->c[i].id[by];
		if (k < ids)
			s->idx[by][s->start[by][k] + s->count[by][k]++] = (uint32_t)i;
	}
	for (size_t k = 0; k < ids; k++) {
		size_t n = s->count[by][k], median = s->start[by][k] + (n + 1) / 2 - 1;
		s->mid[by][k] = n ? s->c[s->idx[by][median]].pace : NAN;
	}
	return true;
}

static bool paces_regroup(struct paces *s)
{
	bool ok = true;
	for (int by = 0; by < BY__COUNT; by++)
		ok = ok && paces_group(s, (enum pace_by)by);
	return ok;
}

/* The run's long file names by the end a chunk record keeps of them. */
static void paces_tails(struct paces *s)
{
	char tail[RAWCHUNKS_FILE_LEN];
	strmap_init(&s->tails, sizeof(uint32_t), 0);
	for (size_t i = 0; i < s->r->files.count; i++) {
		const char *key = strmap_key_at(&s->r->files, i);
		if (strlen(key) < RAWCHUNKS_FILE_LEN)
			continue;
		strutil_copy_tail(tail, sizeof(tail), key);
		bool added;
		uint32_t *v = strmap_upsert(&s->tails, tail, &added);
		if (v)
			*v = (uint32_t)i;
	}
}

const char *paces_file_key(const struct paces *s, const char *rc_file)
{
	const uint32_t *i = s->tails.count && strlen(rc_file) >= RAWCHUNKS_FILE_LEN - 1
				    ? strmap_get(&s->tails, rc_file)
				    : NULL;
	return i ? strmap_key_at(&s->r->files, *i) : rc_file;
}

bool paces_build(struct paces *s, struct diag_eval *e, bool cpu)
{
	memset(s, 0, sizeof(*s));
	s->cpu = cpu;
	s->r = e->r;
	for (int by = 0; by < BY__COUNT; by++)
		strmap_init(&s->names[by], sizeof(uint32_t), 0);
	paces_tails(s);
	size_t nc;
	const struct rawchunk *const *c = diag_chunks(e, &nc);
	s->c = c ? malloc(nc * sizeof(*s->c)) : NULL;
	s->mark = c ? calloc(nc + 1, sizeof(uint32_t)) : NULL;
	for (size_t i = 0; s->c && s->mark && i < nc; i++)
		if (pace_of(s, c[i], &s->c[s->n]))
			s->total += s->c[s->n++].dur;
	if (!s->c || !s->mark)
		return false;
	qsort(s->c, s->n, sizeof(*s->c), cmp_pace);
	return paces_regroup(s);
}

bool paces_drop_worker(struct paces *s, uint32_t w)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].id[BY_WORKER] != w)
			s->c[k++] = s->c[i];
	s->n = k;
	return paces_regroup(s);
}

void paces_free(struct paces *s)
{
	for (int by = 0; by < BY__COUNT; by++) {
		strmap_free(&s->names[by]);
		free(s->idx[by]), free(s->start[by]), free(s->count[by]), free(s->mid[by]);
	}
	strmap_free(&s->tails);
	free(s->c);
	free(s->mark);
	memset(s, 0, sizeof(*s));
}

size_t paces_ids(const struct paces *s, enum pace_by by)
{
	return s->names[by].count;
}

const char *paces_name(const struct paces *s, enum pace_by by, uint32_t id)
{
	return id < s->names[by].count ? strmap_key_at(&s->names[by], id) : "";
}

struct pace_keep paces_keep_all(void)
{
	return (struct pace_keep){ .id = { PACE_ANY, PACE_ANY, PACE_ANY } };
}

static bool kept(const struct pace *c, const struct pace_keep *k)
{
	for (int by = 0; by < BY__COUNT; by++)
		if (c->id[by] == k->id[by])
			return false;
	return !(k->file_out && (k->file_out[c->id[BY_FILE]] & 1));
}

double paces_quantile(const struct paces *s, const uint32_t *idx, size_t n,
		      const struct pace_keep *k, double q, size_t *m)
{
	size_t kept_n = 0;
	if (!idx)
		n = s->n;
	for (size_t i = 0; i < n; i++)
		kept_n += kept(&s->c[idx ? idx[i] : i], k);
	if (m)
		*m = kept_n;
	size_t rank = (size_t)ceil(q * (double)kept_n);
	rank = rank < 1 ? 1 : rank;
	for (size_t i = 0; kept_n && i < n; i++) {
		const struct pace *c = &s->c[idx ? idx[i] : i];
		if (kept(c, k) && --rank == 0)
			return c->pace;
	}
	return NAN;
}

double paces_quantile_but(const struct paces *s, enum pace_by by, uint32_t id, double q,
			  size_t *m)
{
	const uint32_t *g = id < paces_ids(s, by) ? s->idx[by] + s->start[by][id] : NULL;
	size_t ng = g ? s->count[by][id] : 0, kept_n = s->n - ng;
	if (m)
		*m = kept_n;
	if (kept_n == 0)
		return NAN;
	size_t rank = (size_t)ceil(q * (double)kept_n), p = rank < 1 ? 0 : rank - 1;
	for (size_t i = 0; i < ng && g[i] <= p; i++) /* each left out before it moves it on */
		p++;
	return s->c[p].pace;
}

size_t paces_distinct(struct paces *s, const uint32_t *idx, size_t n, enum pace_by by, double min)
{
	size_t d = 0;
	s->stamp++;
	for (size_t i = 0; i < n; i++) {
		const struct pace *c = &s->c[idx[i]];
		uint32_t id = c->id[by];
		if (c->pace < min || id >= paces_ids(s, by) || s->mark[id] == s->stamp)
			continue;
		s->mark[id] = s->stamp;
		d++;
	}
	return d;
}
