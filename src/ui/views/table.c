/* A scrolling table with a selected row; only visible rows are formatted,
 * so 10,000 workers cost what one screenful costs. */
#include "../uipriv.h"

#include <stdio.h>
#include <string.h>

static void clamp_scroll(struct ui *ui, int nrows, int body_rows)
{
	int v = ui->view;
	ui->n_rows[v] = nrows;
	ui->rows_shown[v] = body_rows;
	if (ui->sel[v] >= nrows)
		ui->sel[v] = nrows - 1;
	if (ui->sel[v] < 0)
		ui->sel[v] = 0;
	if (ui->sel[v] < ui->top[v])
		ui->top[v] = ui->sel[v];
	if (ui->sel[v] >= ui->top[v] + body_rows)
		ui->top[v] = ui->sel[v] - body_rows + 1;
	if (ui->top[v] > nrows - body_rows)
		ui->top[v] = nrows - body_rows;
	if (ui->top[v] < 0)
		ui->top[v] = 0;
}

#define FLEX_MIN 18
#define FLEX_KEEP 40 /* a name column grows into the flexible one down to this */

/* Column x positions: fixed widths, the rest to the one with width 0;
 * optional columns go, from the right, while that one is under FLEX_MIN.
 * A dropped column gets width 0. A text column whose cells need more
 * (need[]: a dataset's name) grows, from the right, into what the flexible
 * column has beyond FLEX_KEEP. */
static void col_layout(const struct table_col *cols, int ncols, int width, const int *need, int *x,
		       int *w)
{
	int fixed = 0, flex = -1;
	bool drop[TABLE_MAX_COLS] = { false };
	for (int i = 0; i < ncols; i++) {
		if (cols[i].width == 0)
			flex = i;
		fixed += cols[i].width + 1;
	}
	for (int i = ncols - 1; i >= 0 && width - fixed - 2 < FLEX_MIN; i--) {
		if (cols[i].optional) {
			drop[i] = true;
			fixed -= cols[i].width + 1;
		}
	}
	for (int i = ncols - 1; i >= 0; i--) {
		w[i] = drop[i] ? 0 : cols[i].width;
		int spare = width - fixed - 2 - FLEX_KEEP, grow = need[i] - w[i];
		if (w[i] && !cols[i].right && i != flex && flex >= 0 && grow > 0 && spare > 0) {
			grow = grow < spare ? grow : spare;
			w[i] += grow;
			fixed += grow;
		}
	}
	int pos = 1;
	for (int i = 0; i < ncols; i++) {
		if (i == flex)
			w[i] = width - fixed - 2 > 8 ? width - fixed - 2 : 8;
		x[i] = pos;
		pos += w[i] ? w[i] + 1 : 0;
	}
}

/* The start of the last n characters of s (UTF-8). */
static const char *last_chars(const char *s, int n)
{
	const char *p = s + strlen(s);
	while (p > s && n > 0) {
		p--;
		if (((unsigned char)*p & 0xC0) != 0x80)
			n--;
	}
	return p;
}

static void cell(struct ui *ui, int y, int x, int w, const struct table_col *col, enum theme_elem e,
		 const char *s)
{
	if (w <= 0)
		return;
	int len = (int)text_width(s);
	if (col->right && len < w)
		x += w - len;
	const char *more = ui->ascii ? "~" : "\xe2\x80\xa6";
	if (col->tail && len > w && w > 1) {
		x += scr_text(ui, y, x, 1, e, more);
		s = last_chars(s, w - 1);
		w -= 1;
	}
	if (!col->tail && len > w && w > 1) { /* cut: said, not passed off as a word */
		x += scr_text(ui, y, x, w - 1, e, s);
		scr_text(ui, y, x, 1, e, more);
		return;
	}
	scr_text(ui, y, x, w, e, s);
}

/* The title whole, else up to the last of its parts that fits: a part
 * begins at "  " or " (" (hints after the count); a space at worst. Never
 * ends mid-word. */
static void title_draw(struct ui *ui, int y, int w, const char *title)
{
	int len = (int)text_width(title), part = 0, space = 0, k = 0;
	for (const char *p = title; len > w && *p && k <= w; p++) {
		if (*p == ' ' && (p[1] == ' ' || p[1] == '('))
			part = (int)(p - title);
		if (*p == ' ')
			space = (int)(p - title);
		k += ((unsigned char)*p & 0xC0) != 0x80;
	}
	char buf[512];
	snprintf(buf, sizeof(buf), "%.*s", len <= w ? (int)strlen(title) : (part ? part : space), title);
	scr_text(ui, y, 1, w, TH_TITLE, buf);
}

/* The widest cell of each column over the rows shown. */
static void col_need(struct ui *ui, const struct ui_frame *f, int ncols, int from, int to,
		     table_row_fn fn, int *need)
{
	char cells[TABLE_MAX_COLS][FMT_CELL];
	for (int c = 0; c < ncols; c++)
		need[c] = 0;
	for (int row = from; row < to; row++) {
		enum theme_elem elem = TH_TEXT;
		memset(cells, 0, sizeof(cells));
		fn(ui, f, row, cells, &elem);
		for (int c = 0; c < ncols; c++) {
			int len = (int)text_width(cells[c]);
			need[c] = len > need[c] ? len : need[c];
		}
	}
}

struct rect table_body(void)
{
	struct table_layout L;
	layout_table(COLS, LINES, &L);
	return L.body;
}

void table_draw(struct ui *ui, const struct ui_frame *f, struct rect body, const char *title,
		const struct table_col *cols, int ncols, int nrows, table_row_fn fn)
{
	int x[TABLE_MAX_COLS], w[TABLE_MAX_COLS], need[TABLE_MAX_COLS];
	int v = ui->view, rows = body.h - 2;
	clamp_scroll(ui, nrows, rows);
	int end = ui->top[v] + rows < nrows ? ui->top[v] + rows : nrows;
	col_need(ui, f, ncols, ui->top[v], end, fn, need);
	col_layout(cols, ncols, body.w, need, x, w);
	/* the title gives way to the row count "1-20 of 32" at its right */
	title_draw(ui, body.y, body.w - 2 - (nrows > body.h - 2 ? 25 : 0), title);
	attrset(ui->attr[TH_LABEL] | A_UNDERLINE);
	mvhline(body.y + 1, 0, ' ', body.w);
	for (int c = 0; c < ncols; c++)
		cell(ui, body.y + 1, x[c], w[c], &cols[c], TH_LABEL, cols[c].title);
	mvchgat(body.y + 1, 0, body.w, ui->attr[TH_LABEL] | A_UNDERLINE, 0, NULL);
	if (nrows == 0) {
		scr_text(ui, body.y + 2, 1, body.w - 2, TH_DIM, "nothing yet");
		return;
	}
	char cells[TABLE_MAX_COLS][FMT_CELL];
	for (int i = 0; i < rows && ui->top[v] + i < nrows; i++) {
		int row = ui->top[v] + i, y = body.y + 2 + i;
		enum theme_elem elem = TH_TEXT;
		memset(cells, 0, sizeof(cells));
		fn(ui, f, row, cells, &elem);
		bool sel = row == ui->sel[v];
		if (sel) {
			attrset(ui->attr[TH_SELECTION]);
			mvhline(y, 0, ' ', body.w);
		}
		for (int c = 0; c < ncols; c++)
			cell(ui, y, x[c], w[c], &cols[c], sel ? TH_SELECTION : elem, cells[c]);
	}
	if (nrows > rows)
		scr_printf(ui, body.y, body.w - 24, 23, TH_DIM, "%*d-%d of %d", 8, ui->top[v] + 1,
			   ui->top[v] + rows < nrows ? ui->top[v] + rows : nrows, nrows);
}
