/* Panel geometry; see layout.h. */
#include "roastop/layout.h"

#include <stdio.h>
#include <string.h>

bool layout_too_small(int cols, int rows)
{
	return cols < LAYOUT_MIN_COLS || rows < LAYOUT_MIN_ROWS;
}

static int code_points(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

int layout_export_rows(const char *line, int cols, char rows[2][LAYOUT_EXPORT_LEN])
{
	const char *key = strstr(line, " ROASTOP_KEY=");
	if (code_points(line) <= cols || !key || strncmp(line, "export ", 7) != 0) {
		snprintf(rows[0], LAYOUT_EXPORT_LEN, "%s", line);
		return 1;
	}
	snprintf(rows[0], LAYOUT_EXPORT_LEN, "%.*s", (int)(key - line), line);
	snprintf(rows[1], LAYOUT_EXPORT_LEN, "export %s", key + 1);
	return 2;
}

static struct rect rect_of(int x, int y, int w, int h)
{
	return (struct rect){ .x = x, .y = y, .w = w, .h = h };
}

/* Timelines get 55 % of the rows under the header (rounded), less the
 * header's findings row, at least 6 so each panel keeps one graph row; the
 * histogram and the breakdown get the rest (as many as without that row). */
int layout_main(int cols, int rows, struct main_layout *l)
{
	if (layout_too_small(cols, rows))
		return -1;
	l->tabs = rect_of(0, 0, cols, 1);
	l->header = rect_of(0, 1, cols, LAYOUT_HEADER_ROWS);
	l->progress = rect_of(0, 1 + LAYOUT_HEADER_ROWS, cols, LAYOUT_PROGRESS_ROWS);
	l->footer = rect_of(0, rows - 1, cols, 1);
	int top = 1 + LAYOUT_HEADER_ROWS + LAYOUT_PROGRESS_ROWS;
	int avail = rows - 1 - top;
	int tl_h = ((avail + 1) * 55 + 50) / 100 - 1;
	if (tl_h < 6)
		tl_h = 6;
	int bot_h = avail - tl_h;
	int half_w = cols / 2, row1 = tl_h / 2;
	l->timeline[0] = rect_of(0, top, half_w, row1);
	l->timeline[1] = rect_of(half_w, top, cols - half_w, row1);
	l->timeline[2] = rect_of(0, top + row1, half_w, tl_h - row1);
	l->timeline[3] = rect_of(half_w, top + row1, cols - half_w, tl_h - row1);
	int fine_w = cols * 45 / 100;
	if (fine_w < 38)
		fine_w = 38;
	if (fine_w > 70)
		fine_w = 70;
	l->hist = rect_of(0, top + tl_h, cols - fine_w, bot_h);
	l->fine = rect_of(cols - fine_w, top + tl_h, fine_w, bot_h);
	l->hist_split = l->hist.w >= 100;
	return 0;
}

int layout_table(int cols, int rows, struct table_layout *l)
{
	if (layout_too_small(cols, rows))
		return -1;
	l->tabs = rect_of(0, 0, cols, 1);
	l->body = rect_of(0, 1, cols, rows - 2);
	l->footer = rect_of(0, rows - 1, cols, 1);
	return 0;
}
