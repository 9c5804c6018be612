#include "test_util.h"

#include "roastop/layout.h"

/* The test's own geometry: a lies inside a cols x rows screen; a and b
 * overlap (touching is not overlapping). */
static bool layout_inside(struct rect a, int cols, int rows)
{
	return a.x >= 0 && a.y >= 0 && a.w > 0 && a.h > 0 && a.x + a.w <= cols && a.y + a.h <= rows;
}

static bool layout_overlap(struct rect a, struct rect b)
{
	return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static void check_main(int cols, int rows)
{
	struct main_layout L;
	assert_int_equal(layout_main(cols, rows, &L), 0);
	struct rect all[] = { L.tabs, L.header, L.progress, L.timeline[0], L.timeline[1],
			      L.timeline[2], L.timeline[3], L.hist, L.fine, L.footer };
	size_t n = sizeof(all) / sizeof(all[0]);
	int area = 0;
	for (size_t i = 0; i < n; i++) {
		assert_true(layout_inside(all[i], cols, rows));
		area += all[i].w * all[i].h;
		for (size_t j = i + 1; j < n; j++)
			assert_false(layout_overlap(all[i], all[j]));
	}
	assert_int_equal(area, cols * rows); /* every cell belongs to a panel */
	for (int i = 0; i < 4; i++)
		assert_true(L.timeline[i].h >= 3); /* borders + one graph row */
	assert_true(L.hist.h >= 4);
	assert_true(L.fine.w >= 38);
	assert_int_equal(L.footer.y, rows - 1);
}

/* Every size from the minimum to very large: nothing overlaps, nothing is
 * off screen, nothing is lost. */
static void main_layout_sweep(void **state)
{
	(void)state;
	for (int cols = LAYOUT_MIN_COLS; cols <= 400; cols += 7)
		for (int rows = LAYOUT_MIN_ROWS; rows <= 150; rows += 3)
			check_main(cols, rows);
	check_main(80, 24);
	check_main(200, 60);
}

static void main_layout_proportions(void **state)
{
	(void)state;
	struct main_layout L;
	assert_int_equal(layout_main(80, 24, &L), 0);
	/* 55 % of 17 rows, less the header's third row (the findings line) */
	assert_int_equal(L.timeline[0].h + L.timeline[2].h, 8);
	assert_int_equal(L.hist.h, 8);
	assert_int_equal(L.timeline[0].w, 40);
	assert_false(L.hist_split);
	assert_int_equal(layout_main(200, 60, &L), 0);
	assert_true(L.hist_split); /* room for the events-per-chunk histogram */
	assert_true(L.timeline[0].h > 10);
}

static void too_small(void **state)
{
	(void)state;
	struct main_layout L;
	struct table_layout T;
	assert_true(layout_too_small(LAYOUT_MIN_COLS - 1, 50));
	assert_true(layout_too_small(200, LAYOUT_MIN_ROWS - 1));
	assert_true(layout_too_small(0, 0));
	assert_true(layout_too_small(-5, 30));
	assert_false(layout_too_small(LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS));
	assert_int_equal(layout_main(40, 10, &L), -1);
	assert_int_equal(layout_table(40, 10, &T), -1);
}

static void table_layout(void **state)
{
	(void)state;
	struct table_layout T;
	assert_int_equal(layout_table(80, 24, &T), 0);
	assert_int_equal(T.body.y, 1);
	assert_int_equal(T.body.h, 22);
	assert_int_equal(T.footer.y, 23);
	assert_false(layout_overlap(T.body, T.footer));
	assert_false(layout_overlap(T.tabs, T.body));
}

static void rect_helpers(void **state)
{
	(void)state;
	struct rect a = { 0, 0, 10, 5 }, b = { 10, 0, 5, 5 }, c = { 9, 4, 2, 2 };
	assert_false(layout_overlap(a, b)); /* touching is not overlapping */
	assert_true(layout_overlap(a, c));
	assert_true(layout_inside(a, 10, 5));
	assert_false(layout_inside(a, 9, 5));
	assert_false(layout_inside((struct rect){ 0, 0, 0, 1 }, 10, 10)); /* empty */
}

/* The export line splits only between its two variables, each row a whole
 * command; a line that fits, or has no key, stays one row. */
static void export_rows(void **state)
{
	(void)state;
	static char rows[2][LAYOUT_EXPORT_LEN];
	const char *line = "export ROASTOP_ADDR=127.0.0.1:8790 ROASTOP_KEY=$(cat /home/you/.config/roastop/key)";
	assert_int_equal(layout_export_rows(line, 200, rows), 1);
	assert_string_equal(rows[0], line);
	assert_int_equal(layout_export_rows(line, 80, rows), 2);
	assert_string_equal(rows[0], "export ROASTOP_ADDR=127.0.0.1:8790");
	assert_string_equal(rows[1], "export ROASTOP_KEY=$(cat /home/you/.config/roastop/key)");
	assert_int_equal(layout_export_rows(line, (int)strlen(line), rows), 1);
	assert_int_equal(layout_export_rows(line, (int)strlen(line) - 1, rows), 2);
	assert_int_equal(layout_export_rows("export ROASTOP_ADDR=[::1]:8790", 20, rows), 1);
	/* widths in code points: a UTF-8 path as wide as the screen still fits */
	const char *utf = "export ROASTOP_ADDR=h:1 ROASTOP_KEY=$(cat /h/\xc3\xa9)";
	assert_int_equal(layout_export_rows(utf, (int)strlen(utf) - 1, rows), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(main_layout_sweep),
		cmocka_unit_test(main_layout_proportions),
		cmocka_unit_test(too_small),
		cmocka_unit_test(table_layout),
		cmocka_unit_test(rect_helpers),
		cmocka_unit_test(export_rows),
	};
	return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
