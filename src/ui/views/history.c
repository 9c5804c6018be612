/* View 2's Enter: one worker's history (struct worker_hist) as three
 * panels, memory, CPU and tasks executing, over the worker's life; each
 * point is the highest of the samples it covers. Esc or Enter goes back. */
#include "../uipriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"
#include "roastop/graph.h"

enum hist_kind { HK_MEM, HK_CPU, HK_EXEC };

static double point_value(const struct worker_point *p, enum hist_kind k)
{
	if (k == HK_MEM)
		return p->mem;
	uint16_t v = k == HK_CPU ? p->cpu : p->exec;
	return v == WORKER_NA ? NAN : v;
}

/* n values over [0, span] seconds of the history: each the point in force
 * at that time (the last one that began before it); returns the highest. */
static double hist_resample(const struct worker_hist *h, enum hist_kind k, double span, double *out,
			    size_t n)
{
	double top = 0;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		double t = span * ((double)i + 0.5) / (double)n;
		while (j + 1 < h->len && h->pts[j + 1].t <= t)
			j++;
		out[i] = h->len ? point_value(&h->pts[j], k) : NAN;
		top = isfinite(out[i]) ? fmax(top, out[i]) : top;
	}
	return top;
}

struct hist_panel {
	enum hist_kind kind;
	const char *title, *unit;
	double vmax, mark; /* mark: a dashed line at this value (NaN: none) */
};

static void panel_draw(struct ui *ui, const struct worker_hist *h, double span, struct rect r,
		       const struct hist_panel *p)
{
	scr_box(ui, r, p->title);
	int gx = r.x + 1 + UI_SCALE_W, gy = r.y + 1, gw = r.w - 2 - UI_SCALE_W, gh = r.h - 2;
	size_t n = (size_t)(gw > 0 ? gw : 0) * (size_t)graph_xres(ui->ascii);
	if (gw < 4 || gh < 1 || ui_scratch(ui, n > (size_t)(gw * gh) ? n : (size_t)(gw * gh)) != 0)
		return;
	hist_resample(h, p->kind, span, ui->vals, n);
	graph_area(ui->vals, n, p->vmax, gw, gh, ui->ascii, ui->cells);
	scr_mark(ui, ui->cells, gw, gh, p->mark, p->vmax);
	scr_graph(ui, gy, gx, gw, gh, ui->cells);
	scr_scale(ui, gy, r.x + 1, TH_DIM, p->vmax, p->unit);
	if (gh > 1)
		scr_scale(ui, gy + gh - 1, r.x + 1, TH_DIM, 0, p->unit);
}

/* The scale reaches the worker's memory limit when it is within 1.5 x the
 * peak (then drawn as a dashed line), else 1.1 x the peak. */
static void memory_panel(struct hist_panel *p, const struct worker_agg *w, double peak,
			 char title[160])
{
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
	double limit = w->memory_limit.valid ? w->memory_limit.value : NAN;
	bool near = limit > 0 && limit <= 1.5 * peak;
	double v = near ? limit : fmax(peak * 1.1, 1), u = format_bytes_step(v, NULL);
	/* nice in the IEC unit the scale prints, so that "2 GiB" fits it */
	*p = (struct hist_panel){ HK_MEM, title, "B", graph_nice_fine(v / u) * u, near ? limit : NAN };
	snprintf(title, 160, "memory %s  peak %s  limit %s%s", format_bytes(a, w->memory_bytes),
		 format_bytes(b, optnum_of(peak)), format_bytes(c, w->memory_limit),
		 near ? " (dashed)" : "");
}

/* "worker NAME  host H  running  over 3m 0s, 4 samples a point  Esc: back":
 * parts whole, the later ones left out first; a name wider than the
 * screen ends in an ellipsis. */
static void history_header(struct ui *ui, const struct worker_agg *w, double span, int y)
{
	char p[5][RUN_NAME_LEN + 80], a[FMT_LEN];
	const struct worker_hist *h = &w->hist;
	snprintf(p[0], sizeof(p[0]), "worker %s", w->name);
	snprintf(p[1], sizeof(p[1]), "  Esc: back");
	snprintf(p[2], sizeof(p[2]), "  %s", w->present ? (w->status[0] ? w->status : "running") : "gone");
	snprintf(p[3], sizeof(p[3]), "  over %s, %u sample%s a point", format_duration(a, optnum_of(span)),
		 h->per_point, h->per_point == 1 ? "" : "s");
	snprintf(p[4], sizeof(p[4]), "  host %s", w->host[0] ? w->host : "n/a");
	int room = COLS - 2, x = 1 + scr_text(ui, y, 1, room - 1, TH_TITLE, p[0]);
	if ((int)text_width(p[0]) > room - 1) {
		scr_text(ui, y, x - 1, 1, TH_TITLE, ui->ascii ? "~" : "\xe2\x80\xa6");
		return;
	}
	int used = x - 1 + (int)text_width(p[1]); /* "Esc: back" at the right end, kept */
	for (int i = 2; i < 5; i++) {
		if (used + (int)text_width(p[i]) > room)
			break; /* whole parts only, in this order */
		x += scr_text(ui, y, x, room, i == 2 ? TH_TEXT : TH_DIM, p[i]);
		used += (int)text_width(p[i]);
	}
	if (used <= room)
		scr_text(ui, y, COLS - 1 - (int)text_width(p[1]) + 2, room, TH_DIM, p[1] + 2);
}

void view_worker_history(struct ui *ui, const struct ui_frame *f)
{
	struct rect body = table_body();
	const struct worker_agg *w = strmap_get(&f->run->workers, ui->worker_key);
	if (!w) {
		scr_text(ui, body.y, 1, body.w - 2, TH_WARNING,
			 "this worker is no longer in the run's table (Esc: back)");
		return;
	}
	const struct worker_hist *h = &w->hist;
	double span = fmax(fmax(w->t_last_seen - h->t0, h->len ? h->pts[h->len - 1].t : 0), 1);
	history_header(ui, w, span, body.y);
	size_t n = 256;
	if (ui_scratch(ui, n) != 0)
		return;
	double peak_mem = hist_resample(h, HK_MEM, span, ui->vals, n);
	double peak_cpu = hist_resample(h, HK_CPU, span, ui->vals, n);
	double peak_exec = hist_resample(h, HK_EXEC, span, ui->vals, n);
	char tm[160], tc[160], te[160], a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
	struct hist_panel p[3];
	memory_panel(&p[0], w, peak_mem, tm);
	snprintf(tc, sizeof(tc), "CPU %s  peak %s", format_num(a, w->cpu_percent, "%.0f%%"),
		 format_num(b, optnum_of(peak_cpu), "%.0f%%"));
	p[1] = (struct hist_panel){ HK_CPU, tc, "%", graph_nice_fine(fmax(peak_cpu, 100)), NAN };
	snprintf(te, sizeof(te), "executing %s  peak %s  threads %s",
		 format_num(a, w->executing, "%.0f"), format_num(b, optnum_of(peak_exec), "%.0f"),
		 format_num(c, w->nthreads, "%.0f"));
	p[2] = (struct hist_panel){ HK_EXEC, te, "", graph_nice_fine(fmax(peak_exec, 1)),
				    w->nthreads.valid ? w->nthreads.value : NAN };
	int top = body.y + 1, avail = body.h - 1, hm = avail / 2, hc = (avail - hm) / 2;
	panel_draw(ui, h, span, (struct rect){ 0, top, COLS, hm }, &p[0]);
	panel_draw(ui, h, span, (struct rect){ 0, top + hm, COLS, hc }, &p[1]);
	panel_draw(ui, h, span, (struct rect){ 0, top + hm + hc, COLS, avail - hm - hc }, &p[2]);
}
