/* The main view's two header lines: the sources and what they read, the
 * run shown, its state and where it is among the session's runs. */
#include "mainpriv.h"

#include <stdio.h>
#include <string.h>

#include "roastop/format.h"

static const struct source_info *source_named(const struct run *r, const char *name)
{
	for (size_t i = 0; i < r->n_sources && i < ROASTOP_ARRAY_LEN(r->sources); i++)
		if (strcmp(r->sources[i].name, name) == 0)
			return &r->sources[i];
	return NULL;
}

/* What the run's status events say of a source. */
static void source_state(struct line *l, const struct ui_frame *f, const char *name)
{
	const struct source_info *s = source_named(f->run, name);
	char buf[FMT_LEN], at[FMT_LEN], lost[3 * FMT_LEN];
	if (!s) {
		line_seg(l, TH_DIM, "waiting for the first poll");
		return;
	}
	switch (s->state) {
	case SRC_CONNECTED: line_seg(l, TH_OK, "connected"); break;
	case SRC_DEGRADED:
		line_seg(l, TH_WARNING, "degraded");
		line_pair(l, ": ", TH_WARNING, s->reason[0] ? s->reason : "no reason given");
		break;
	default:
		snprintf(lost, sizeof(lost), "lost since %s (%s)", format_clock(at, s->since),
			 format_duration(buf, optnum_of(f->now - s->since)));
		line_seg(l, TH_CRITICAL, lost);
		if (s->reason[0])
			line_pair(l, ": ", TH_CRITICAL, s->reason);
	}
}

static bool is_listener(const struct ui_source *src)
{
	return src->st->typed.role == SOURCE_LISTENER;
}

/* Listeners first: their counts are short and must never be clipped; the
 * scheduler's state comes last because a lost scheduler's reason is long. */
static void header_listener(struct line *l, const struct ui_source *src)
{
	char a[FMT_LEN], b[FMT_LEN], name[64];
	char full_s[FMT_LEN + 32];
	const struct source_typed *st = &src->st->typed;
	snprintf(name, sizeof(name), "%s ", src->name);
	line_pair(l, name, TH_VALUE, src->st->state);
	line_pair(l, " rx ", TH_VALUE, format_count(a, optnum_of((double)st->datagrams)));
	uint64_t lost = st->missing + st->kernel_drops;
	line_pair(l, " lost ", lost ? TH_CRITICAL : TH_VALUE, format_count(b, optnum_of((double)lost)));
	if (st->senders_relayed) { /* some send through the scheduler: how many each way */
		snprintf(full_s, sizeof(full_s), " senders udp %s dask %s",
			 format_count(a, optnum_of((double)st->senders_direct)),
			 format_count(b, optnum_of((double)st->senders_relayed)));
		line_seg(l, TH_VALUE, full_s);
	}
	uint64_t full = st->senders_full;
	if (full) { /* new senders go unheard: say so where the counts are */
		snprintf(full_s, sizeof(full_s), " senders full: %s rejected",
			 format_count(a, optnum_of((double)full)));
		line_seg(l, TH_WARNING, full_s);
	}
	line_sep(l);
}

/* Every listener of the frame, live or replayed (the recorded counts). */
static void header_listeners(struct line *l, const struct ui_frame *f)
{
	for (size_t i = 0; i < f->n_sources; i++)
		if (is_listener(&f->sources[i]))
			header_listener(l, &f->sources[i]);
}

/* Recorded events replayed: what the recording says of each source, the
 * end when reached, the recorded listeners' counts (as live had them), then
 * the file (the source's target), cut first when the line is short. */
static void header_recorded(struct line *l, const struct ui_frame *f, const struct ui_source *src)
{
	char label[sizeof(f->run->sources[0].name) + 1];
	for (size_t i = 0; i < f->run->n_sources && i < ROASTOP_ARRAY_LEN(f->run->sources); i++) {
		snprintf(label, sizeof(label), "%s ", f->run->sources[i].name);
		line_seg(l, TH_LABEL, label);
		source_state(l, f, f->run->sources[i].name);
		line_sep(l);
	}
	line_pair(l, "Dask ", TH_VALUE, f->run->dask_version[0] ? f->run->dask_version : "n/a");
	line_sep(l);
	if (strcmp(src->st->state, "ended") == 0)
		line_seg(l, TH_WARNING, "(end reached: q quits) ");
	header_listeners(l, f);
	snprintf(label, sizeof(label), "%s ", src->name);
	line_pair_path(l, label, TH_TEXT, src->target ? src->target : "");
}

/* A source that is no listener: its name, what it reads (wide) and the
 * state the run's status events give it. */
static void header_polled(struct line *l, const struct ui_frame *f, const struct ui_source *src,
			  bool wide)
{
	char label[72];
	snprintf(label, sizeof(label), "%s ", src->name);
	if (wide && src->target) {
		line_pair(l, label, TH_TEXT, src->target);
		line_seg(l, TH_TEXT, " ");
	} else {
		line_seg(l, TH_LABEL, label);
	}
	source_state(l, f, src->name);
}

/* Wide, the cluster's version before the polled sources' addresses and
 * states (a lost source's reason is long: last); narrower, their states
 * first and no address. */
static void header_line1(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	struct line l = { .ui = ui, .y = r.y + 1, .x = 1, .end = r.x + r.w };
	for (size_t i = 0; i < f->n_sources; i++) {
		if (f->sources[i].st->typed.role == SOURCE_RECORDING) {
			header_recorded(&l, f, &f->sources[i]);
			return;
		}
	}
	header_listeners(&l, f);
	const char *version = f->run->dask_version[0] ? f->run->dask_version : "n/a";
	bool wide = r.w >= 100;
	if (wide) {
		line_pair(&l, "Dask ", TH_VALUE, version);
		line_sep(&l);
	}
	for (size_t i = 0; i < f->n_sources; i++) {
		if (is_listener(&f->sources[i]))
			continue;
		header_polled(&l, f, &f->sources[i], wide);
		line_sep(&l);
	}
	if (!wide)
		line_pair(&l, "Dask ", TH_VALUE, version);
}

/* How the run ended, in the colour of its outcome; a failure with its
 * exception, which is what the user needs first. */
static void run_state(struct line *l, const struct run *run)
{
	if (!run->ended) {
		line_seg(l, TH_TEXT, run->started ? "running" : "waiting");
		return;
	}
	static const enum theme_elem attr[RUN_STATUS__COUNT] = {
		[RUN_RUNNING] = TH_TEXT,	[RUN_COMPLETED] = TH_OK, [RUN_FAILED] = TH_CRITICAL,
		[RUN_INCOMPLETE] = TH_WARNING, [RUN_STOPPED] = TH_WARNING,
	};
	enum theme_elem a = attr[run->status];
	char st[64];
	snprintf(st, sizeof(st), "run %s", run_status_name(run->status));
	line_seg(l, a, st);
	if (run->status == RUN_FAILED && run->status_reason[0])
		line_pair(l, ": ", a, run->status_reason);
}

/* "2 of 3 " when the session has had more than one run (view 8 lists them),
 * in the warning colour while it is not the newest. */
static enum theme_elem run_position(const struct ui_frame *f, char pos[48])
{
	const struct session *s = f->session;
	pos[0] = '\0';
	for (size_t i = 0; s && s->n_rows > 1 && i < s->n_rows; i++) {
		if (s->rows[i].run != f->run)
			continue;
		snprintf(pos, 48, "%zu of %zu ", i + 1, s->n_rows);
		return i + 1 < s->n_rows ? TH_WARNING : TH_LABEL;
	}
	return TH_LABEL;
}

/* "run 2 of 3 NAME (PROCESSOR)": the name whole, else cut only when it is
 * the line's first segment (nothing to give way to it). */
static void run_named(struct line *l, const struct ui_frame *f)
{
	const struct run *run = f->run;
	const char *name = run->name[0] ? run->name : (run->run_id[0] ? run->run_id : "(no run-start yet)");
	char pos[48], proc[RUN_NAME_LEN + 8];
	enum theme_elem pe = run_position(f, pos);
	snprintf(proc, sizeof(proc), run->processor[0] ? " (%s)" : "%s", run->processor);
	bool first = !l->started;
	if (line_room(l, (int)(4 + text_width(pos) + text_width(name)))) {
		line_put(l, TH_LABEL, "run ");
		if (pos[0])
			line_put(l, pe, pos);
		line_put(l, TH_VALUE, name);
		line_seg(l, TH_TEXT, proc);
	} else if (first) {
		l->full = false;
		line_put(l, TH_LABEL, "run ");
		line_put_cut(l, TH_VALUE, name);
	}
}

static void header_line2(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	const struct run *run = f->run;
	const struct metrics *m = f->m;
	struct line l = { .ui = ui, .y = r.y + 2, .x = 1, .end = r.x + r.w };
	char a[FMT_LEN];
	if (f->out_alert) { /* first, so that 80 columns show it whole */
		line_seg(&l, TH_CRITICAL, f->out_alert);
		line_sep(&l);
	}
	if (f->key_alert) { /* why nothing arrives, before the run it would name */
		line_seg(&l, TH_CRITICAL, f->key_alert);
		line_sep(&l);
	}
	if (f->quiet_alert[0]) { /* the shorter form when the whole does not fit */
		bool fits = (int)text_width(f->quiet_alert[0]) <= l.end - l.x;
		line_seg(&l, TH_CRITICAL, f->quiet_alert[fits ? 0 : 1]);
		line_sep(&l);
	}
	run_named(&l, f);
	line_sep(&l);
	line_pair(&l, "elapsed ", TH_VALUE, format_duration(a, m->elapsed_time_seconds));
	line_sep(&l);
	run_state(&l, run);
	if (f->out_dir && !f->out_alert) { /* the event log names it with the failure */
		line_sep(&l);
		line_pair_path(&l, "out ", TH_DIM, f->out_dir);
	}
}

/* The top line: the most severe finding (its title, cut at a space when
 * long; key f lists them all), or that there is none. */
static void header_finding(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	struct line l = { .ui = ui, .y = r.y, .x = 1, .end = r.x + r.w };
	const struct finding *top = diagnosis_top(f->findings);
	if (!top) {
		line_seg(&l, TH_DIM, f->findings ? "no finding" : "findings n/a");
		return;
	}
	char t[DIAG_TITLE_LEN + 48];
	size_t more = f->findings->n - 1;
	snprintf(t, sizeof(t), more ? "%s: %s (f: %zu more)" : "%s: %s (f)",
		 diagnosis_severity_name(top->severity), top->title, more);
	line_seg(&l, top->severity == SEV_CRITICAL ? TH_CRITICAL : TH_WARNING, t);
}

void main_header_draw(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	header_finding(ui, f, r);
	header_line1(ui, f, r);
	header_line2(ui, f, r);
}
