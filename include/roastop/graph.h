/* The rasteriser behind the timelines and the histogram: values -> a grid
 * of characters (Unicode code points), pure, so it is unit-tested without
 * a terminal. Braille cells hold 2 x 4 dots (U+2800 + dot bits); the ASCII
 * fallback holds 1 x 3 levels per cell (. : |). */
#ifndef ROASTOP_GRAPH_H
#define ROASTOP_GRAPH_H

#include "roastop/common.h"
#include "roastop/timeline.h"

#define GRAPH_BRAILLE_BASE 0x2800u

/* Values per cell across (2 braille, 1 ASCII) and levels per cell up (4, 3). */
int graph_xres(bool ascii);
int graph_yres(bool ascii);

/* An area chart: vals[i] (NaN or negative = nothing drawn) fills dot column
 * i from the bottom up to round(vals[i] / vmax x h x yres) dots, at least
 * one dot for a positive value. n values cover min(n, w x xres) dot
 * columns from the left. cells is w x h code points, row 0 at the top; a
 * cell with no dot is ' '. vmax <= 0 or non-finite draws nothing. */
void graph_area(const double *vals, size_t n, double vmax, int w, int h, bool ascii,
		uint32_t *cells);

/* A line over an area chart: one dot per value at its height (the top dot
 * round(vals[i] / vmax x h x yres) from the bottom), added to the cells
 * graph_area drew. ASCII: '-' in cells that are still empty. Values at 0,
 * NaN or above vmax draw nothing. */
void graph_line(const double *vals, size_t n, double vmax, int w, int h, bool ascii,
		uint32_t *cells);

/* A "nice" axis maximum >= v: 1, 2, 2.5 or 5 x 10^k (v <= 0: 1). */
double graph_nice_max(double v);
/* Finer: 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 x 10^k, at most 1.25 x v,
 * steps a scale label prints short. */
double graph_nice_fine(double v);

/* Resamples a timeline over [t0, t1] into n columns: each column is the
 * highest bucket max that starts inside it, else the value carried from the
 * previous point (not across a gap, not past the last sample); NaN where
 * there is no data. Returns the number of columns with data. */
size_t graph_resample(const struct timeline *tl, double t0, double t1, double *out, size_t n);

/* The display bin of value v among n log-spaced bins over [lo, hi] (the
 * same mapping as hist_rebin), clamped to 0..n-1. */
size_t graph_log_bin(double v, double lo, double hi, size_t n);

/* UTF-8 encoding of a code point into buf (at least 5 bytes); returns the
 * byte count. Invalid code points encode as '?'. */
size_t graph_utf8(uint32_t cp, char *buf);

/* A horizontal bar of width cells filled to frac in [0, 1] with eighth
 * blocks (U+2588..U+258F) or '#' in ASCII; out gets w code points. */
void graph_hbar(double frac, int w, bool ascii, uint32_t *out);

#endif
