/* A run's identity (docs/metrics.md, "Identity"): what makes two runs the
 * same analysis, written with each measurement as roastop.identity and
 * read back by history and compare. */
#ifndef ROASTOP_IDENTITY_H
#define ROASTOP_IDENTITY_H

#include "roastop/jsonw.h"
#include "roastop/metrics.h"
#include "roastop/run.h"

struct cJSON;

struct identity {
	char name[RUN_NAME_LEN]; /* the run's name: the collector's run_name */
	char processor[RUN_NAME_LEN]; /* the processor's class name, "" unknown */
	uint32_t n_datasets, n_files;
	/* of the dataset and file names, whatever their order */
	uint64_t datasets_hash, files_hash;
	double chunk_events; /* the largest chunk's events: the chunk size; 0 unknown */
	double t_start; /* the run's start, epoch seconds; NAN unknown */
};

/* SAME: same processor, datasets, files and chunk size. COMPARABLE: the
 * same processor (the same name when neither knows its processor), the
 * rest may differ. */
enum identity_match { IDENTITY_OTHER = 0, IDENTITY_COMPARABLE, IDENTITY_SAME };

void identity_of_run(const struct run *r, const struct metrics *m, struct identity *id);
/* The "identity" object, a member of the object w is in. */
void identity_write(struct jsonw *w, const struct identity *id);
/* From an "identity" object; false (id zeroed, t_start NAN) when obj is none. */
bool identity_read(const struct cJSON *obj, struct identity *id);
/* How b stands to a; differs: what differs ("files, chunk size"), "" when
 * SAME. */
enum identity_match identity_match(const struct identity *a, const struct identity *b,
				   char *differs, size_t size);
/* The 16 hex digits naming an identity's analysis (processor, datasets,
 * files, chunk size). */
void identity_key(const struct identity *id, char out[17]);

#endif
