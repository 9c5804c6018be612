/* Shared by the main view's files only (main.c, main_header.c,
 * main_progress.c, main_panels.c, main_hist.c): the running line of
 * segments (main.c) and each part of the view, which view_main() places.
 * Not a public header. */
#ifndef ROASTOP_MAINPRIV_H
#define ROASTOP_MAINPRIV_H

#include "../uipriv.h"

/* A running line of segments placed left to right, each whole or not at
 * all: after one that does not fit nothing more is drawn, so a line never
 * ends mid-word and what goes first is what comes last (each line is built
 * in its order of priority; docs/dashboard.md, "Narrow terminals"). Only a line's first
 * segment, an alert, may be cut: at a space, with an ellipsis. */
struct line {
	struct ui *ui;
	int y, x, end;
	bool sep_due; /* a separator before the next segment drawn */
	bool full, started;
};

const char *line_dot(const struct ui *ui);
bool line_room(struct line *l, int w);
void line_put(struct line *l, enum theme_elem e, const char *s);
void line_put_cut(struct line *l, enum theme_elem e, const char *s);
void line_seg(struct line *l, enum theme_elem e, const char *s);
void line_pair(struct line *l, const char *label, enum theme_elem e, const char *value);
void line_pair_path(struct line *l, const char *label, enum theme_elem e, const char *path);
void line_sep(struct line *l);

void main_header_draw(struct ui *ui, const struct ui_frame *f, struct rect r);
void main_progress_draw(struct ui *ui, const struct ui_frame *f, struct rect r);
void main_timelines_draw(struct ui *ui, const struct ui_frame *f, const struct main_layout *L);
void main_histograms_draw(struct ui *ui, const struct ui_frame *f, const struct main_layout *L);
void main_fine_draw(struct ui *ui, const struct ui_frame *f, struct rect r);

#endif
