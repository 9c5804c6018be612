/* A past run as a measurement holds it (history.h reads them), and the
 * last comparable run against the run at hand: metrics.json's
 * roastop.previous, summary.txt's Previous Run (docs/metrics.md,
 * "Identity"). */
#ifndef ROASTOP_PREVIOUS_H
#define ROASTOP_PREVIOUS_H

#include "roastop/diagnosis.h"
#include "roastop/identity.h"
#include "roastop/jsonw.h"
#include "roastop/strbuf.h"

#define PAST_IDS 8u /* finding ids kept per run, most severe first */
#define PAST_DATASETS 16u
#define PAST_FILES 512u /* files of a past run's chunk records kept */
#define PREVIOUS_FILES 16u /* per-file changes given, the largest falls */

/* A dataset's successful chunks as metrics.json's per_dataset has them. */
struct past_dataset {
	char name[96];
	double events, seconds; /* total_events, total_duration */
};

/* A file's successful chunks among a measurement's raw_chunk_metrics (all
 * of them, or a uniform sample past 4,096): by its name's hash
 * (previous_file_hash). */
struct past_file {
	uint64_t hash;
	double events, seconds; /* num_events, duration */
};

/* One measurement, as history shows it. */
struct past_run {
	char dir[256]; /* its directory's name under the root */
	char name[96], status[16]; /* "" absent */
	optnum chunks, events, rate_khz, elapsed, workers; /* workers: time-averaged */
	char finding[64], severity[16]; /* the most severe, "" none */
	size_t findings;
	char ids[PAST_IDS][32]; /* its findings' ids, most severe first */
	size_t n_ids;
	bool has_identity;
	struct identity id;
	size_t n_datasets; /* its per_dataset, the first PAST_DATASETS */
	struct past_dataset datasets[PAST_DATASETS];
	/* Its per-file figures, read only when asked (history_parse): at
	 * most PAST_FILES, in order of hash; NULL when not read. */
	struct past_file *files;
	size_t n_files;
};

/* A file's name as a chunk record keeps it (its end), hashed. */
uint64_t previous_file_hash(const char *name);
/* Adds a chunk record's events and seconds to its file in files (n of
 * them, kept in order of hash); a new file past PAST_FILES is left out. */
void previous_file_add(struct past_file *files, size_t *n, const char *name, double events,
		       double seconds);

/* The last comparable run prev against run r (measured as m): which it was,
 * whether the same analysis, and the change of rate, duration, workers. */
void previous_json(struct jsonw *w, const struct past_run *prev, const struct run *r,
		   const struct metrics *m);
void previous_text(struct strbuf *o, const struct past_run *prev, const struct run *r,
		   const struct metrics *m);

/* What slower_than_before reads of prev, against run r (measured as m). */
void previous_for_diagnosis(const struct past_run *prev, const struct run *r,
			    const struct metrics *m, struct diagnosis_previous *out);
/* The ETA from prev's duration (docs/metrics.md, "Progress and ETA"):
 * its elapsed time x (1 - the run's progress fraction), or less the run's
 * elapsed time without a fraction; invalid when prev's is unknown. */
optnum previous_eta(const struct past_run *prev, const struct metrics *m);

#endif
