/* The main view's histograms: chunk runtimes and events per chunk, on a
 * log axis over the buckets in use, with their marks (median, p95, ...). */
#include "mainpriv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roastop/format.h"
#include "roastop/graph.h"
#include "roastop/hist.h"

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
	graph_area(ui->vals, ncols, top, gw, gh, ui->ascii, ui->cells);
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
 * max, p50 (docs/dashboard.md, "Narrow terminals"). */
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

void main_histograms_draw(struct ui *ui, const struct ui_frame *f, const struct main_layout *L)
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
