/* Shared by the files of the run model only (run.c, run_chunk.c,
 * run_sample.c, run_fine.c): the log and the bounded tables every apply
 * function uses, and each event kind's apply function, which run_apply()
 * (run.c) alone calls. Not a public header: nothing outside src/model
 * may change a run but through run_apply(). */
#ifndef ROASTOP_RUNPRIV_H
#define ROASTOP_RUNPRIV_H

#include "roastop/run.h"

void run_log(struct run *r, double t, enum log_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *run_key(struct run *r, double t, const char *name, size_t max, char *buf);
void run_overflow(struct run *r, double t, uint64_t *count, const char *what, size_t cap);

/* run_chunk.c */
void run_apply_chunk(struct run *r, double t, const struct ev_chunk *c, bool late);
void run_chunk_window_open(struct run *r);

/* run_sample.c */
void run_apply_sample(struct run *r, double t, const struct ev_sample *s);
void run_apply_sample_late(struct run *r, double t, const struct ev_sample *s);
void run_progress_restart(struct run *r);

/* run_fine.c */
void run_apply_fine(struct run *r, double t, const struct ev_fine *f);

#endif
