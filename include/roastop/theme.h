/* Colour themes: a documented "key = value" text format (themes/README.md),
 * one key per UI element, parsed without trusting the file; lookup of a
 * theme by name or path; and the degradation of #rrggbb colours to what the
 * terminal has (direct colour, 256, 16, 8). Pure apart from theme_load's
 * file reading, so parsing and degrading are unit-tested and fuzzed. */
#ifndef ROASTOP_THEME_H
#define ROASTOP_THEME_H

#include "roastop/common.h"

#define THEME_MAX_FILE (64u << 10) /* bytes */
#define THEME_MAX_LINE 512u
#define THEME_NAME_LEN 64

enum theme_elem {
	TH_BACKGROUND = 0,
	TH_TEXT,
	TH_DIM,
	TH_TITLE,
	TH_BORDER,
	TH_LABEL,
	TH_VALUE,
	TH_TAB,
	TH_TAB_ACTIVE,
	TH_GRAPH_START,
	TH_GRAPH_MID,
	TH_GRAPH_END,
	TH_BAR_CPU,
	TH_BAR_NONCPU,
	TH_MARKER,
	TH_OK,
	TH_WARNING,
	TH_CRITICAL,
	TH_SELECTION,
	TH_SELECTION_TEXT,
	TH__COUNT
};

enum theme_color_kind { TC_DEFAULT = 0, TC_INDEX, TC_RGB };

struct theme_color {
	enum theme_color_kind kind;
	uint8_t index; /* TC_INDEX: 0-255, xterm numbering */
	uint8_t r, g, b; /* TC_RGB */
};

/* Attributes a key may add after its colour: "title = #ffffff bold". */
enum { TA_BOLD = 1, TA_UNDERLINE = 2, TA_REVERSE = 4, TA_DIM = 8 };

struct theme {
	char name[THEME_NAME_LEN];
	struct theme_color color[TH__COUNT];
	unsigned attr[TH__COUNT];
};

/* Where theme_load looks, in order after an explicit path. NULL = skip. */
struct theme_dirs {
	const char *config; /* $XDG_CONFIG_HOME/roastop/themes or ~/.config/roastop/themes */
	const char *install; /* $(PREFIX)/share/roastop/themes */
	const char *source; /* the themes shipped beside the program (datadir.h) */
};

/* The key of an element in theme files ("graph_start"). */
const char *theme_key(enum theme_elem e);

/* The built-in default theme (the same as themes/default.theme). */
void theme_default(struct theme *t);

/* Parses text on top of *t (keys a file leaves out keep t's values). On the
 * first error returns -1 with one line in err naming file, line and key;
 * *t is then the default theme. file is only used in messages. */
int theme_parse(struct theme *t, const char *text, size_t len, const char *file, char *err,
		size_t errsz);

/* One colour value: "#rrggbb", "0".."255", a name ("red", "bright_blue",
 * "default"). false when it is none of those. */
bool theme_parse_color(const char *s, size_t len, struct theme_color *out);

/* Resolves NAME or PATH to a file (a value with a '/' or ending in ".theme"
 * is a path; otherwise NAME.theme in dirs->config, ->install, ->source),
 * reads and parses it. On any failure: -1, err says why, *t is the
 * default. name "default" without a file is the built-in theme. */
int theme_load(const char *name, const struct theme_dirs *dirs, struct theme *t, char *err,
	       size_t errsz);

/* The theme names (file stems) found in dirs, "default" first, sorted and
 * without duplicates; returns how many were written to names. */
size_t theme_list(const struct theme_dirs *dirs, char names[][THEME_NAME_LEN], size_t max);

/* The colour number for a terminal with ncolors colours: -1 = the terminal's
 * default; ncolors >= 1 << 24 (direct colour) gives 0xRRGGBB; else the
 * nearest palette entry (RGB in the 256-colour cube and grey ramp; with 16
 * or 8 colours the nearest of the standard ones). */
int theme_color_number(struct theme_color c, int ncolors);

/* c as RGB (palette indices through the xterm palette); false for default. */
bool theme_color_rgb(struct theme_color c, uint8_t rgb[3]);

/* The graph colour at frac in [0, 1] along start -> mid -> end, blended in
 * RGB; when an end is the terminal default, the nearest stop is used. */
struct theme_color theme_gradient(const struct theme *t, double frac);

#endif
