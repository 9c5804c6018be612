/* Theme files: "key = value" lines (themes/README.md). The parser treats
 * the file as hostile: bounded size and line length, every key checked,
 * the first error named by file, line and key. */
#include "roastop/theme.h"
#include "roastop/strutil.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const keys[TH__COUNT] = {
	[TH_BACKGROUND] = "background",
	[TH_TEXT] = "text",
	[TH_DIM] = "dim",
	[TH_TITLE] = "title",
	[TH_BORDER] = "border",
	[TH_LABEL] = "label",
	[TH_VALUE] = "value",
	[TH_TAB] = "tab",
	[TH_TAB_ACTIVE] = "tab_active",
	[TH_GRAPH_START] = "graph_start",
	[TH_GRAPH_MID] = "graph_mid",
	[TH_GRAPH_END] = "graph_end",
	[TH_BAR_CPU] = "bar_cpu",
	[TH_BAR_NONCPU] = "bar_noncpu",
	[TH_MARKER] = "marker",
	[TH_OK] = "ok",
	[TH_WARNING] = "warning",
	[TH_CRITICAL] = "critical",
	[TH_SELECTION] = "selection",
	[TH_SELECTION_TEXT] = "selection_text",
};

/* Kept identical to themes/default.theme (a unit test compares them):
 * mid-saturation colours on the terminal's own background read on dark
 * and light terminals alike. */
static const char default_text[] = "name = default\n"
				   "background = default\n"
				   "text = default\n"
				   "dim = 244\n"
				   "title = default bold\n"
				   "border = #5f87af\n"
				   "label = #5f87af\n"
				   "value = default bold\n"
				   "tab = 244\n"
				   "tab_active = #0087d7 bold reverse\n"
				   "graph_start = #00af87\n"
				   "graph_mid = #d7af00\n"
				   "graph_end = #d7005f\n"
				   "bar_cpu = #00af5f\n"
				   "bar_noncpu = #d78700\n"
				   "marker = #af5fd7 bold\n"
				   "ok = #00af5f\n"
				   "warning = #d78700 bold\n"
				   "critical = #d7005f bold\n"
				   "selection = #0087d7\n"
				   "selection_text = #ffffff bold\n";

/* xterm's 16 standard colours, as most terminals ship them */
static const uint8_t base16[16][3] = {
	{ 0, 0, 0 },	   { 205, 0, 0 },   { 0, 205, 0 },   { 205, 205, 0 },
	{ 0, 0, 238 },	   { 205, 0, 205 }, { 0, 205, 205 }, { 229, 229, 229 },
	{ 127, 127, 127 }, { 255, 0, 0 },   { 0, 255, 0 },   { 255, 255, 0 },
	{ 92, 92, 255 },   { 255, 0, 255 }, { 0, 255, 255 }, { 255, 255, 255 },
};

static const char *const color_names[16] = {
	"black",	"red",		"green",	  "yellow",
	"blue",		"magenta",	"cyan",		  "white",
	"bright_black", "bright_red",	"bright_green",	  "bright_yellow",
	"bright_blue",	"bright_magenta", "bright_cyan",  "bright_white",
};

const char *theme_key(enum theme_elem e)
{
	return (unsigned)e < TH__COUNT ? keys[e] : NULL;
}

/* The element of a key in theme files, or -1. */
static int theme_elem_of(const char *key, size_t len)
{
	for (int i = 0; i < TH__COUNT; i++)
		if (strlen(keys[i]) == len && memcmp(keys[i], key, len) == 0)
			return i;
	return -1;
}

static bool word_is(const char *s, size_t len, const char *w)
{
	return strlen(w) == len && strncmp(s, w, len) == 0;
}

static bool parse_rgb(const char *s, size_t len, struct theme_color *out)
{
	if (len != 7 || s[0] != '#')
		return false;
	int v[6];
	for (int i = 0; i < 6; i++)
		if ((v[i] = strutil_hexval(s[1 + i])) < 0)
			return false;
	*out = (struct theme_color){ .kind = TC_RGB,
				     .r = (uint8_t)(v[0] * 16 + v[1]),
				     .g = (uint8_t)(v[2] * 16 + v[3]),
				     .b = (uint8_t)(v[4] * 16 + v[5]) };
	return true;
}

static bool parse_index(const char *s, size_t len, struct theme_color *out)
{
	if (len == 0 || len > 3)
		return false;
	int n = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		n = n * 10 + (s[i] - '0');
	}
	if (n > 255)
		return false;
	*out = (struct theme_color){ .kind = TC_INDEX, .index = (uint8_t)n };
	return true;
}

/* names accept '-' for '_' and "gray"/"grey" for bright_black */
static bool parse_name(const char *s, size_t len, struct theme_color *out)
{
	char buf[20];
	if (len >= sizeof(buf))
		return false;
	for (size_t i = 0; i < len; i++)
		buf[i] = s[i] == '-' ? '_' : (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
	buf[len] = '\0';
	if (strcmp(buf, "default") == 0) {
		*out = (struct theme_color){ .kind = TC_DEFAULT };
		return true;
	}
	if (strcmp(buf, "gray") == 0 || strcmp(buf, "grey") == 0)
		memcpy(buf, "bright_black", 13);
	for (int i = 0; i < 16; i++) {
		if (strcmp(buf, color_names[i]) == 0) {
			*out = (struct theme_color){ .kind = TC_INDEX, .index = (uint8_t)i };
			return true;
		}
	}
	return false;
}

bool theme_parse_color(const char *s, size_t len, struct theme_color *out)
{
	return parse_rgb(s, len, out) || parse_index(s, len, out) || parse_name(s, len, out);
}

static unsigned attr_of(const char *s, size_t len)
{
	static const char *const names[] = { "bold", "underline", "reverse", "dim" }; /* TA_ bits */
	for (unsigned i = 0; i < ROASTOP_ARRAY_LEN(names); i++)
		if (word_is(s, len, names[i]))
			return 1u << i;
	return 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static void trim(const char **s, size_t *len)
{
	while (*len && is_space(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_space((*s)[*len - 1]))
		(*len)--;
}

struct parse_ctx {
	struct theme *t;
	const char *file;
	unsigned line;
	char *err;
	size_t errsz;
};

/* The untrusted key and value echoed shown: at most 40 bytes each. */
static int fail(struct parse_ctx *c, const char *key, size_t klen, const char *what,
		const char *val, size_t vlen)
{
	char k[48], v[48];
	if (key)
		snprintf(c->err, c->errsz, "%s:%u: key '%s': %s '%s'", c->file, c->line,
			 strutil_shown(k, 40, key, klen), what, strutil_shown(v, 40, val, vlen));
	else
		snprintf(c->err, c->errsz, "%s:%u: %s '%s'", c->file, c->line, what,
			 strutil_shown(v, 40, val, vlen));
	return -1;
}

static int parse_name_value(struct parse_ctx *c, const char *v, size_t vlen)
{
	if (vlen == 0 || vlen >= THEME_NAME_LEN)
		return fail(c, "name", 4, "needs 1 to 63 bytes, got", v, vlen);
	memcpy(c->t->name, v, vlen);
	c->t->name[vlen] = '\0';
	return 0;
}

/* "COLOUR [ATTR...]" for element e */
static int parse_elem_value(struct parse_ctx *c, int e, const char *k, size_t klen, const char *v,
			    size_t vlen)
{
	size_t w = 0;
	while (w < vlen && !is_space(v[w]))
		w++;
	struct theme_color col;
	if (!theme_parse_color(v, w, &col))
		return fail(c, k, klen, "bad colour (use #rrggbb, 0-255 or a name)", v, w);
	unsigned attr = 0;
	size_t i = w;
	while (i < vlen) {
		while (i < vlen && is_space(v[i]))
			i++;
		size_t s = i;
		while (i < vlen && !is_space(v[i]))
			i++;
		if (i == s)
			break;
		unsigned a = attr_of(v + s, i - s);
		if (!a)
			return fail(c, k, klen, "unknown attribute (bold, underline, reverse, dim)",
				    v + s, i - s);
		attr |= a;
	}
	c->t->color[e] = col;
	c->t->attr[e] = attr;
	return 0;
}

static int parse_line(struct parse_ctx *c, const char *s, size_t len)
{
	trim(&s, &len);
	if (len == 0 || s[0] == '#')
		return 0;
	const char *eq = memchr(s, '=', len);
	if (!eq)
		return fail(c, NULL, 0, "expected 'key = value', got", s, len);
	const char *k = s, *v = eq + 1;
	size_t klen = (size_t)(eq - s), vlen = len - klen - 1;
	trim(&k, &klen);
	trim(&v, &vlen);
	if (klen == 0)
		return fail(c, NULL, 0, "missing key before '=' in", s, len);
	if (word_is(k, klen, "name"))
		return parse_name_value(c, v, vlen);
	int e = theme_elem_of(k, klen);
	if (e < 0)
		return fail(c, k, klen, "unknown key; value", v, vlen);
	return parse_elem_value(c, e, k, klen, v, vlen);
}

static int parse_all(struct parse_ctx *c, const char *text, size_t len)
{
	if (len > THEME_MAX_FILE) {
		snprintf(c->err, c->errsz, "%s: larger than %u bytes", c->file, THEME_MAX_FILE);
		return -1;
	}
	size_t i = 0;
	while (i < len) {
		c->line++;
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		if (end - i > THEME_MAX_LINE) {
			snprintf(c->err, c->errsz, "%s:%u: line longer than %u bytes", c->file, c->line,
				 THEME_MAX_LINE);
			return -1;
		}
		if (memchr(text + i, '\0', end - i))
			return fail(c, NULL, 0, "NUL byte in line", "", 0);
		if (parse_line(c, text + i, end - i) != 0)
			return -1;
		i = end + 1;
	}
	return 0;
}

int theme_parse(struct theme *t, const char *text, size_t len, const char *file, char *err,
		size_t errsz)
{
	struct parse_ctx c = { .t = t, .file = file ? file : "theme", .err = err, .errsz = errsz };
	if (parse_all(&c, text, len) == 0)
		return 0;
	theme_default(t);
	return -1;
}

void theme_default(struct theme *t)
{
	memset(t, 0, sizeof(*t));
	char err[8];
	struct parse_ctx c = { .t = t, .file = "built-in", .err = err, .errsz = sizeof(err) };
	(void)parse_all(&c, default_text, sizeof(default_text) - 1);
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* NAME or PATH to a file (theme_load): 0 and the path in out, or -1. */
static int theme_find(const char *name, const struct theme_dirs *dirs, char *out, size_t outsz)
{
	if (!name || !name[0])
		return -1;
	if (strchr(name, '/') || has_suffix(name, ".theme")) {
		if (snprintf(out, outsz, "%s", name) >= (int)outsz)
			return -1;
		return is_file(out) ? 0 : -1;
	}
	const char *order[3] = { dirs ? dirs->config : NULL, dirs ? dirs->install : NULL,
				 dirs ? dirs->source : NULL };
	for (int i = 0; i < 3; i++) {
		if (!order[i] || !order[i][0])
			continue;
		int n = snprintf(out, outsz, "%s/%s.theme", order[i], name);
		if (n > 0 && (size_t)n < outsz && is_file(out))
			return 0;
	}
	return -1;
}

/* Reads at most THEME_MAX_FILE + 1 bytes, so a huge file is refused. */
static char *read_small(const char *path, size_t *len, char *err, size_t errsz)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return NULL;
	}
	char *buf = malloc(THEME_MAX_FILE + 1);
	size_t n = buf ? fread(buf, 1, THEME_MAX_FILE + 1, f) : 0;
	bool bad = ferror(f);
	fclose(f);
	if (!buf || bad) {
		snprintf(err, errsz, "%s: cannot read", path);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

int theme_load(const char *name, const struct theme_dirs *dirs, struct theme *t, char *err,
	       size_t errsz)
{
	theme_default(t);
	char path[4096];
	if (theme_find(name, dirs, path, sizeof(path)) != 0) {
		if (name && strcmp(name, "default") == 0)
			return 0;
		snprintf(err, errsz, "theme '%s' not found (a name in the theme directories or a "
				     "path to a .theme file)", name ? name : "");
		return -1;
	}
	size_t len = 0;
	char *text = read_small(path, &len, err, errsz);
	if (!text)
		return -1;
	int rc = theme_parse(t, text, len, path, err, errsz);
	free(text);
	if (rc == 0 && strcmp(t->name, "default") == 0 && strcmp(name, "default") != 0) {
		/* a file without "name =" is called after its stem */
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		size_t n = strcspn(base, ".");
		if (n && n < THEME_NAME_LEN) {
			memcpy(t->name, base, n);
			t->name[n] = '\0';
		}
	}
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

static size_t list_dir(const char *dir, char names[][THEME_NAME_LEN], size_t n, size_t max)
{
	DIR *d = dir && dir[0] ? opendir(dir) : NULL;
	if (!d)
		return n;
	struct dirent *de;
	while (n < max && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (!has_suffix(de->d_name, ".theme") || len - 6 == 0 || len - 6 >= THEME_NAME_LEN)
			continue;
		memcpy(names[n], de->d_name, len - 6);
		names[n][len - 6] = '\0';
		n++;
	}
	closedir(d);
	return n;
}

size_t theme_list(const struct theme_dirs *dirs, char names[][THEME_NAME_LEN], size_t max)
{
	if (max == 0)
		return 0;
	snprintf(names[0], THEME_NAME_LEN, "default");
	size_t n = 1;
	if (dirs) {
		n = list_dir(dirs->config, names, n, max);
		n = list_dir(dirs->install, names, n, max);
		n = list_dir(dirs->source, names, n, max);
	}
	qsort(names + 1, n - 1, THEME_NAME_LEN, cmp_names);
	size_t out = 1;
	for (size_t i = 1; i < n; i++)
		if (strcmp(names[i], "default") != 0 && strcmp(names[i], names[out - 1]) != 0)
			memmove(names[out++], names[i], THEME_NAME_LEN);
	return out;
}

static void palette_rgb(int i, uint8_t rgb[3])
{
	static const uint8_t level[6] = { 0, 95, 135, 175, 215, 255 };
	if (i < 16) {
		memcpy(rgb, base16[i], 3);
	} else if (i < 232) {
		i -= 16;
		rgb[0] = level[i / 36];
		rgb[1] = level[(i / 6) % 6];
		rgb[2] = level[i % 6];
	} else {
		rgb[0] = rgb[1] = rgb[2] = (uint8_t)(8 + 10 * (i - 232));
	}
}

bool theme_color_rgb(struct theme_color c, uint8_t rgb[3])
{
	if (c.kind == TC_DEFAULT)
		return false;
	if (c.kind == TC_INDEX) {
		palette_rgb(c.index, rgb);
		return true;
	}
	rgb[0] = c.r;
	rgb[1] = c.g;
	rgb[2] = c.b;
	return true;
}

/* squared distance, weighted roughly by the eye's sensitivity */
static long dist(const uint8_t a[3], const uint8_t b[3])
{
	long dr = a[0] - b[0], dg = a[1] - b[1], db = a[2] - b[2];
	return 3 * dr * dr + 4 * dg * dg + 2 * db * db;
}

static int nearest(const uint8_t rgb[3], int from, int to)
{
	int best = from;
	long bd = -1;
	for (int i = from; i < to; i++) {
		uint8_t p[3];
		palette_rgb(i, p);
		long d = dist(rgb, p);
		if (bd < 0 || d < bd) {
			bd = d;
			best = i;
		}
	}
	return best;
}

int theme_color_number(struct theme_color c, int ncolors)
{
	uint8_t rgb[3];
	if (c.kind == TC_DEFAULT || ncolors < 8)
		return -1;
	theme_color_rgb(c, rgb);
	if (ncolors >= (1 << 24))
		return (rgb[0] << 16) | (rgb[1] << 8) | rgb[2];
	if (c.kind == TC_INDEX && c.index < ncolors)
		return c.index;
	if (ncolors >= 256)
		return nearest(rgb, 16, 256); /* 0-15 vary between terminals */
	return nearest(rgb, 0, ncolors >= 16 ? 16 : 8);
}

static struct theme_color blend(struct theme_color a, struct theme_color b, double f)
{
	uint8_t x[3], y[3];
	bool ha = theme_color_rgb(a, x), hb = theme_color_rgb(b, y);
	if (!ha || !hb)
		return f < 0.5 ? a : b;
	struct theme_color c = { .kind = TC_RGB };
	c.r = (uint8_t)lround(x[0] + (y[0] - x[0]) * f);
	c.g = (uint8_t)lround(x[1] + (y[1] - x[1]) * f);
	c.b = (uint8_t)lround(x[2] + (y[2] - x[2]) * f);
	return c;
}

struct theme_color theme_gradient(const struct theme *t, double frac)
{
	frac = frac > 0 ? fmin(frac, 1) : 0; /* NaN: 0 */
	if (frac <= 0.5)
		return blend(t->color[TH_GRAPH_START], t->color[TH_GRAPH_MID], frac * 2);
	return blend(t->color[TH_GRAPH_MID], t->color[TH_GRAPH_END], (frac - 0.5) * 2);
}
