/* The main view: header, progress, four timelines, the chunk-runtime
 * histogram and the fine-metrics breakdown. Every number shown comes from
 * struct metrics (or is a count the run keeps) and goes through format.h. */
#include "../uipriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"
#include "roastop/graph.h"
#include "roastop/hist.h"

#define SCALE_W 8 /* the left scale labels of a timeline, with a space */

/* A running line of segments placed left to right, each whole or not at
 * all: after one that does not fit nothing more is drawn, so a line never
 * ends mid-word and what goes first is what comes last (each line is built
 * in its order of priority; README, "The dashboard"). Only a line's first
 * segment, an alert, may be cut: at a space, with an ellipsis. */
struct line {
	struct ui *ui;
	int y, x, end;
	bool sep_due; /* a separator before the next segment drawn */
	bool full, started;
};

static const char *dot(const struct ui *ui)
{
	return ui->ascii ? " | " : " \xc2\xb7 ";
}

/* Room for w more columns (and the separator due)? Closes the line if not. */
static bool room(struct line *l, int w)
{
	if (!l->full && l->x + (l->sep_due ? 3 : 0) + w <= l->end)
		return true;
	l->full = true;
	return false;
}

static void put(struct line *l, enum theme_elem e, const char *s)
{
	if (l->sep_due)
		l->x += scr_text(l->ui, l->y, l->x, l->end - l->x, TH_DIM, dot(l->ui));
	l->sep_due = false;
	l->started = true;
	l->x += scr_text(l->ui, l->y, l->x, l->end - l->x, e, s);
}

/* The first segment, wider than the line: up to its last space that fits. */
static void put_cut(struct line *l, enum theme_elem e, const char *s)
{
	char buf[1024];
	int w = l->end - l->x - 1, k = 0, cut = 0;
	size_t i = 0;
	for (; s[i] && k < w && i + 1 < sizeof(buf); i++) {
		k += ((unsigned char)s[i] & 0xC0) != 0x80;
		if (s[i] == ' ')
			cut = (int)i;
	}
	snprintf(buf, sizeof(buf), "%.*s%s", cut ? cut : (int)i, s, l->ui->ascii ? "~" : "\xe2\x80\xa6");
	put(l, e, buf);
	l->full = true;
}

static void seg(struct line *l, enum theme_elem e, const char *s)
{
	if (!s[0] || l->full)
		return;
	if (room(l, (int)text_width(s)))
		put(l, e, s);
	else if (!l->started)
		put_cut(l, e, s);
}

/* A label and its value, together or not at all. */
static void pair(struct line *l, const char *label, enum theme_elem e, const char *value)
{
	if (!room(l, (int)(text_width(label) + text_width(value))))
		return;
	put(l, TH_LABEL, label);
	put(l, e, value);
}

/* A path: whole, else its last component ("…/demo-measurements"), else not. */
static void pair_path(struct line *l, const char *label, enum theme_elem e, const char *path)
{
	char last[FMT_LEN * 4];
	const char *slash = strrchr(path, '/');
	if (l->full)
		return;
	if (!slash || !slash[1] || room(l, (int)(text_width(label) + text_width(path)))) {
		pair(l, label, e, path);
		return;
	}
	l->full = false;
	snprintf(last, sizeof(last), "%s%s", l->ui->ascii ? "~" : "\xe2\x80\xa6", slash);
	pair(l, label, e, last);
}

static void sep(struct line *l)
{
	l->sep_due = l->started;
}

static double pct100(optnum v)
{
	return v.valid ? v.value * 100 : NAN;
}

/* ---- header ---- */

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
		seg(l, TH_DIM, "waiting for the first poll");
		return;
	}
	switch (s->state) {
	case SRC_CONNECTED: seg(l, TH_OK, "connected"); break;
	case SRC_DEGRADED:
		seg(l, TH_WARNING, "degraded");
		pair(l, ": ", TH_WARNING, s->reason[0] ? s->reason : "no reason given");
		break;
	default:
		snprintf(lost, sizeof(lost), "lost since %s (%s)", format_clock(at, s->since),
			 format_duration(buf, optnum_of(f->now - s->since)));
		seg(l, TH_CRITICAL, lost);
		if (s->reason[0])
			pair(l, ": ", TH_CRITICAL, s->reason);
	}
}

static uint64_t counter_of(const struct source_stats *st, const char *group, const char *name)
{
	for (size_t i = 0; i < st->n_counters; i++) {
		const struct source_counter *c = &st->counters[i];
		if ((c->group == group || (c->group && group && strcmp(c->group, group) == 0)) &&
		    strcmp(c->name, name) == 0)
			return c->value;
	}
	return 0;
}

static bool state_is(const struct ui_source *src, const char *key)
{
	return src->st->state_key && strcmp(src->st->state_key, key) == 0;
}

static bool is_listener(const struct ui_source *src)
{
	return state_is(src, "listen");
}

/* Listeners first: their counts are short and must never be clipped; the
 * scheduler's state comes last because a lost scheduler's reason is long. */
static void header_listener(struct line *l, const struct ui_source *src)
{
	char a[FMT_LEN], b[FMT_LEN], name[64];
	char full_s[FMT_LEN + 32];
	const struct source_stats *st = src->st;
	snprintf(name, sizeof(name), "%s ", src->name);
	pair(l, name, TH_VALUE, st->state);
	pair(l, " rx ", TH_VALUE, format_count(a, optnum_of((double)counter_of(st, NULL, "datagrams"))));
	uint64_t lost = counter_of(st, NULL, "missing") + counter_of(st, NULL, "kernel_drops");
	pair(l, " lost ", lost ? TH_CRITICAL : TH_VALUE, format_count(b, optnum_of((double)lost)));
	uint64_t full = counter_of(st, "rejected", "senders_full");
	if (full) { /* new senders go unheard: say so where the counts are */
		snprintf(full_s, sizeof(full_s), " senders full: %s rejected",
			 format_count(a, optnum_of((double)full)));
		seg(l, TH_WARNING, full_s);
	}
	sep(l);
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
		seg(l, TH_LABEL, label);
		source_state(l, f, f->run->sources[i].name);
		sep(l);
	}
	pair(l, "Dask ", TH_VALUE, f->run->dask_version[0] ? f->run->dask_version : "n/a");
	sep(l);
	if (strcmp(src->st->state, "ended") == 0)
		seg(l, TH_WARNING, "(end reached: q quits) ");
	header_listeners(l, f);
	snprintf(label, sizeof(label), "%s ", src->name);
	pair_path(l, label, TH_TEXT, src->target ? src->target : "");
}

/* A source that is no listener: its name, what it reads (wide) and the
 * state the run's status events give it. */
static void header_polled(struct line *l, const struct ui_frame *f, const struct ui_source *src,
			  bool wide)
{
	char label[72];
	snprintf(label, sizeof(label), "%s ", src->name);
	if (wide && src->target) {
		pair(l, label, TH_TEXT, src->target);
		seg(l, TH_TEXT, " ");
	} else {
		seg(l, TH_LABEL, label);
	}
	source_state(l, f, src->name);
}

/* Wide, the cluster's version before the polled sources' addresses and
 * states (a lost source's reason is long: last); narrower, their states
 * first and no address. */
static void header_line1(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	struct line l = { .ui = ui, .y = r.y, .x = 1, .end = r.x + r.w };
	for (size_t i = 0; i < f->n_sources; i++) {
		if (state_is(&f->sources[i], "recording")) {
			header_recorded(&l, f, &f->sources[i]);
			return;
		}
	}
	header_listeners(&l, f);
	const char *version = f->run->dask_version[0] ? f->run->dask_version : "n/a";
	bool wide = r.w >= 100;
	if (wide) {
		pair(&l, "Dask ", TH_VALUE, version);
		sep(&l);
	}
	for (size_t i = 0; i < f->n_sources; i++) {
		if (is_listener(&f->sources[i]))
			continue;
		header_polled(&l, f, &f->sources[i], wide);
		sep(&l);
	}
	if (!wide)
		pair(&l, "Dask ", TH_VALUE, version);
}

/* How the run ended, in the colour of its outcome; a failure with its
 * exception, which is what the user needs first. */
static void run_state(struct line *l, const struct run *run)
{
	if (!run->ended) {
		seg(l, TH_TEXT, run->started ? "running" : "waiting");
		return;
	}
	static const enum theme_elem attr[RUN_STATUS__COUNT] = {
		[RUN_RUNNING] = TH_TEXT,	[RUN_COMPLETED] = TH_OK, [RUN_FAILED] = TH_CRITICAL,
		[RUN_INCOMPLETE] = TH_WARNING, [RUN_STOPPED] = TH_WARNING,
	};
	enum theme_elem a = attr[run->status];
	char st[64];
	snprintf(st, sizeof(st), "run %s", run_status_name(run->status));
	seg(l, a, st);
	if (run->status == RUN_FAILED && run->status_reason[0])
		pair(l, ": ", a, run->status_reason);
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
	if (room(l, (int)(4 + text_width(pos) + text_width(name)))) {
		put(l, TH_LABEL, "run ");
		if (pos[0])
			put(l, pe, pos);
		put(l, TH_VALUE, name);
		seg(l, TH_TEXT, proc);
	} else if (first) {
		l->full = false;
		put(l, TH_LABEL, "run ");
		put_cut(l, TH_VALUE, name);
	}
}

static void header_line2(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	const struct run *run = f->run;
	const struct metrics *m = f->m;
	struct line l = { .ui = ui, .y = r.y + 1, .x = 1, .end = r.x + r.w };
	char a[FMT_LEN];
	if (f->out_alert) { /* first, so that 80 columns show it whole */
		seg(&l, TH_CRITICAL, f->out_alert);
		sep(&l);
	}
	if (f->key_alert) { /* why nothing arrives, before the run it would name */
		seg(&l, TH_CRITICAL, f->key_alert);
		sep(&l);
	}
	if (f->quiet_alert[0]) { /* the shorter form when the whole does not fit */
		bool fits = (int)text_width(f->quiet_alert[0]) <= l.end - l.x;
		seg(&l, TH_CRITICAL, f->quiet_alert[fits ? 0 : 1]);
		sep(&l);
	}
	run_named(&l, f);
	sep(&l);
	pair(&l, "elapsed ", TH_VALUE, format_duration(a, m->elapsed_time_seconds));
	sep(&l);
	run_state(&l, run);
	if (f->out_dir && !f->out_alert) { /* the event log names it with the failure */
		sep(&l);
		pair_path(&l, "out ", TH_DIM, f->out_dir);
	}
}

/* ---- progress ---- */

static void progress_bar(struct ui *ui, int y, int x, int w, double frac)
{
	if (w < 3)
		return;
	uint32_t cells[512];
	int inner = w - 2 > 512 ? 512 : w - 2;
	graph_hbar(frac, inner, ui->ascii, cells);
	scr_text(ui, y, x, 1, TH_BORDER, "[");
	scr_cells(ui, y, x + 1, cells, inner, ui->attr[TH_BAR_CPU]);
	scr_text(ui, y, x + 1 + inner, 1, TH_BORDER, "]");
}

/* The progress line is made of parts, each shown whole or not at all: at a
 * narrow width the least important go first (highest drop rank), so no
 * word is cut. The bar takes what the kept parts leave. */
#define PART_SEGS 6
#define PROGRESS_PARTS 8
#define BAR_MIN 12 /* "[" 10 cells "]": narrower says nothing */

struct part {
	int drop; /* 0: always kept; higher goes sooner */
	bool bar;
	size_t n;
	enum theme_elem e[PART_SEGS];
	const char *s[PART_SEGS];
};

struct parts {
	struct part p[PROGRESS_PARTS];
	size_t n;
	char buf[PROGRESS_PARTS * 2][FMT_LEN]; /* the formatted numbers */
	size_t nbuf;
};

static struct part *part_new(struct parts *ps, int drop)
{
	struct part *p = &ps->p[ps->n++];
	*p = (struct part){ .drop = drop };
	return p;
}

static void part_seg(struct part *p, enum theme_elem e, const char *s)
{
	p->e[p->n] = e;
	p->s[p->n++] = s;
}

static char *part_buf(struct parts *ps)
{
	return ps->buf[ps->nbuf++];
}

static int part_width(const struct part *p)
{
	size_t w = p->bar ? BAR_MIN : 0;
	for (size_t i = 0; i < p->n; i++)
		w += text_width(p->s[i]);
	return (int)w;
}

/* Drops the highest-ranked parts until the rest fit in w; returns what
 * the kept parts leave (for the bar). */
static int parts_fit(struct parts *ps, bool keep[], int w)
{
	int used = 0, last = 0;
	for (size_t i = 0; i < ps->n; i++) {
		keep[i] = true;
		used += part_width(&ps->p[i]);
		last = ps->p[i].drop > last ? ps->p[i].drop : last;
	}
	for (int rank = last; rank > 0 && used > w; rank--)
		for (size_t i = 0; i < ps->n; i++)
			if (keep[i] && ps->p[i].drop == rank) {
				keep[i] = false;
				used -= part_width(&ps->p[i]);
			}
	return w - used;
}

static void parts_draw(struct parts *ps, struct line *l, double frac)
{
	bool keep[PROGRESS_PARTS];
	int spare = parts_fit(ps, keep, l->end - l->x);
	for (size_t i = 0; i < ps->n; i++) {
		const struct part *p = &ps->p[i];
		if (!keep[i])
			continue;
		if (p->bar) {
			int w = BAR_MIN + (spare > 40 ? 40 + (spare - 40) / 2 : spare);
			progress_bar(l->ui, l->y, l->x, w, frac);
			l->x += w;
		}
		for (size_t k = 0; k < p->n; k++)
			seg(l, p->e[k], p->s[k]);
	}
}

/* "chunks 12 done, 0 failed", the failures in the alert colour */
static void part_chunks(struct parts *ps, const struct ui *ui, const struct metrics *m,
			int drop, bool first)
{
	bool failed = m->num_failed_chunks.valid && m->num_failed_chunks.value > 0;
	struct part *p = part_new(ps, failed && drop > 2 ? 2 : drop); /* failures outrank the bar */
	if (!first)
		part_seg(p, TH_DIM, dot(ui));
	part_seg(p, TH_LABEL, "chunks ");
	part_seg(p, TH_VALUE, format_count(part_buf(ps), m->num_chunks));
	part_seg(p, TH_TEXT, " done, ");
	part_seg(p, failed ? TH_CRITICAL : TH_VALUE, format_count(part_buf(ps), m->num_failed_chunks));
	part_seg(p, TH_TEXT, " failed");
}

static void part_labelled(struct parts *ps, const struct ui *ui, int drop, const char *label,
			  const char *value)
{
	struct part *p = part_new(ps, drop);
	part_seg(p, TH_DIM, dot(ui));
	part_seg(p, TH_LABEL, label);
	part_seg(p, TH_VALUE, value);
}

/* "ETA 4m 12s", "ETA n/a" when not known; an ended run shows how it ended */
static void part_eta(struct parts *ps, const struct ui_frame *f, const char *lead)
{
	struct part *p = part_new(ps, 0);
	part_seg(p, TH_TEXT, lead);
	if (f->run->ended) {
		part_seg(p, TH_VALUE, run_status_name(f->run->status));
		return;
	}
	part_seg(p, TH_LABEL, "ETA ");
	part_seg(p, TH_VALUE, format_duration(part_buf(ps), f->m->eta_seconds));
}

/* "events 1,234 of 20,000 [bar] 6.2%  ETA 4m 12s", or the same of the run's
 * tasks "(from tasks)" (docs/metrics.md, "Progress and ETA") */
static void progress_known(struct parts *ps, const struct ui *ui, const struct ui_frame *f)
{
	const struct metrics *m = f->m;
	bool tasks = m->progress_source == PROGRESS_TASKS;
	struct part *p = part_new(ps, 0);
	part_seg(p, TH_LABEL, tasks ? "tasks " : "events ");
	part_seg(p, TH_VALUE, format_count(part_buf(ps), m->progress_done));
	part_seg(p, TH_TEXT, " of ");
	part_seg(p, TH_VALUE, format_count(part_buf(ps), m->progress_total));
	part_seg(p, TH_TEXT, " ");
	part_new(ps, 3)->bar = true;
	p = part_new(ps, 0);
	part_seg(p, TH_TEXT, " ");
	part_seg(p, TH_VALUE, format_num(part_buf(ps), optnum_of(pct100(m->progress_fraction)),
					 tasks ? "%.0f%%" : "%.1f%%"));
	part_eta(ps, f, "  ");
	if (tasks)
		part_seg(part_new(ps, 1), TH_DIM, " (from tasks)");
	part_chunks(ps, ui, m, 4, false);
	if (tasks) {
		part_labelled(ps, ui, 5, "events ", format_count(part_buf(ps), m->total_events));
		part_labelled(ps, ui, 6, "executing ",
			      format_num(part_buf(ps), m->tasks_executing_now, "%.0f"));
	}
}

/* Neither an expected total nor task progress: what has finished. */
static void progress_unknown(struct parts *ps, const struct ui *ui, const struct ui_frame *f)
{
	const struct metrics *m = f->m;
	part_chunks(ps, ui, m, 0, true);
	part_labelled(ps, ui, 2, "events ", format_count(part_buf(ps), m->total_events));
	part_labelled(ps, ui, 4, "tasks executing ",
		      format_num(part_buf(ps), m->tasks_executing_now, "%.0f"));
	part_eta(ps, f, dot(ui));
	part_seg(part_new(ps, 3), TH_DIM, " (no expected total, no task progress)");
}

static void progress_line1(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	struct line l = { .ui = ui, .y = r.y, .x = 1, .end = r.x + r.w };
	struct parts ps = { .n = 0 };
	if (f->m->progress_source == PROGRESS_NONE)
		progress_unknown(&ps, ui, f);
	else
		progress_known(&ps, ui, f);
	optnum frac = f->m->progress_fraction;
	parts_draw(&ps, &l, frac.valid ? fmin(frac.value, 1) : 0);
}

static void progress_line2(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	const struct metrics *m = f->m;
	struct line l = { .ui = ui, .y = r.y + 1, .x = 1, .end = r.x + r.w };
	char a[FMT_LEN];
	bool wide = r.w >= 110;
	if (wide)
		seg(&l, TH_LABEL, "event rate ");
	seg(&l, TH_VALUE, m->event_rate_elapsed_khz.valid
				  ? format_rate(a, m->event_rate_elapsed_khz, 1e3, "Hz") : "n/a kHz");
	sep(&l);
	seg(&l, TH_VALUE, m->data_rate_gbps.valid ? format_rate(a, m->data_rate_gbps, 1e9, "bps")
						: "n/a Gbps");
	if (m->data_rate_mb_per_s.valid) {
		seg(&l, TH_TEXT, " (");
		seg(&l, TH_VALUE, format_rate(a, m->data_rate_mb_per_s, 1e6, "B/s"));
		seg(&l, TH_TEXT, ")");
	}
	sep(&l);
	seg(&l, TH_VALUE, m->event_rate_core_khz.valid
				  ? format_rate(a, m->event_rate_core_khz, 1e3, "Hz/core")
				  : "n/a kHz/core");
	sep(&l);
	seg(&l, TH_LABEL, wide ? "core efficiency " : "eff ");
	seg(&l, TH_VALUE, format_num(a, optnum_of(pct100(m->core_efficiency)), "%.1f %%"));
	if (r.w < 90)
		return; /* the spec's rates first; chunks/s where there is room */
	sep(&l);
	seg(&l, TH_VALUE, format_si(a, m->chunks_per_second, NULL));
	seg(&l, TH_LABEL, " chunks/s");
}

/* The oldest chunk in flight, "(w3, nano_7.root 0-100000)": its worker
 * is left out, then its file, where they do not fit in room. */
static const char *inflight_where(char *buf, size_t size, const struct inflight_chunk *c,
				  int room)
{
	char range[64] = "";
	if (c->entry_start.valid && c->entry_stop.valid)
		snprintf(range, sizeof(range), " %.0f-%.0f", c->entry_start.value, c->entry_stop.value);
	const char *slash = strrchr(c->file, '/');
	const char *file = slash ? slash + 1 : c->file;
	int n = snprintf(buf, size, " (%s%s%s%s)", c->worker, c->worker[0] ? ", " : "", file,
			 range);
	if (!c->worker[0] || n < 0 || (size_t)n >= size || (int)text_width(buf) > room)
		n = snprintf(buf, size, " (%s%s)", file, range);
	if (!file[0] || n < 0 || (size_t)n >= size || (int)text_width(buf) > room)
		buf[0] = '\0';
	return buf;
}

static void part_count_alert(struct parts *ps, const struct ui *ui, int drop, optnum n,
			     const char *one, const char *many)
{
	if (!n.valid || n.value <= 0)
		return;
	struct part *p = part_new(ps, drop);
	part_seg(p, TH_DIM, dot(ui));
	part_seg(p, TH_CRITICAL, format_count(part_buf(ps), n));
	part_seg(p, TH_CRITICAL, n.value == 1 ? one : many);
}

/* "running 12 · oldest 45.2s (w3, nano_7.root 0-100000) · 1 straggler ·
 * 1 lost" (docs/metrics.md, "Chunks in flight"); the oldest's age in the
 * alert colour when it is a straggler. */
static void progress_line3(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	const struct metrics *m = f->m;
	struct line l = { .ui = ui, .y = r.y + 2, .x = 1, .end = r.x + r.w };
	struct parts ps = { .n = 0 };
	struct part *p = part_new(&ps, 0);
	part_seg(p, TH_LABEL, "running ");
	part_seg(p, TH_VALUE, format_count(part_buf(&ps), m->inflight_running));
	if (!m->inflight_running.valid) { /* chunks without starts: an emitter without them */
		part_seg(part_new(&ps, 1), TH_DIM, f->run->n_chunks ? " (the emitter sends no chunk starts)"
								    : " (no chunk-start datagram yet)");
		parts_draw(&ps, &l, 0);
		return;
	}
	char where[INFLIGHT_FILE_LEN + INFLIGHT_NAME_LEN + 72];
	const struct inflight_chunk *oldest = NULL;
	inflight_oldest(&f->run->inflight, &oldest, 1);
	if (oldest) {
		p = part_new(&ps, 0);
		part_seg(p, TH_DIM, dot(ui));
		part_seg(p, TH_LABEL, "oldest ");
		part_seg(p, metrics_straggler(m, oldest) ? TH_CRITICAL : TH_VALUE,
			 format_duration(part_buf(&ps), optnum_of(metrics_inflight_age(m, oldest))));
	}
	part_count_alert(&ps, ui, 1, m->inflight_stragglers, " straggler", " stragglers");
	part_count_alert(&ps, ui, 2, m->inflight_lost, " lost", " lost");
	if (oldest) { /* where it runs: in the room the rest leaves */
		int used = 0;
		for (size_t i = 0; i < ps.n; i++)
			used += part_width(&ps.p[i]);
		part_seg(p, TH_TEXT, inflight_where(where, sizeof(where), oldest, l.end - l.x - used));
	}
	parts_draw(&ps, &l, 0);
}

/* ---- timelines ---- */

struct tl_spec {
	const char *name;
	const struct timeline *tl;
	double vmax; /* scale maximum */
	const char *unit; /* for the scale: format_axis unit */
	double mark; /* a dashed line at this value (NaN = none) */
	double peak; /* labelled on the scale at its height (NaN = none) */
	const struct timeline *line; /* drawn as a line over the area, or NULL */
	char over[FMT_LEN + 16]; /* said at the graph's top left: what is above the scale */
	char title[256];
	char brief[256]; /* the title when the panel is narrow */
};

/* A nice maximum in the IEC unit the title prints bytes in, so that axis
 * and title agree ("1000 MiB" would not fit the scale: 1 GiB instead); the
 * steps finer than graph_nice_max's keep the axis within 1.25 x the value. */
static double nice_memory(double v)
{
	static const double steps[] = { 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 };
	double u = format_bytes_step(v, NULL), x = v / u, p = pow(10, floor(log10(x)));
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(steps); i++)
		if (steps[i] * p >= x * (1 - 1e-12))
			return steps[i] * p > 1000 ? 1024 * u : steps[i] * p * u;
	return 10 * p * u;
}

static void scale_label(char *buf, double v, const char *unit)
{
	char t[FMT_LEN];
	format_axis(t, v, unit);
	size_t len = strlen(t), w = SCALE_W - 1;
	if (len > w)
		len = w;
	memset(buf, ' ', w - len);
	memcpy(buf + w - len, t, len);
	buf[w] = '\0';
}

/* The marker: a dashed line through the empty cells at value v. */
static void mark_line(struct ui *ui, uint32_t *cells, int w, int h, double v, double vmax)
{
	if (!(v > 0) || !(v <= vmax))
		return;
	int row = h - 1 - (int)floor(v / vmax * h - 1e-9);
	if (row < 0)
		row = 0;
	for (int x = 0; x < w; x += 2)
		if (cells[row * w + x] == ' ')
			cells[row * w + x] = ui->ascii ? '-' : 0x2504;
}

/* Run time at the graph's left end, middle (when wide) and right end, in
 * the bottom border. */
static void axis_labels(struct ui *ui, struct rect r, const struct metrics *m)
{
	char a[FMT_LEN], b[FMT_LEN];
	if (!m->elapsed_time_seconds.valid || r.w < 24)
		return;
	int y = r.y + r.h - 1, gx = r.x + 1 + SCALE_W, gw = r.w - 2 - SCALE_W;
	scr_printf(ui, y, gx, 12, TH_DIM, " %s ", format_duration(a, optnum_of(0)));
	format_duration(b, m->elapsed_time_seconds);
	int bw = (int)strlen(b) + 2;
	scr_printf(ui, y, r.x + r.w - 1 - bw, bw, TH_DIM, " %s ", b);
	if (gw < 50)
		return;
	format_duration(a, optnum_of(m->elapsed_time_seconds.value / 2));
	int aw = (int)strlen(a) + 2;
	scr_printf(ui, y, gx + gw / 2 - aw / 2, aw, TH_DIM, " %s ", a);
}

/* The peak's value on the scale, at the row it reaches, in the marker colour. */
static void peak_label(struct ui *ui, const struct tl_spec *s, int x, int gy, int gh)
{
	if (!(s->peak > 0) || !(s->peak <= s->vmax) || gh < 3)
		return;
	int row = gh - 1 - (int)floor(s->peak / s->vmax * gh - 1e-9);
	if (row < 0 || row >= gh - 1)
		return;
	char lab[SCALE_W + 1];
	scale_label(lab, s->peak, s->unit);
	scr_text(ui, gy + row, x, SCALE_W, TH_MARKER, lab);
}

static void timeline_panel(struct ui *ui, const struct ui_frame *f, struct rect r,
			   const struct tl_spec *s)
{
	scr_box(ui, r, (int)text_width(s->title) + 6 <= r.w   ? s->title
		       : (int)text_width(s->brief) + 6 <= r.w ? s->brief
							       : s->name);
	int gx = r.x + 1 + SCALE_W, gy = r.y + 1, gw = r.w - 2 - SCALE_W, gh = r.h - 2;
	if (gw < 4 || gh < 1)
		return;
	size_t n = (size_t)gw * (size_t)graph_xres(ui->ascii);
	if (ui_scratch(ui, n > (size_t)(gw * gh) ? n : (size_t)(gw * gh)) != 0)
		return;
	const struct metrics *m = f->m;
	double t0 = m->elapsed_time_seconds.valid ? m->t_start : f->now - 60;
	double t1 = m->elapsed_time_seconds.valid ? m->t_end : f->now;
	if (!(t1 - t0 >= 1))
		t0 = t1 - 1;
	graph_resample(s->tl, t0, t1, ui->vals, n);
	graph_area(ui->vals, n, s->vmax, gw, gh, ui->ascii, ui->cells);
	if (s->line) {
		graph_resample(s->line, t0, t1, ui->vals, n);
		graph_line(ui->vals, n, s->vmax, gw, gh, ui->ascii, ui->cells);
	}
	mark_line(ui, ui->cells, gw, gh, s->mark, s->vmax);
	scr_graph(ui, gy, gx, gw, gh, ui->cells);
	if (s->over[0] && gh > 1) /* the top left: the run's start, memory still low */
		scr_text(ui, gy, gx, gw, TH_DIM, s->over);
	char lab[SCALE_W + 1];
	scale_label(lab, s->vmax, s->unit);
	scr_text(ui, gy, r.x + 1, SCALE_W, TH_DIM, lab);
	if (gh > 1) {
		scale_label(lab, 0, s->unit);
		scr_text(ui, gy + gh - 1, r.x + 1, SCALE_W, TH_DIM, lab);
	}
	peak_label(ui, s, r.x + 1, gy, gh);
	axis_labels(ui, r, m);
}

static double tl_peak(const struct timeline *tl, double floor_v)
{
	double v = tl->n_samples ? fmax(tl->max, floor_v) : floor_v;
	for (size_t i = 0; i < tl->len; i++)
		v = fmax(v, tl->pts[i].max);
	return v;
}

static double vmax_of(const struct timeline *tl, double floor_v)
{
	return graph_nice_max(tl_peak(tl, floor_v));
}

/* The memory axis follows the memory used (a 0.5 GiB workload on a 25 GiB
 * cluster is not a flat line): 1.1 x its peak, nicely rounded. The limit
 * is drawn as a line when it is within 1.5 x that peak, and the axis then
 * reaches it; above, it is said at the graph's top left instead. */
static void memory_scale(struct ui *ui, struct tl_spec *s, const struct run *r)
{
	double used = tl_peak(&r->tl_mem_used, 1), limit = tl_peak(&r->tl_mem_limit, 0);
	if (!r->tl_mem_limit.n_samples || limit <= 1.5 * used) {
		s->vmax = nice_memory(fmax(limit, used * 1.1));
		s->line = &r->tl_mem_limit; /* the limit over time, over the memory used */
		return;
	}
	s->vmax = nice_memory(used * 1.1);
	char b[FMT_LEN];
	format_bytes(b, optnum_of(limit));
	snprintf(s->over, sizeof(s->over), "limit %s %s", b, ui->ascii ? "^" : "\xe2\x86\x91");
}

static void timelines(struct ui *ui, const struct ui_frame *f, const struct main_layout *L)
{
	const struct run *r = f->run;
	const struct metrics *m = f->m;
	const char *dash = ui->ascii ? "--" : "\xe2\x94\x84";
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
	struct tl_spec s[4] = {
		{ "workers", &r->tl_workers, vmax_of(&r->tl_workers, 1), "", NAN, NAN, NULL, "", "", "" },
		{ "memory", &r->tl_mem_used, vmax_of(&r->tl_mem_limit, 1), "B", NAN, NAN, NULL, "", "", "" },
		{ "cpu", &r->tl_cpu, 100, "%", NAN, NAN, NULL, "", "", "" },
		{ "tasks", &r->tl_executing, vmax_of(&r->tl_executing, 1), "", NAN, NAN, NULL, "", "", "" },
	};
	s[0].vmax = vmax_of(&r->tl_workers, 1);
	s[0].mark = m->avg_workers.valid ? m->avg_workers.value : NAN;
	s[0].peak = m->peak_workers.valid ? m->peak_workers.value : NAN;
	snprintf(s[0].title, sizeof(s[0].title), "workers %s  peak %s  %s time-average %s",
		 format_num(a, m->workers_now, "%.0f"), format_num(b, m->peak_workers, "%.0f"), dash,
		 format_num(c, m->avg_workers, "%.1f"));
	snprintf(s[0].brief, sizeof(s[0].brief), "workers %s peak %s %savg %s", a, b, dash, c);
	memory_scale(ui, &s[1], r);
	char d[FMT_LEN];
	snprintf(s[1].title, sizeof(s[1].title), "memory %s of %s %slimit  worst worker %s",
		 format_bytes(a, m->memory_used_now_bytes), format_bytes(b, m->memory_limit_now_bytes),
		 s[1].over[0] ? "" : (ui->ascii ? "- " : "\xe2\xa0\x89 "),
		 format_num(d, m->memory_worst_percent_now, "%.0f%%"));
	snprintf(s[1].brief, sizeof(s[1].brief), "mem %s/%s worst %s", a, b, d);
	s[2].mark = m->cpu_utilization_mean_percent.valid ? m->cpu_utilization_mean_percent.value : NAN;
	s[3].peak = m->tasks_executing_peak.valid ? m->tasks_executing_peak.value : NAN;
	snprintf(s[2].title, sizeof(s[2].title), "CPU %s  %s mean %s",
		 format_num(a, m->cpu_percent_now, "%.0f%%"), dash,
		 format_num(b, m->cpu_utilization_mean_percent, "%.1f%%"));
	memcpy(s[2].brief, s[2].title, sizeof(s[2].brief));
	snprintf(s[3].title, sizeof(s[3].title), "tasks executing %s  peak %s",
		 format_num(a, m->tasks_executing_now, "%.0f"),
		 format_num(b, m->tasks_executing_peak, "%.0f"));
	snprintf(s[3].brief, sizeof(s[3].brief), "tasks %s peak %s", a, b);
	for (int i = 0; i < 4; i++)
		timeline_panel(ui, f, L->timeline[i], &s[i]);
}

/* ---- histogram ---- */

/* The axis spans the data's own buckets: values under HIST_MIN (a chunk of
 * 0 s) cannot sit on a log axis, so they count in the first bin and the
 * left end starts at the lowest bucket in use, not at HIST_MIN. */
static void hist_range(const struct hist *h, double *lo, double *hi)
{
	double low = h->lo <= h->hi ? hist_bucket_lower(h->lo) : HIST_MIN;
	*lo = fmax(h->min, fmax(low, HIST_MIN));
	*hi = fmax(h->max, *lo);
	if (*hi < *lo * 4) { /* a narrow spread still gets a readable axis */
		double mid = sqrt(*lo * *hi);
		*lo = mid / 2;
		*hi = mid * 2;
	}
}

/* Carets under the marked values first, then each label beside its caret
 * where the row is still free (used[] marks taken columns). */
static int mark_col(int w, int xres, double v, double lo, double hi)
{
	if (!(v > 0))
		return -1;
	return (int)graph_log_bin(v, lo, hi, (size_t)(w * xres)) / xres;
}

static bool span_free(const bool *used, int from, int len, int w)
{
	if (from < 0 || from + len > w)
		return false;
	for (int i = from; i < from + len; i++)
		if (used[i])
			return false;
	return true;
}

static void hist_marks(struct ui *ui, int y, int x, int w, int xres, const optnum *marks,
		       const char *const *labels, int n, double lo, double hi)
{
	bool used[1024] = { false };
	int cols[8];
	w = w > 1024 ? 1024 : w;
	n = n > 8 ? 8 : n;
	for (int i = 0; i < n; i++) {
		cols[i] = mark_col(w, xres, marks[i].valid ? marks[i].value : NAN, lo, hi);
		if (cols[i] < 0)
			continue;
		scr_text(ui, y, x + cols[i], 1, TH_MARKER, ui->ascii ? "^" : "\xe2\x96\xb2");
		used[cols[i]] = true;
	}
	for (int i = 0; i < n; i++) {
		int len = (int)strlen(labels[i]), at = -1;
		if (cols[i] < 0)
			continue;
		if (span_free(used, cols[i] + 1, len, w))
			at = cols[i] + 1;
		else if (span_free(used, cols[i] - len, len, w))
			at = cols[i] - len;
		if (at < 0)
			continue;
		scr_text(ui, y, x + at, len, TH_MARKER, labels[i]);
		for (int k = at; k < at + len; k++)
			used[k] = true;
	}
}

typedef const char *(*fmt_fn)(char buf[FMT_LEN], optnum v);

/* A log axis: the value at each column's left edge is lo x (hi/lo)^(c/w). */
struct hist_axis {
	double lo, hi;
	fmt_fn fmt;
	bool under, over; /* values below lo / above hi counted in the end bins */
};

static double axis_value(const struct hist_axis *ax, int col, int w)
{
	return ax->lo * pow(ax->hi / ax->lo, (double)col / w);
}

/* An end label: "<=" before the left one when the first bin also holds
 * values under lo (a 0 s chunk), ">=" before the right one for overflow. */
static int axis_end(struct ui *ui, char out[FMT_LEN + 8], const struct hist_axis *ax, bool right)
{
	char v[FMT_LEN];
	ax->fmt(v, optnum_of(right ? ax->hi : ax->lo));
	bool open = right ? ax->over : ax->under;
	const char *sign = !open ? "" : (right ? (ui->ascii ? ">=" : "\xe2\x89\xa5")
					       : (ui->ascii ? "<=" : "\xe2\x89\xa4"));
	snprintf(out, FMT_LEN + 8, "%s%s", sign, v);
	return (int)text_width(out);
}

/* Inner ticks at k/(n+1) of the width, 3 when all fit with two spaces
 * around each, else the middle one, else none; each label centred on its
 * column, whose left edge is the value printed. */
static void axis_ticks(struct ui *ui, int y, int x, int w, const struct hist_axis *ax, int from,
		       int upto)
{
	for (int n = 3; n >= 1; n -= 2) {
		char t[3][FMT_LEN];
		int at[3], end = from;
		bool fit = true;
		for (int k = 0; k < n && fit; k++) {
			int col = w * (k + 1) / (n + 1);
			ax->fmt(t[k], optnum_of(axis_value(ax, col, w)));
			at[k] = col - (int)strlen(t[k]) / 2;
			fit = at[k] >= end + 2;
			end = at[k] + (int)strlen(t[k]);
		}
		if (!fit || end + 2 > upto)
			continue;
		for (int k = 0; k < n; k++)
			scr_text(ui, y, x + at[k], (int)strlen(t[k]), TH_DIM, t[k]);
		return;
	}
}

static void hist_axis(struct ui *ui, int y, int x, int w, const struct hist_axis *ax)
{
	char a[FMT_LEN + 8], b[FMT_LEN + 8];
	int aw = axis_end(ui, a, ax, false), bw = axis_end(ui, b, ax, true);
	scr_text(ui, y, x, w, TH_DIM, a);
	if (aw + bw + 1 > w)
		return;
	scr_text(ui, y, x + w - bw, bw, TH_DIM, b);
	axis_ticks(ui, y, x, w, ax, aw, w - bw);
}

static const char *fmt_events(char buf[FMT_LEN], optnum v)
{
	return format_si(buf, v, "");
}

/* Log-binned counts as an area chart; markers row and range row under it. */
static void hist_draw(struct ui *ui, struct rect in, const struct hist *h, const optnum *marks,
		      const char *const *labels, int n_marks, fmt_fn fmt)
{
	int gh = in.h - 2, gw = in.w, xres = graph_xres(ui->ascii);
	if (gh < 1 || gw < 8 || h->count == 0) {
		if (h->count == 0)
			scr_text(ui, in.y, in.x, in.w, TH_DIM, "no chunks yet");
		return;
	}
	size_t nb = (size_t)gw * (size_t)xres;
	if (ui_scratch(ui, nb > (size_t)(gw * gh) ? nb : (size_t)(gw * gh)) != 0)
		return;
	double lo, hi;
	hist_range(h, &lo, &hi);
	/* no display bin narrower than two source buckets, or the chart combs */
	size_t ncols = nb, max_bins = (size_t)(log(hi / lo) / log(1.02) / 2);
	nb = nb < max_bins ? nb : (max_bins < 8 ? 8 : max_bins);
	uint64_t counts[2048];
	if (nb > 2048)
		nb = 2048;
	hist_rebin(h, lo, hi, counts, nb);
	double top = 0;
	for (size_t i = 0; i < ncols; i++) {
		ui->vals[i] = (double)counts[i * nb / ncols];
		top = fmax(top, ui->vals[i]);
	}
	nb = ncols;
	graph_area(ui->vals, nb, top, gw, gh, ui->ascii, ui->cells);
	scr_graph(ui, in.y, in.x, gw, gh, ui->cells);
	hist_marks(ui, in.y + gh, in.x, gw, xres, marks, labels, n_marks, lo, hi);
	struct hist_axis ax = { lo, hi, fmt, h->underflow > 0, h->overflow > 0 };
	hist_axis(ui, in.y + gh + 1, in.x, gw, &ax);
	/* the axis is logarithmic: said on the border under it */
	scr_text(ui, in.y + in.h, in.x + 1, gw - 1, TH_DIM, " log scale ");
}

/* A panel title that never ends mid-word: the first of the variants,
 * longest first, that fits the border whole (scr_box needs its width + 6);
 * the last, a bare name, is cut only on a panel too narrow for it. */
#define TITLE_LEN (4 * FMT_LEN + 48)

static const char *title_fit(struct rect r, char v[][TITLE_LEN], int n)
{
	for (int i = 0; i < n - 1; i++)
		if ((int)text_width(v[i]) + 6 <= r.w)
			return v[i];
	return v[n - 1];
}

/* Dropped in this order as the panel narrows: the word "chunk", p90, p99,
 * max, p50 (README, "The dashboard"). */
static void runtime_hist(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	const struct metrics *m = f->m;
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], d[FMT_LEN], t[6][TITLE_LEN];
	format_duration(a, m->chunk_duration_p50);
	format_duration(b, m->chunk_duration_p90);
	format_duration(c, m->chunk_duration_p99);
	format_duration(d, m->chunk_duration_max);
	snprintf(t[0], TITLE_LEN, "chunk runtime  p50 %s p90 %s p99 %s max %s", a, b, c, d);
	snprintf(t[1], TITLE_LEN, "runtime p50 %s p90 %s p99 %s max %s", a, b, c, d);
	snprintf(t[2], TITLE_LEN, "runtime p50 %s p99 %s max %s", a, c, d);
	snprintf(t[3], TITLE_LEN, "runtime p50 %s max %s", a, d);
	snprintf(t[4], TITLE_LEN, "runtime p50 %s", a);
	snprintf(t[5], TITLE_LEN, "runtime");
	scr_box(ui, r, title_fit(r, t, 6));
	struct rect in = { r.x + 1, r.y + 1, r.w - 2, r.h - 2 };
	optnum marks[4] = { m->chunk_duration_p50, m->chunk_duration_p90, m->chunk_duration_p99,
			    m->chunk_duration_max };
	static const char *const labels[4] = { "p50", "p90", "p99", "max" };
	hist_draw(ui, in, &f->run->duration_hist, marks, labels, 4, format_duration);
}

/* Dropped in this order: exact counts (for 101 k), min (the axis's left
 * end shows it), the long name, max, mean. */
static void events_hist(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	const struct metrics *m = f->m;
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], t[6][TITLE_LEN];
	snprintf(t[0], TITLE_LEN, "events per chunk  mean %s min %s max %s",
		 format_count(a, m->chunk_events_mean), format_count(b, m->chunk_events_min),
		 format_count(c, m->chunk_events_max));
	format_si(a, m->chunk_events_mean, "");
	format_si(b, m->chunk_events_min, "");
	format_si(c, m->chunk_events_max, "");
	snprintf(t[1], TITLE_LEN, "events per chunk  mean %s min %s max %s", a, b, c);
	snprintf(t[2], TITLE_LEN, "events per chunk  mean %s max %s", a, c);
	snprintf(t[3], TITLE_LEN, "events/chunk mean %s max %s", a, c);
	snprintf(t[4], TITLE_LEN, "events/chunk mean %s", a);
	snprintf(t[5], TITLE_LEN, "events/chunk");
	scr_box(ui, r, title_fit(r, t, 6));
	struct rect in = { r.x + 1, r.y + 1, r.w - 2, r.h - 2 };
	optnum marks[1] = { m->chunk_events_mean };
	static const char *const labels[1] = { "mean" };
	hist_draw(ui, in, &f->run->events_hist, marks, labels, 1, fmt_events);
}

static void histograms(struct ui *ui, const struct ui_frame *f, const struct main_layout *L)
{
	struct rect r = L->hist;
	if (!L->hist_split) {
		runtime_hist(ui, f, (struct rect){ r.x, r.y, r.w, r.h - 1 });
		const struct metrics *m = f->m;
		char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
		char line[200];
		snprintf(line, sizeof(line), "events/chunk mean %s  min %s  max %s",
			 format_count(a, m->chunk_events_mean), format_count(b, m->chunk_events_min),
			 format_count(c, m->chunk_events_max));
		if ((int)strlen(line) + 2 > r.w)
			snprintf(line, sizeof(line), "events/chunk %s (%s - %s)",
				 format_si(a, m->chunk_events_mean, ""),
				 format_si(b, m->chunk_events_min, ""),
				 format_si(c, m->chunk_events_max, ""));
		scr_text(ui, r.y + r.h - 1, r.x + 1, r.w - 2, TH_TEXT, line);
		return;
	}
	int w1 = r.w * 3 / 5;
	runtime_hist(ui, f, (struct rect){ r.x, r.y, w1, r.h });
	events_hist(ui, f, (struct rect){ r.x + w1, r.y, r.w - w1, r.h });
}

/* ---- fine metrics ---- */

/* A stacked bar: CPU share then non-CPU, distinct glyphs so it reads without colour. */
static void stacked_bar(struct ui *ui, int y, int x, int w, optnum cpu_pct)
{
	if (w < 3)
		return;
	uint32_t full[256], rest[256];
	int inner = w - 2 > 256 ? 256 : w - 2;
	int ncpu = cpu_pct.valid ? (int)lround(fmin(fmax(cpu_pct.value, 0), 100) / 100 * inner) : 0;
	for (int i = 0; i < inner; i++) {
		full[i] = ui->ascii ? '#' : 0x2588;
		rest[i] = ui->ascii ? '=' : 0x2592;
	}
	scr_text(ui, y, x, 1, TH_BORDER, "[");
	if (cpu_pct.valid) {
		scr_cells(ui, y, x + 1, full, ncpu, ui->attr[TH_BAR_CPU]);
		scr_cells(ui, y, x + 1 + ncpu, rest, inner - ncpu, ui->attr[TH_BAR_NONCPU]);
	} else {
		scr_text(ui, y, x + 1, inner, TH_DIM, "n/a");
	}
	scr_text(ui, y, x + 1 + inner, 1, TH_BORDER, "]");
}

static int split_rows(struct ui *ui, struct rect in, int y, const char *name, optnum cpu_s,
		      optnum io_s, optnum cpu_pct, optnum io_pct)
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], d[FMT_LEN];
	if (y >= in.y + in.h)
		return y;
	scr_text(ui, y, in.x, 10, TH_LABEL, name);
	stacked_bar(ui, y, in.x + 10, in.w - 10, cpu_pct);
	if (++y >= in.y + in.h)
		return y;
	struct line l = { .ui = ui, .y = y, .x = in.x + 1, .end = in.x + in.w };
	bool narrow = in.w < 50;
	seg(&l, TH_BAR_CPU, ui->ascii ? "#" : "\xe2\x96\x88");
	seg(&l, TH_TEXT, narrow ? "" : "CPU ");
	seg(&l, TH_VALUE, format_num(a, cpu_pct, "%.1f%%"));
	seg(&l, TH_DIM, " ");
	seg(&l, TH_DIM, format_duration(b, cpu_s));
	seg(&l, TH_BAR_NONCPU, ui->ascii ? "  =" : "  \xe2\x96\x92");
	seg(&l, TH_TEXT, narrow ? "" : "non-CPU ");
	seg(&l, TH_VALUE, format_num(c, io_pct, "%.1f%%"));
	seg(&l, TH_DIM, " ");
	seg(&l, TH_DIM, format_duration(d, io_s));
	return y + 1;
}

static void fine_panel(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	const struct metrics *m = f->m;
	const char *scope = !m->has_fine ? "" : (m->fine_from_span ? " (span)" : " (cluster)");
	const char *legend = !m->has_fine ? ""
			     : (ui->ascii ? " #CPU =non-CPU" : " \xe2\x96\x88" "CPU \xe2\x96\x92non-CPU");
	char title[96];
	snprintf(title, sizeof(title), "%s%s%s", r.w < 50 ? "fine" : "fine metrics", scope, legend);
	scr_box(ui, r, title);
	struct rect in = { r.x + 2, r.y + 1, r.w - 4, r.h - 2 };
	if (!m->has_fine) {
		scr_text(ui, in.y, in.x, in.w, TH_DIM, "n/a: no Dask fine metrics yet");
		return;
	}
	int y = split_rows(ui, in, in.y, "processor", m->processor_cpu_time_seconds,
			   m->processor_io_wait_time_seconds, m->processor_cpu_percent,
			   m->processor_io_wait_percent);
	y = split_rows(ui, in, y, "overhead", m->overhead_cpu_time_seconds,
		       m->overhead_io_wait_time_seconds, m->overhead_cpu_percent,
		       m->overhead_io_wait_percent);
	char a[FMT_LEN], b[FMT_LEN];
	if (y < in.y + in.h)
		scr_printf(ui, y++, in.x, in.w, TH_TEXT,
			   in.w < 50 ? "compress %s  serialize %s" : "compression %s  serialization %s",
			   format_duration(a, m->total_compression_overhead_seconds),
			   format_duration(b, m->total_serialization_overhead_seconds));
	if (y < in.y + in.h)
		scr_printf(ui, y++, in.x, in.w, TH_TEXT, "disk read %s  write %s",
			   format_bytes(a, m->disk_read_bytes), format_bytes(b, m->disk_write_bytes));
}

void view_main(struct ui *ui, const struct ui_frame *f)
{
	struct main_layout L;
	if (layout_main(COLS, LINES, &L) != 0)
		return;
	header_line1(ui, f, L.header);
	header_line2(ui, f, L.header);
	progress_line1(ui, f, L.progress);
	progress_line2(ui, f, L.progress);
	progress_line3(ui, f, L.progress);
	timelines(ui, f, &L);
	histograms(ui, f, &L);
	fine_panel(ui, f, L.fine);
}
