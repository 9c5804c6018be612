/* The chunks' paces (seconds of process() an event) and where each ran:
 * what the place rules (bad_worker, slow_file, slow_site) judge, chunk by
 * chunk. Shared by src/diagnosis/rules_place.c and rules_worker.c only. */
#ifndef ROASTOP_PACES_H
#define ROASTOP_PACES_H

#include "diagnosispriv.h"
#include "roastop/strmap.h"

/* A file's or site's chunk is slow at DIAG_SLOW_FACTOR times the other
 * places' median pace; a place is named when what it cost is at least
 * DIAG_SLOW_MIN_SHARE of the run's chunk time. */
#define DIAG_SLOW_FACTOR 3.0
#define DIAG_SLOW_MIN_SHARE 0.05

/* A chunk without a worker or a host; a keep's id that skips nothing. */
#define PACE_NOID (UINT32_MAX - 1)
#define PACE_ANY UINT32_MAX

enum pace_by { BY_FILE, BY_WORKER, BY_HOST, BY__COUNT };

struct pace {
	double pace, dur, ev, t_end;
	uint32_t id[BY__COUNT]; /* file, worker, host: ids of the set's names */
};

/* Chunks sorted by pace (fastest first), grouped per file, worker, host.
 * A pace is a chunk's duration over its events, or, in a CPU set, its
 * process() CPU time (the emitter's cpu_time) over its events; dur is then
 * that CPU time. */
struct paces {
	struct pace *c;
	size_t n;
	bool cpu;
	double total; /* the chunks' seconds, all of them (the run's chunk time) */
	struct strmap names[BY__COUNT]; /* name -> id (its insertion index) */
	uint32_t *idx[BY__COUNT]; /* chunk indices by id, then by pace */
	size_t *start[BY__COUNT], *count[BY__COUNT]; /* an id's run in idx */
	double *mid[BY__COUNT]; /* an id's median pace (nearest rank) */
	uint32_t *mark, stamp; /* for paces_distinct, one slot per chunk */
	const struct run *r;
	/* a long file name's end, as a record keeps it -> its index in r->files */
	struct strmap tails;
};

/* What a quantile leaves out: a worker's, a file's or a host's chunks
 * (PACE_ANY: none), and the files whose flag in file_out has bit 0 set. */
struct pace_keep {
	uint32_t id[BY__COUNT];
	const unsigned char *file_out;
};

/* The run's successful chunk records with events and a duration (cpu:
 * a CPU time). */
bool paces_build(struct paces *s, struct diag_eval *e, bool cpu);
/* The set without the chunks of worker w (the groups rebuilt). */
bool paces_drop_worker(struct paces *s, uint32_t w);
void paces_free(struct paces *s);
/* How many ids of `by` the set has (names, some perhaps with no chunk). */
size_t paces_ids(const struct paces *s, enum pace_by by);
const char *paces_name(const struct paces *s, enum pace_by by, uint32_t id);
/* A chunk record's file as the run's file table has it (a record keeps
 * only the end of a long name: its site is in the whole). */
const char *paces_file_key(const struct paces *s, const char *rc_file);
/* A keep that leaves out nothing. */
struct pace_keep paces_keep_all(void);
/* The q-quantile (nearest rank: the ceil(q m)-th smallest of the m kept)
 * of the paces of the chunks idx[0..n) (idx NULL: the whole set), NAN when
 * none is kept; *m the count kept. */
double paces_quantile(const struct paces *s, const uint32_t *idx, size_t n,
		      const struct pace_keep *k, double q, size_t *m);
/* paces_quantile of the whole set without id's chunks of `by`, in the
 * time of id's chunks alone (its indices are in pace order). */
double paces_quantile_but(const struct paces *s, enum pace_by by, uint32_t id, double q,
			  size_t *m);
/* How many distinct ids of `by` the chunks idx[0..n) at or over pace min
 * have. */
size_t paces_distinct(struct paces *s, const uint32_t *idx, size_t n, enum pace_by by, double min);
/* Events per second of a pace, for the texts. */
static inline double paces_rate(double pace)
{
	return pace > 0 ? 1 / pace : 0;
}

/* bad_worker (src/diagnosis/rules_worker.c): the worker named (its id),
 * or PACE_ANY when none is. */
uint32_t diag_worker_judge(struct paces *s, struct findings *out);

#endif
