/* Each run's last comparable run (previous.h), looked for in a thread of
 * its own once the run has started, so that its start never waits on the
 * disk: the tick starts the look and collects what it found; the run's
 * close waits for it. The output root's runs before the session are read
 * once, the same way, when view 8 is first shown (no session that never
 * shows it pays for them). Not when events are replayed: a replay
 * reproduces what its session saw, and the output root's runs were not
 * part of it. */
#include "apppriv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roastop/history.h"

struct app_previous {
	char run_id[64];
	bool started, joined, found;
	atomic_bool done;
	pthread_t thread;
	const char *root;
	struct identity now;
	struct past_run run;
	struct past_file files[PAST_FILES];
};

struct app_past {
	pthread_t thread;
	bool started, joined;
	atomic_bool done;
	const char *root;
	struct history h;
};

static void *app_past_read(void *arg)
{
	struct app_past *p = arg;
	char err[160];
	if (history_scan(p->root, getuid(), &p->h, err, sizeof(err)) != 0)
		history_free(&p->h); /* no root yet: no past session */
	atomic_store(&p->done, true);
	return NULL;
}

static void app_past_begin(struct app *a)
{
	if (a->past || a->recorded || !a->out_dir[0] || !ui_showing(a->ui, UI_VIEW_RUNS) ||
	    !(a->past = calloc(1, sizeof(*a->past))))
		return;
	a->past->root = a->out_dir;
	a->past->started = pthread_create(&a->past->thread, NULL, app_past_read, a->past) == 0;
}

/* Leaves out of h the runs this session wrote before the scan (its rows
 * list them already). */
static void app_past_drop_own(const struct app *a, struct history *h)
{
	size_t k = 0;
	for (size_t i = 0; i < h->n; i++) {
		bool own = false;
		for (size_t j = 0; j < a->ses.n_rows && !own; j++)
			own = strcmp(a->ses.rows[j].dir, h->runs[i].dir) == 0;
		if (!own)
			h->runs[k++] = h->runs[i];
	}
	h->n = k;
}

const struct history *app_past_of(struct app *a)
{
	app_past_begin(a);
	struct app_past *p = a->past;
	if (!p || !p->started || !atomic_load(&p->done))
		return NULL;
	if (!p->joined) {
		pthread_join(p->thread, NULL);
		p->joined = true;
		app_past_drop_own(a, &p->h);
	}
	return &p->h;
}

static void app_past_free(struct app *a)
{
	struct app_past *p = a->past;
	if (p && p->started && !p->joined)
		pthread_join(p->thread, NULL);
	if (p)
		history_free(&p->h);
	free(p);
	a->past = NULL;
}

static void *app_previous_look(void *arg)
{
	struct app_previous *p = arg;
	p->found = history_find_previous(p->root, getuid(), &p->now, &p->run, p->files);
	atomic_store(&p->done, true);
	return NULL;
}

static struct app_previous *app_previous_slot(const struct app *a, const struct run *r)
{
	for (size_t i = 0; i < APP_PREVIOUS_MAX; i++)
		if (a->previous[i].started && strcmp(a->previous[i].run_id, r->run_id) == 0)
			return &a->previous[i];
	return NULL;
}

static void app_previous_join(struct app_previous *p)
{
	if (p->started && !p->joined) {
		pthread_join(p->thread, NULL);
		p->joined = true;
	}
}

/* A slot never used, else the oldest whose look has ended. */
static struct app_previous *app_previous_free_slot(struct app *a)
{
	for (size_t i = 0; i < APP_PREVIOUS_MAX; i++) {
		struct app_previous *p = &a->previous[(a->previous_next + i) % APP_PREVIOUS_MAX];
		if (!p->started || atomic_load(&p->done)) {
			a->previous_next = (a->previous_next + i + 1) % APP_PREVIOUS_MAX;
			app_previous_join(p);
			return p;
		}
	}
	return NULL;
}

static void app_previous_begin(struct app *a, const struct run *r)
{
	struct app_previous *p = app_previous_free_slot(a);
	if (!p)
		return; /* every slot busy: this run goes without */
	memset(p, 0, sizeof(*p));
	snprintf(p->run_id, sizeof(p->run_id), "%s", r->run_id);
	snprintf(p->now.processor, sizeof(p->now.processor), "%s", r->processor);
	snprintf(p->now.name, sizeof(p->now.name), "%s", r->name);
	p->now.t_start = r->t_run_start;
	p->root = a->out_dir;
	p->started = pthread_create(&p->thread, NULL, app_previous_look, p) == 0;
}

void app_previous_tick(struct app *a)
{
	if (a->recorded || a->finishing)
		return;
	if (!a->previous && !(a->previous = calloc(APP_PREVIOUS_MAX, sizeof(*a->previous))))
		return;
	size_t from = a->ses.n_rows > APP_PREVIOUS_MAX ? a->ses.n_rows - APP_PREVIOUS_MAX : 0;
	for (size_t i = from; i < a->ses.n_rows; i++) { /* the newest runs: cheap at each wake */
		const struct run *r = a->ses.rows[i].run;
		if (r && r->started && !a->ses.rows[i].closed && (r->processor[0] || r->name[0]) &&
		    !app_previous_slot(a, r))
			app_previous_begin(a, r);
	}
}

const struct past_run *app_previous_of(const struct app *a, const struct run *r, bool wait)
{
	struct app_previous *p = r && a->previous ? app_previous_slot(a, r) : NULL;
	if (!p || (!wait && !atomic_load(&p->done)))
		return NULL;
	app_previous_join(p);
	return p->found ? &p->run : NULL;
}

void app_previous_free(struct app *a)
{
	for (size_t i = 0; a->previous && i < APP_PREVIOUS_MAX; i++)
		app_previous_join(&a->previous[i]);
	free(a->previous);
	a->previous = NULL;
	app_past_free(a);
}
