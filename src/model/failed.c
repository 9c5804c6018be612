/* The ring of a run's latest failed chunks; see failed.h. */
#include "roastop/failed.h"

#include "roastop/strutil.h"

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
}

const struct failed_chunk *failed_get(const struct failed *f, size_t i)
{
	if (i >= FAILED_KEPT || i >= f->n)
		return NULL;
	return &f->items[(f->n - 1 - i) % FAILED_KEPT];
}
