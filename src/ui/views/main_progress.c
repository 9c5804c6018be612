/* The main view's three progress lines: the bar with its parts (chunks,
 * rates, ETA) dropped by priority as the width shrinks, the chunks in flight
 * and the alerts. */
#include "mainpriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"
#include "roastop/graph.h"

static double pct100(optnum v)
{
	return v.valid ? v.value * 100 : NAN;
}

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
#define PROGRESS_PARTS 10
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
			line_seg(l, p->e[k], p->s[k]);
	}
}

/* "chunks 12 done, 0 failed", the failures in the alert colour */
static void part_chunks(struct parts *ps, const struct ui *ui, const struct metrics *m,
			int drop, bool first)
{
	bool failed = m->num_failed_chunks.valid && m->num_failed_chunks.value > 0;
	struct part *p = part_new(ps, failed && drop > 2 ? 2 : drop); /* failures outrank the bar */
	if (!first)
		part_seg(p, TH_DIM, line_dot(ui));
	part_seg(p, TH_LABEL, "chunks ");
	part_seg(p, TH_VALUE, format_count(part_buf(ps), m->num_chunks));
	part_seg(p, TH_TEXT, " done, ");
	part_seg(p, failed ? TH_CRITICAL : TH_VALUE, format_count(part_buf(ps), m->num_failed_chunks));
	part_seg(p, TH_TEXT, " failed");
}

/* "· 4 retried", "· 1 straggler" (alert: in the alert colour), only when
 * there are some */
static void part_count(struct parts *ps, const struct ui *ui, int drop, optnum n, bool alert,
		       const char *one, const char *many)
{
	if (!n.valid || n.value <= 0)
		return;
	struct part *p = part_new(ps, drop);
	part_seg(p, TH_DIM, line_dot(ui));
	part_seg(p, alert ? TH_CRITICAL : TH_VALUE, format_count(part_buf(ps), n));
	part_seg(p, alert ? TH_CRITICAL : TH_TEXT, n.value == 1 ? one : many);
}

/* failed attempts a later attempt of the same chunk followed (docs/metrics.md, "Retries") */
static void part_retries(struct parts *ps, const struct ui *ui, const struct metrics *m, int drop)
{
	part_count(ps, ui, drop, m->chunk_retries, false, " retried", " retried");
}

static void part_labelled(struct parts *ps, const struct ui *ui, int drop, const char *label,
			  const char *value)
{
	struct part *p = part_new(ps, drop);
	part_seg(p, TH_DIM, line_dot(ui));
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
	bool own = f->m->eta_seconds.valid || !f->previous_eta.valid;
	part_seg(p, TH_LABEL, "ETA ");
	part_seg(p, TH_VALUE, format_duration(part_buf(ps), own ? f->m->eta_seconds
								 : f->previous_eta));
	if (!own)
		part_seg(p, TH_DIM, " (last run's)");
}

/* "last run 45.6 kHz (-73%)": the last comparable run's rate, and this
 * run's against it */
static void part_previous(struct parts *ps, const struct ui *ui, const struct ui_frame *f,
			  int drop)
{
	if (!f->previous_rate_khz.valid)
		return;
	part_labelled(ps, ui, drop, "last run ",
		      format_rate(part_buf(ps), f->previous_rate_khz, 1e3, "Hz"));
	optnum delta, pct;
	metrics_change(f->previous_rate_khz, f->m->event_rate_elapsed_khz, &delta, &pct);
	if (pct.valid) /* in the same part: at most PROGRESS_PARTS */
		part_seg(&ps->p[ps->n - 1], TH_DIM, format_num(part_buf(ps), pct, " (%+.0f%%)"));
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
	part_previous(ps, ui, f, 2);
	part_retries(ps, ui, m, 7);
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
	part_retries(ps, ui, m, 5);
	part_labelled(ps, ui, 2, "events ", format_count(part_buf(ps), m->total_events));
	part_labelled(ps, ui, 4, "tasks executing ",
		      format_num(part_buf(ps), m->tasks_executing_now, "%.0f"));
	part_eta(ps, f, line_dot(ui));
	part_previous(ps, ui, f, 1);
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
		line_seg(&l, TH_LABEL, "event rate ");
	line_seg(&l, TH_VALUE, m->event_rate_elapsed_khz.valid
				  ? format_rate(a, m->event_rate_elapsed_khz, 1e3, "Hz") : "n/a kHz");
	line_sep(&l);
	line_seg(&l, TH_VALUE, m->data_rate_gbps.valid ? format_rate(a, m->data_rate_gbps, 1e9, "bps")
						: "n/a Gbps");
	if (m->data_rate_mb_per_s.valid) {
		line_seg(&l, TH_TEXT, " (");
		line_seg(&l, TH_VALUE, format_rate(a, m->data_rate_mb_per_s, 1e6, "B/s"));
		line_seg(&l, TH_TEXT, ")");
	}
	line_sep(&l);
	line_seg(&l, TH_VALUE, m->event_rate_core_khz.valid
				  ? format_rate(a, m->event_rate_core_khz, 1e3, "Hz/core")
				  : "n/a kHz/core");
	line_sep(&l);
	line_seg(&l, TH_LABEL, wide ? "core efficiency " : "eff ");
	line_seg(&l, TH_VALUE, format_num(a, optnum_of(pct100(m->core_efficiency)), "%.1f %%"));
	if (r.w < 90)
		return; /* the spec's rates first; chunks/s where there is room */
	line_sep(&l);
	line_seg(&l, TH_VALUE, format_si(a, m->chunks_per_second, NULL));
	line_seg(&l, TH_LABEL, " chunks/s");
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
		part_seg(p, TH_DIM, line_dot(ui));
		part_seg(p, TH_LABEL, "oldest ");
		part_seg(p, metrics_straggler(m, oldest) ? TH_CRITICAL : TH_VALUE,
			 format_duration(part_buf(&ps), optnum_of(metrics_inflight_age(m, oldest))));
	}
	part_count(&ps, ui, 1, m->inflight_stragglers, true, " straggler", " stragglers");
	part_count(&ps, ui, 2, m->inflight_lost, true, " lost", " lost");
	if (oldest) { /* where it runs: in the room the rest leaves */
		int used = 0;
		for (size_t i = 0; i < ps.n; i++)
			used += part_width(&ps.p[i]);
		part_seg(p, TH_TEXT, inflight_where(where, sizeof(where), oldest, l.end - l.x - used));
	}
	parts_draw(&ps, &l, 0);
}

void main_progress_draw(struct ui *ui, const struct ui_frame *f, struct rect r)
{
	progress_line1(ui, f, r);
	progress_line2(ui, f, r);
	progress_line3(ui, f, r);
}
