/* The main view's panels: the four timelines (workers, memory, CPU, tasks)
 * with their scales and peaks, and the fine-metrics breakdown. */
#include "mainpriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"
#include "roastop/graph.h"

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
 * and title agree ("1000 MiB" would not fit the scale: 1 GiB instead). */
static double nice_memory(double v)
{
	double u = format_bytes_step(v, NULL), top = graph_nice_fine(v / u);
	return top > 1000 ? 1024 * u : top * u;
}

/* Run time at the graph's left end, middle (when wide) and right end, in
 * the bottom border. */
static void axis_labels(struct ui *ui, struct rect r, const struct metrics *m)
{
	char a[FMT_LEN], b[FMT_LEN];
	if (!m->elapsed_time_seconds.valid || r.w < 24)
		return;
	int y = r.y + r.h - 1, gx = r.x + 1 + UI_SCALE_W, gw = r.w - 2 - UI_SCALE_W;
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
	if (row >= 0 && row < gh - 1)
		scr_scale(ui, gy + row, x, TH_MARKER, s->peak, s->unit);
}

static void timeline_panel(struct ui *ui, const struct ui_frame *f, struct rect r,
			   const struct tl_spec *s)
{
	scr_box(ui, r, (int)text_width(s->title) + 6 <= r.w   ? s->title
		       : (int)text_width(s->brief) + 6 <= r.w ? s->brief
							       : s->name);
	int gx = r.x + 1 + UI_SCALE_W, gy = r.y + 1, gw = r.w - 2 - UI_SCALE_W, gh = r.h - 2;
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
	scr_mark(ui, ui->cells, gw, gh, s->mark, s->vmax);
	scr_graph(ui, gy, gx, gw, gh, ui->cells);
	if (s->over[0] && gh > 1) /* the top left: the run's start, memory still low */
		scr_text(ui, gy, gx, gw, TH_DIM, s->over);
	scr_scale(ui, gy, r.x + 1, TH_DIM, s->vmax, s->unit);
	if (gh > 1)
		scr_scale(ui, gy + gh - 1, r.x + 1, TH_DIM, 0, s->unit);
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

void main_timelines_draw(struct ui *ui, const struct ui_frame *f, const struct main_layout *L)
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
	line_seg(&l, TH_BAR_CPU, ui->ascii ? "#" : "\xe2\x96\x88");
	line_seg(&l, TH_TEXT, narrow ? "" : "CPU ");
	line_seg(&l, TH_VALUE, format_num(a, cpu_pct, "%.1f%%"));
	line_seg(&l, TH_DIM, " ");
	line_seg(&l, TH_DIM, format_duration(b, cpu_s));
	line_seg(&l, TH_BAR_NONCPU, ui->ascii ? "  =" : "  \xe2\x96\x92");
	line_seg(&l, TH_TEXT, narrow ? "" : "non-CPU ");
	line_seg(&l, TH_VALUE, format_num(c, io_pct, "%.1f%%"));
	line_seg(&l, TH_DIM, " ");
	line_seg(&l, TH_DIM, format_duration(d, io_s));
	return y + 1;
}

void main_fine_draw(struct ui *ui, const struct ui_frame *f, struct rect r)
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
