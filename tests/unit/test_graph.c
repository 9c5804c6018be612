#include "test_util.h"

#include <stdlib.h>

#include "roastop/graph.h"
#include "roastop/hist.h"
#include "roastop/timeline.h"

#define B(bits) (GRAPH_BRAILLE_BASE + (bits))

/* Dots per cell: braille 2 x 4, ASCII 1 x 3. (The dot numbering of U+2800,
 * left column rows 0-3 = 1, 2, 4, 64, right = 8, 16, 32, 128, is checked
 * through the areas drawn below.) */
static void cell_resolution(void **state)
{
	(void)state;
	assert_int_equal(graph_xres(false), 2);
	assert_int_equal(graph_yres(false), 4);
	assert_int_equal(graph_xres(true), 1);
	assert_int_equal(graph_yres(true), 3);
}

/* One cell high, two values: left column 2 dots, right column 4 dots. */
static void braille_area_one_cell(void **state)
{
	(void)state;
	uint32_t cells[1];
	double v[2] = { 2, 4 };
	graph_area(v, 2, 4, 1, 1, false, cells);
	assert_int_equal(cells[0], B(0x40 | 0x04 | 0x80 | 0x20 | 0x10 | 0x08));
	v[0] = 0;
	v[1] = 1;
	graph_area(v, 2, 4, 1, 1, false, cells);
	assert_int_equal(cells[0], B(0x80)); /* bottom-right dot only */
}

/* Two cells high: a full column fills both cells' column; half fills the bottom. */
static void braille_area_two_rows(void **state)
{
	(void)state;
	uint32_t cells[2 * 2];
	double v[4] = { 8, 4, NAN, -1 };
	graph_area(v, 4, 8, 2, 2, false, cells);
	assert_int_equal(cells[0], B(0x01 | 0x02 | 0x04 | 0x40)); /* top-left: left column full */
	assert_int_equal(cells[2], B(0xFF)); /* bottom-left: both columns */
	assert_int_equal(cells[1], ' '); /* NaN and negative draw nothing */
	assert_int_equal(cells[3], ' ');
}

static void tiny_values_show_one_dot_and_clip(void **state)
{
	(void)state;
	uint32_t cells[1];
	double v[2] = { 1e-9, 1e9 };
	graph_area(v, 2, 100, 1, 1, false, cells);
	assert_int_equal(cells[0], B(0x40 | 0x08 | 0x10 | 0x20 | 0x80)); /* 1 dot + clipped full */
	graph_area(v, 2, 0, 1, 1, false, cells);
	assert_int_equal(cells[0], ' '); /* no scale: nothing */
	graph_area(v, 2, NAN, 1, 1, false, cells);
	assert_int_equal(cells[0], ' ');
}

/* v / vmax past what lround can return once showed a single dot */
static void ratio_past_long_clips_full(void **state)
{
	(void)state;
	uint32_t cells[1];
	double v[2] = { 1e300, 1e300 };
	graph_area(v, 2, 1e-300, 1, 1, false, cells);
	assert_int_equal(cells[0], B(0xff)); /* both columns full */
}

static void ascii_area(void **state)
{
	(void)state;
	uint32_t cells[3 * 2];
	double v[3] = { 6, 3, 1 }; /* 2 rows x 3 levels = 6 */
	graph_area(v, 3, 6, 3, 2, true, cells);
	assert_int_equal(cells[0], '|');
	assert_int_equal(cells[3], '|');
	assert_int_equal(cells[1], ' ');
	assert_int_equal(cells[4], '|');
	assert_int_equal(cells[2], ' ');
	assert_int_equal(cells[5], '.');
	v[0] = 2;
	graph_area(v, 1, 6, 1, 2, true, cells);
	assert_int_equal(cells[1], ':');
	for (int i = 0; i < 6; i++)
		assert_true(cells[i] < 0x80); /* never a non-ASCII character */
}

static void more_values_than_columns_are_cut(void **state)
{
	(void)state;
	uint32_t cells[1];
	double v[5] = { 4, 4, 4, 4, 4 };
	graph_area(v, 5, 4, 1, 1, false, cells); /* must not write past the grid */
	assert_int_equal(cells[0], B(0xFF));
}

/* A limit line over an area: one dot per column at the value's height. */
static void line_over_area(void **state)
{
	(void)state;
	uint32_t cells[2 * 2];
	double area[4] = { 1, 1, 0, 0 }, line[4] = { 6, 8, 2, NAN };
	graph_area(area, 4, 8, 2, 2, false, cells);
	graph_line(line, 4, 8, 2, 2, false, cells);
	/* column 0: dot 6 from the bottom = top cell, row 2 (bit 0x04); column 1: dot 8 = row 0 */
	assert_int_equal(cells[0], B(0x04 | 0x08));
	assert_int_equal(cells[2], B(0x40 | 0x80)); /* the area's bottom dots stay */
	assert_int_equal(cells[3], B(0x04)); /* column 2 (cell 1, left): dot 2 = bottom cell, row 2 */
	assert_int_equal(cells[1], ' ');
	double over[1] = { 9 };
	graph_line(over, 1, 8, 2, 2, false, cells); /* above the scale: nothing */
	assert_int_equal(cells[0], B(0x04 | 0x08));
	uint32_t a[3] = { '|', ' ', ' ' };
	double l[3] = { 3, 3, 1 };
	graph_line(l, 3, 3, 3, 1, true, a);
	assert_int_equal(a[0], '|'); /* drawn cells are kept */
	assert_int_equal(a[1], '-');
	assert_int_equal(a[2], '-');
}

static void nice_max(void **state)
{
	(void)state;
	assert_near(graph_nice_max(0.7), 1, 1e-12);
	assert_near(graph_nice_max(1), 1, 1e-12);
	assert_near(graph_nice_max(1.2), 2, 1e-12);
	assert_near(graph_nice_max(2.2), 2.5, 1e-12);
	assert_near(graph_nice_max(3), 5, 1e-12);
	assert_near(graph_nice_max(16), 20, 1e-12);
	assert_near(graph_nice_max(44.7e9), 50e9, 1e-12);
	assert_near(graph_nice_max(0), 1, 0);
	assert_near(graph_nice_max(-5), 1, 0);
	assert_near(graph_nice_max(NAN), 1, 0);
}

static void resample_carries_and_stops_at_gaps(void **state)
{
	(void)state;
	struct timeline tl;
	assert_int_equal(timeline_init(&tl, 64), 0);
	timeline_push(&tl, 0, 1);
	timeline_push(&tl, 2, 5);
	timeline_push(&tl, 3, 3); /* same column as t=2 at 1 s per column: max wins */
	timeline_gap(&tl);
	timeline_push(&tl, 7, 2);
	double out[10];
	size_t n = graph_resample(&tl, 0, 10, out, 10);
	assert_near(out[0], 1, 0);
	assert_near(out[1], 1, 0); /* carried */
	assert_near(out[2], 5, 0);
	assert_near(out[3], 3, 0);
	assert_true(isnan(out[4])); /* the gap is not bridged */
	assert_true(isnan(out[6]));
	assert_near(out[7], 2, 0);
	assert_true(isnan(out[8])); /* nothing after the last sample */
	assert_int_equal(n, 5);
	/* many samples per column: the column shows their maximum */
	struct timeline t2;
	assert_int_equal(timeline_init(&t2, 64), 0);
	for (int i = 0; i < 40; i++)
		timeline_push(&t2, i, i % 10 == 3 ? 9 : 1);
	n = graph_resample(&t2, 0, 40, out, 4);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++)
		assert_near(out[i], 9, 0);
	assert_int_equal(graph_resample(&t2, 5, 5, out, 4), 0); /* empty window */
	timeline_free(&tl);
	timeline_free(&t2);
}

/* The screen's marker bin for a value is the bin hist_rebin counts it in. */
static void log_bins_match_hist_rebin(void **state)
{
	(void)state;
	struct hist *h = malloc(sizeof(*h));
	assert_non_null(h);
	const size_t n = 40;
	uint64_t out[40];
	double lo = 0.1, hi = 100;
	for (size_t b = 0; b < n; b++) {
		double centre = lo * pow(hi / lo, ((double)b + 0.5) / (double)n);
		hist_init(h);
		hist_add(h, centre);
		hist_rebin(h, lo, hi, out, n);
		assert_int_equal(graph_log_bin(centre, lo, hi, n), b);
		assert_int_equal(out[b], 1);
	}
	assert_int_equal(graph_log_bin(1e-9, lo, hi, n), 0);
	assert_int_equal(graph_log_bin(1e9, lo, hi, n), n - 1);
	assert_int_equal(graph_log_bin(0, lo, hi, n), 0);
	assert_int_equal(graph_log_bin(5, lo, lo, n), 0); /* degenerate range */
	/* the binning keeps every count, under- and overflow included */
	hist_init(h);
	for (int i = 1; i <= 1000; i++)
		hist_add(h, i * 0.01);
	hist_add(h, 0);
	hist_add(h, 1e9);
	hist_rebin(h, 0.05, 5, out, n);
	uint64_t sum = 0;
	for (size_t b = 0; b < n; b++)
		sum += out[b];
	assert_int_equal(sum, 1002);
	free(h);
}

static void utf8_encoding(void **state)
{
	(void)state;
	char b[5];
	assert_int_equal(graph_utf8('A', b), 1);
	assert_int_equal(b[0], 'A');
	assert_int_equal(graph_utf8(0x2800 + 0xFF, b), 3);
	assert_memory_equal(b, "\xe2\xa3\xbf", 3);
	assert_int_equal(graph_utf8(0xE9, b), 2);
	assert_memory_equal(b, "\xc3\xa9", 2);
	assert_int_equal(graph_utf8(0x1F600, b), 4);
	assert_memory_equal(b, "\xf0\x9f\x98\x80", 4);
	assert_int_equal(graph_utf8(0xD800, b), 1); /* surrogate */
	assert_int_equal(b[0], '?');
	assert_int_equal(graph_utf8(0x110000, b), 1);
}

static void horizontal_bar(void **state)
{
	(void)state;
	uint32_t c[4];
	graph_hbar(0.5, 4, false, c);
	assert_int_equal(c[0], 0x2588);
	assert_int_equal(c[1], 0x2588);
	assert_int_equal(c[2], ' ');
	graph_hbar(0.25 + 1.0 / 32, 4, false, c); /* 1 full cell + 1/8 */
	assert_int_equal(c[0], 0x2588);
	assert_int_equal(c[1], 0x258F);
	graph_hbar(2, 4, true, c);
	for (int i = 0; i < 4; i++)
		assert_int_equal(c[i], '#');
	graph_hbar(NAN, 4, true, c);
	assert_int_equal(c[0], ' ');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cell_resolution),
		cmocka_unit_test(braille_area_one_cell),
		cmocka_unit_test(braille_area_two_rows),
		cmocka_unit_test(tiny_values_show_one_dot_and_clip),
		cmocka_unit_test(ratio_past_long_clips_full),
		cmocka_unit_test(ascii_area),
		cmocka_unit_test(more_values_than_columns_are_cut),
		cmocka_unit_test(line_over_area),
		cmocka_unit_test(nice_max),
		cmocka_unit_test(resample_carries_and_stops_at_gaps),
		cmocka_unit_test(log_bins_match_hist_rebin),
		cmocka_unit_test(utf8_encoding),
		cmocka_unit_test(horizontal_bar),
	};
	return cmocka_run_group_tests_name("graph", tests, NULL, NULL);
}
