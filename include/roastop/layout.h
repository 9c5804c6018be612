/* Where each panel of the dashboard goes for a terminal size: pure
 * arithmetic, unit-tested over many sizes (no overlap, nothing off screen). */
#ifndef ROASTOP_LAYOUT_H
#define ROASTOP_LAYOUT_H

#include "roastop/common.h"

#define LAYOUT_MIN_COLS 60
#define LAYOUT_MIN_ROWS 18
#define LAYOUT_HEADER_ROWS 3
#define LAYOUT_PROGRESS_ROWS 3

struct rect {
	int x, y, w, h;
};

/* The main view. Timelines are 4 bordered panels (workers, memory, CPU,
 * tasks) in a 2 x 2 grid; under them the histogram and the fine-metrics
 * panel side by side. hist_split: the histogram panel is wide enough for
 * the events-per-chunk histogram next to the runtime one. */
struct main_layout {
	struct rect tabs, header, progress, timeline[4], hist, fine, footer;
	bool hist_split;
};

/* A table view: tab line, table body (header row included), footer. */
struct table_layout {
	struct rect tabs, body, footer;
};

bool layout_too_small(int cols, int rows);
/* The emitter's export line as rows a terminal copy gets whole: the line
 * itself when it fits in cols, else one `export` per variable, split only
 * at " ROASTOP_KEY=" (each row a command of its own). Returns the rows
 * (1 or 2); a row can still be wider than cols (a long key path): the
 * caller then offers the file (w). */
#define LAYOUT_EXPORT_LEN 4352
int layout_export_rows(const char *line, int cols, char rows[2][LAYOUT_EXPORT_LEN]);
/* -1 when the terminal is too small (layout_too_small), else 0. */
int layout_main(int cols, int rows, struct main_layout *l);
int layout_table(int cols, int rows, struct table_layout *l);

#endif
