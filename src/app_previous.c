/* The runs before (app_previous.h); a run's close waits for its look. */
#include "roastop/app_previous.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct app_thread {
	pthread_t thread;
	bool started, joined;
	atomic_bool done;
};

struct app_look {
	struct app_thread t;
	char run_id[64];
	bool found;
	const char *root;
	struct identity now;
	struct past_run run;
	struct past_file files[PAST_FILES];
};

struct app_past {
	struct app_thread t;
	const char *root;
	struct history h;
};

static void app_thread_join(struct app_thread *t)
{
	if (t->started && !t->joined) {
		pthread_join(t->thread, NULL);
		t->joined = true;
	}
}

static void *app_past_read(void *arg)
{
	struct app_past *p = arg;
	char err[160];
	if (history_scan(p->root, getuid(), &p->h, err, sizeof(err)) != 0)
		history_free(&p->h); /* no root yet: no past session */
	atomic_store(&p->t.done, true);
	return NULL;
}

/* Leaves out of h the runs this session wrote before the scan (its rows
 * list them already). */
static void app_past_drop_own(const struct session *ses, struct history *h)
{
	size_t k = 0;
	for (size_t i = 0; i < h->n; i++) {
		bool own = false;
		for (size_t j = 0; j < ses->n_rows && !own; j++)
			own = strcmp(ses->rows[j].dir, h->runs[i].dir) == 0;
		if (!own)
			h->runs[k++] = h->runs[i];
	}
	h->n = k;
}

const struct history *app_previous_past(struct app_previous *p, const struct session *ses,
					bool want)
{
	if (!p->past && want && p->root[0] && (p->past = calloc(1, sizeof(*p->past)))) {
		struct app_thread *t = &p->past->t;
		p->past->root = p->root;
		t->started = pthread_create(&t->thread, NULL, app_past_read, p->past) == 0;
	}
	struct app_past *past = p->past;
	if (!past || !past->t.started || !atomic_load(&past->t.done))
		return NULL;
	if (!past->t.joined) {
		app_thread_join(&past->t);
		app_past_drop_own(ses, &past->h);
	}
	return &past->h;
}

static void *app_look_run(void *arg)
{
	struct app_look *l = arg;
	l->found = history_find_previous(l->root, getuid(), &l->now, &l->run, l->files);
	atomic_store(&l->t.done, true);
	return NULL;
}

static struct app_look *app_look_of(const struct app_previous *p, const struct run *r)
{
	for (size_t i = 0; i < APP_PREVIOUS_MAX; i++)
		if (p->looks[i].t.started && strcmp(p->looks[i].run_id, r->run_id) == 0)
			return &p->looks[i];
	return NULL;
}

/* A slot never used, else the oldest whose look has ended. */
static struct app_look *app_look_free_slot(struct app_previous *p)
{
	for (size_t i = 0; i < APP_PREVIOUS_MAX; i++) {
		struct app_look *l = &p->looks[(p->next + i) % APP_PREVIOUS_MAX];
		if (!l->t.started || atomic_load(&l->t.done)) {
			p->next = (p->next + i + 1) % APP_PREVIOUS_MAX;
			app_thread_join(&l->t);
			return l;
		}
	}
	return NULL;
}

static void app_look_begin(struct app_previous *p, const struct run *r)
{
	struct app_look *l = app_look_free_slot(p);
	if (!l)
		return; /* every slot busy: this run goes without */
	memset(l, 0, sizeof(*l));
	snprintf(l->run_id, sizeof(l->run_id), "%s", r->run_id);
	snprintf(l->now.processor, sizeof(l->now.processor), "%s", r->processor);
	snprintf(l->now.name, sizeof(l->now.name), "%s", r->name);
	l->now.t_start = r->t_run_start;
	l->root = p->root;
	l->t.started = pthread_create(&l->t.thread, NULL, app_look_run, l) == 0;
}

void app_previous_tick(struct app_previous *p, const struct session *ses)
{
	if (!p->looks && !(p->looks = calloc(APP_PREVIOUS_MAX, sizeof(*p->looks))))
		return;
	size_t from = ses->n_rows > APP_PREVIOUS_MAX ? ses->n_rows - APP_PREVIOUS_MAX : 0;
	for (size_t i = from; i < ses->n_rows; i++) {
		const struct run *r = ses->rows[i].run;
		if (r && r->started && !ses->rows[i].closed && (r->processor[0] || r->name[0]) &&
		    !app_look_of(p, r))
			app_look_begin(p, r);
	}
}

const struct past_run *app_previous_of(const struct app_previous *p, const struct run *r,
				       bool wait)
{
	struct app_look *l = r && p->looks ? app_look_of(p, r) : NULL;
	if (!l || (!wait && !atomic_load(&l->t.done)))
		return NULL;
	app_thread_join(&l->t);
	return l->found ? &l->run : NULL;
}

void app_previous_free(struct app_previous *p)
{
	for (size_t i = 0; p->looks && i < APP_PREVIOUS_MAX; i++)
		app_thread_join(&p->looks[i].t);
	free(p->looks);
	if (p->past) {
		app_thread_join(&p->past->t);
		history_free(&p->past->h);
	}
	free(p->past);
}
