/* The ring of a run's latest failed chunks; see failed.h. */
#include "roastop/failed.h"

#include "roastop/strutil.h"

#include <string.h>

void failed_add(struct failed *f, double t, const struct ev_chunk *c)
{
	struct failed_chunk *e = &f->items[f->n++ % FAILED_KEPT];
	e->t = t;
	e->duration = c->duration;
	e->entry_start = c->entry_start;
	e->entry_stop = c->entry_stop;
	strutil_copy(e->error, sizeof(e->error), c->error);
	strutil_copy(e->worker, sizeof(e->worker), c->worker);
	strutil_copy(e->dataset, sizeof(e->dataset), c->dataset);
	strutil_copy_tail(e->file, sizeof(e->file), c->file);
	e->retried = false;
}

static bool failed_same(optnum a, optnum b)
{
	return a.valid == b.valid && (!a.valid || a.value == b.value);
}

void failed_mark_retried(struct failed *f, const struct ev_chunk *c)
{
	char file[FAILED_FILE_LEN];
	strutil_copy_tail(file, sizeof(file), c->file);
	for (size_t i = 0; i < FAILED_KEPT && i < f->n; i++) {
		struct failed_chunk *e = &f->items[i];
		if (failed_same(e->entry_start, c->entry_start) &&
		    failed_same(e->entry_stop, c->entry_stop) && strcmp(e->file, file) == 0)
			e->retried = true;
	}
}

const struct failed_chunk *failed_get(const struct failed *f, size_t i)
{
	if (i >= FAILED_KEPT || i >= f->n)
		return NULL;
	return &f->items[(f->n - 1 - i) % FAILED_KEPT];
}
