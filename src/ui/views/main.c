/* The main view: header, progress, four timelines, the chunk-runtime
 * histogram and the fine-metrics breakdown, each drawn by its own file
 * (main_header.c, main_progress.c, main_panels.c, main_hist.c); here the
 * view's frame and the running line of segments the header and progress
 * lines are built of. Every number shown comes from struct metrics (or is
 * a count the run keeps) and goes through format.h. */
#include "mainpriv.h"

#include <stdio.h>
#include <string.h>

#include "roastop/format.h"

const char *line_dot(const struct ui *ui)
{
	return ui->ascii ? " | " : " \xc2\xb7 ";
}

/* Room for w more columns (and the separator due)? Closes the line if not. */
bool line_room(struct line *l, int w)
{
	if (!l->full && l->x + (l->sep_due ? 3 : 0) + w <= l->end)
		return true;
	l->full = true;
	return false;
}

void line_put(struct line *l, enum theme_elem e, const char *s)
{
	if (l->sep_due)
		l->x += scr_text(l->ui, l->y, l->x, l->end - l->x, TH_DIM, line_dot(l->ui));
	l->sep_due = false;
	l->started = true;
	l->x += scr_text(l->ui, l->y, l->x, l->end - l->x, e, s);
}

/* The first segment, wider than the line: up to its last space that fits. */
void line_put_cut(struct line *l, enum theme_elem e, const char *s)
{
	char buf[1024];
	int w = l->end - l->x - 1, k = 0, cut = 0;
	size_t i = 0;
	for (; s[i] && k < w && i + 1 < sizeof(buf); i++) {
		k += ((unsigned char)s[i] & 0xC0) != 0x80;
		if (s[i] == ' ')
			cut = (int)i;
	}
	snprintf(buf, sizeof(buf), "%.*s%s", cut ? cut : (int)i, s, l->ui->ascii ? "~" : "\xe2\x80\xa6");
	line_put(l, e, buf);
	l->full = true;
}

void line_seg(struct line *l, enum theme_elem e, const char *s)
{
	if (!s[0] || l->full)
		return;
	if (line_room(l, (int)text_width(s)))
		line_put(l, e, s);
	else if (!l->started)
		line_put_cut(l, e, s);
}

/* A label and its value, together or not at all. */
void line_pair(struct line *l, const char *label, enum theme_elem e, const char *value)
{
	if (!line_room(l, (int)(text_width(label) + text_width(value))))
		return;
	line_put(l, TH_LABEL, label);
	line_put(l, e, value);
}

/* A path: whole, else its last component ("…/demo-measurements"), else not. */
void line_pair_path(struct line *l, const char *label, enum theme_elem e, const char *path)
{
	char last[FMT_LEN * 4];
	const char *slash = strrchr(path, '/');
	if (l->full)
		return;
	if (!slash || !slash[1] || line_room(l, (int)(text_width(label) + text_width(path)))) {
		line_pair(l, label, e, path);
		return;
	}
	l->full = false;
	snprintf(last, sizeof(last), "%s%s", l->ui->ascii ? "~" : "\xe2\x80\xa6", slash);
	line_pair(l, label, e, last);
}

void line_sep(struct line *l)
{
	l->sep_due = l->started;
}

void view_main(struct ui *ui, const struct ui_frame *f)
{
	struct main_layout L;
	if (layout_main(COLS, LINES, &L) != 0)
		return;
	main_header_draw(ui, f, L.header);
	main_progress_draw(ui, f, L.progress);
	main_timelines_draw(ui, f, &L);
	main_histograms_draw(ui, f, &L);
	main_fine_draw(ui, f, L.fine);
}
