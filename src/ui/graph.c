/* Braille and ASCII rasteriser; see graph.h. No curses here. */
#include "roastop/graph.h"

#include <math.h>
#include <string.h>

/* Braille dot bits: column 0 rows 0-3 = 1, 2, 4, 64; column 1 = 8, 16, 32, 128. */
static const uint8_t dot_bits[2][4] = { { 0x01, 0x02, 0x04, 0x40 }, { 0x08, 0x10, 0x20, 0x80 } };
static const char ascii_levels[4] = { ' ', '.', ':', '|' };

int graph_xres(bool ascii)
{
	return ascii ? 1 : 2;
}

int graph_yres(bool ascii)
{
	return ascii ? 3 : 4;
}

/* dots filled from the bottom for one value */
static int fill_of(double v, double vmax, int total)
{
	if (!(v > 0))
		return 0;
	if (!(v < vmax))
		return total; /* and v / vmax cannot overflow lround's int below */
	double f = v / vmax * total;
	int d = (int)lround(f);
	if (d < 1)
		d = 1;
	return d > total ? total : d;
}

static void braille_column(uint32_t *cells, int w, int h, int col, int fill)
{
	int cx = col / 2, sub = col % 2;
	for (int d = 0; d < fill; d++) {
		int row = h - 1 - d / 4, y = 3 - d % 4;
		uint32_t *c = &cells[row * w + cx];
		if (*c == ' ')
			*c = GRAPH_BRAILLE_BASE;
		*c |= dot_bits[sub][y];
	}
}

static void ascii_column(uint32_t *cells, int w, int h, int col, int fill)
{
	for (int row = h - 1; fill > 0 && row >= 0; row--, fill -= 3)
		cells[row * w + col] = (uint32_t)ascii_levels[fill >= 3 ? 3 : fill];
}

void graph_area(const double *vals, size_t n, double vmax, int w, int h, bool ascii,
		uint32_t *cells)
{
	if (w <= 0 || h <= 0)
		return;
	for (int i = 0; i < w * h; i++)
		cells[i] = ' ';
	if (!(vmax > 0) || !isfinite(vmax))
		return;
	size_t cols = (size_t)w * (size_t)graph_xres(ascii);
	if (n > cols)
		n = cols;
	int total = h * graph_yres(ascii);
	for (size_t i = 0; i < n; i++) {
		int fill = fill_of(vals[i], vmax, total);
		if (ascii)
			ascii_column(cells, w, h, (int)i, fill);
		else
			braille_column(cells, w, h, (int)i, fill);
	}
}

void graph_line(const double *vals, size_t n, double vmax, int w, int h, bool ascii,
		uint32_t *cells)
{
	if (w <= 0 || h <= 0 || !(vmax > 0) || !isfinite(vmax))
		return;
	size_t cols = (size_t)w * (size_t)graph_xres(ascii);
	n = n > cols ? cols : n;
	int total = h * graph_yres(ascii);
	for (size_t i = 0; i < n; i++) {
		if (!(vals[i] > 0) || vals[i] > vmax)
			continue;
		int d = fill_of(vals[i], vmax, total) - 1; /* the top dot, from the bottom */
		int row = h - 1 - d / graph_yres(ascii);
		uint32_t *c = &cells[row * w + (int)i / graph_xres(ascii)];
		if (ascii) {
			if (*c == ' ')
				*c = '-';
			continue;
		}
		if (*c == ' ')
			*c = GRAPH_BRAILLE_BASE;
		*c |= dot_bits[i % 2][3 - d % 4];
	}
}

/* The first of steps (ascending, within one decade) x 10^k that is >= v. */
static double nice_of(double v, const double *steps, size_t n)
{
	if (!(v > 0) || !isfinite(v))
		return 1;
	double p = pow(10, floor(log10(v)));
	for (size_t i = 0; i < n; i++)
		if (steps[i] * p >= v * (1 - 1e-12))
			return steps[i] * p;
	return 10 * p;
}

double graph_nice_max(double v)
{
	static const double steps[] = { 1, 2, 2.5, 5, 10 };
	return nice_of(v, steps, ROASTOP_ARRAY_LEN(steps));
}

double graph_nice_fine(double v)
{
	static const double steps[] = { 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 };
	return nice_of(v, steps, ROASTOP_ARRAY_LEN(steps));
}

static size_t col_of(double t, double t0, double t1, size_t n)
{
	double pos = floor((t - t0) / (t1 - t0) * (double)n);
	if (pos < 0)
		return 0;
	return pos >= (double)n ? n - 1 : (size_t)pos;
}

/* Columns up to `upto` (exclusive) after `from` carry v. */
static void carry(double *out, size_t from, size_t upto, double v)
{
	for (size_t c = from + 1; c < upto; c++)
		out[c] = v;
}

size_t graph_resample(const struct timeline *tl, double t0, double t1, double *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = NAN;
	if (n == 0 || !(t1 > t0) || tl->len == 0)
		return 0;
	size_t prev_col = 0;
	bool have_prev = false;
	double prev_v = 0;
	for (size_t i = 0; i < tl->len; i++) {
		const struct tl_point *p = &tl->pts[i];
		if (p->t > t1)
			break;
		size_t c = col_of(p->t, t0, t1, n);
		if (have_prev && !p->gap_before && c > prev_col)
			carry(out, prev_col, c, prev_v);
		bool same = have_prev && c == prev_col && !isnan(out[c]);
		out[c] = same ? fmax(out[c], p->max) : p->max;
		prev_col = c;
		prev_v = p->mean;
		have_prev = true;
	}
	/* the last point's value holds until the latest raw sample */
	if (have_prev && tl->has_last)
		carry(out, prev_col, col_of(tl->t_last, t0, t1, n) + 1, tl->v_last);
	size_t filled = 0;
	for (size_t i = 0; i < n; i++)
		filled += !isnan(out[i]);
	return filled;
}

size_t graph_log_bin(double v, double lo, double hi, size_t n)
{
	if (n == 0)
		return 0;
	if (!(lo > 0) || !(hi > lo) || !(v > 0))
		return 0;
	double pos = floor(log(v / lo) * ((double)n / log(hi / lo)));
	if (pos < 0)
		return 0;
	return pos >= (double)n ? n - 1 : (size_t)pos;
}

size_t graph_utf8(uint32_t cp, char *buf)
{
	static const uint8_t lead[5] = { 0, 0, 0xC0, 0xE0, 0xF0 };
	size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	if (n == 1 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
		buf[0] = n == 1 ? (char)cp : '?';
		return 1;
	}
	for (size_t i = n - 1; i > 0; i--, cp >>= 6)
		buf[i] = (char)(0x80 | (cp & 0x3F));
	buf[0] = (char)(lead[n] | cp);
	return n;
}

void graph_hbar(double frac, int w, bool ascii, uint32_t *out)
{
	if (w <= 0)
		return;
	frac = frac > 0 ? fmin(frac, 1) : 0; /* NaN: 0 */
	int eighths = (int)lround(frac * w * 8);
	for (int i = 0; i < w; i++) {
		int e = eighths - i * 8;
		if (e >= 8)
			out[i] = ascii ? '#' : 0x2588;
		else if (e <= 0)
			out[i] = ' ';
		else if (ascii)
			out[i] = e >= 4 ? '#' : ' ';
		else
			out[i] = 0x2590 - (uint32_t)e; /* U+258F one eighth .. U+2589 seven */
	}
}
