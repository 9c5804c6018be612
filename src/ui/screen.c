/* The terminal: ncursesw set-up and teardown, colours from the theme, the
 * resize signal, and the drawing primitives every view uses. */
#include "uipriv.h"

#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <term.h>
#include <unistd.h>

#include "roastop/datadir.h"
#include "roastop/format.h"
#include "roastop/graph.h"

#ifndef ROASTOP_THEMEDIR
#define ROASTOP_THEMEDIR "/usr/local/share/roastop/themes"
#endif

int ui_scratch(struct ui *ui, size_t cells)
{
	if (cells <= ui->scratch)
		return 0;
	double *v = realloc(ui->vals, cells * sizeof(*v));
	if (v)
		ui->vals = v;
	uint32_t *c = realloc(ui->cells, cells * sizeof(*c));
	if (c)
		ui->cells = c;
	if (!v || !c)
		return -1;
	ui->scratch = cells;
	return 0;
}

static attr_t attr_bits(unsigned a)
{
	static const attr_t bits[] = { A_BOLD, A_UNDERLINE, A_REVERSE, A_DIM }; /* TA_ bits */
	attr_t r = 0;
	for (unsigned i = 0; i < ROASTOP_ARRAY_LEN(bits); i++)
		if (a & (1u << i))
			r |= bits[i];
	return r;
}

/* Without colour, structure survives as attributes. */
static const attr_t mono_fallback[TH__COUNT] = {
	[TH_SELECTION] = A_REVERSE, [TH_SELECTION_TEXT] = A_REVERSE, [TH_TAB_ACTIVE] = A_REVERSE,
	[TH_TITLE] = A_BOLD, [TH_WARNING] = A_BOLD, [TH_CRITICAL] = A_BOLD | A_UNDERLINE,
};

static void pair_set(struct ui *ui, int pair, struct theme_color fg, struct theme_color bg)
{
	int f = theme_color_number(fg, ui->ncolors), b = theme_color_number(bg, ui->ncolors);
	init_extended_pair(pair, f, b);
}

void ui_apply_theme(struct ui *ui)
{
	const struct theme *t = &ui->theme;
	for (int e = 0; e < TH__COUNT; e++) {
		attr_t a = attr_bits(t->attr[e]);
		if (!ui->color) {
			ui->attr[e] = a | mono_fallback[e];
			continue;
		}
		bool sel = e == TH_SELECTION || e == TH_SELECTION_TEXT;
		struct theme_color fg = sel ? t->color[TH_SELECTION_TEXT] : t->color[e];
		struct theme_color bg = sel ? t->color[TH_SELECTION] : t->color[TH_BACKGROUND];
		pair_set(ui, e + 1, fg, bg);
		ui->attr[e] = COLOR_PAIR(e + 1) | a | (sel ? attr_bits(t->attr[TH_SELECTION_TEXT]) : 0);
	}
	for (int k = 0; k < UI_GRAD_STEPS; k++) {
		if (!ui->color) {
			ui->grad[k] = 0;
			continue;
		}
		struct theme_color c = theme_gradient(t, (double)k / (UI_GRAD_STEPS - 1));
		pair_set(ui, TH__COUNT + 1 + k, c, t->color[TH_BACKGROUND]);
		ui->grad[k] = COLOR_PAIR(TH__COUNT + 1 + k);
	}
	bkgdset((chtype)(' ' | ui->attr[TH_TEXT]));
	ui->dirty = true;
}

static void dirs_setup(struct ui *ui)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	if (xdg && xdg[0] == '/')
		snprintf(ui->config_dir, sizeof(ui->config_dir), "%s/roastop/themes", xdg);
	else if (home && home[0])
		snprintf(ui->config_dir, sizeof(ui->config_dir), "%s/.config/roastop/themes", home);
	/* shipped beside the program: the source tree's, the wheel's, make install's */
	if (datadir_find(DATADIR_THEMES, NULL, ui->source_dir, sizeof(ui->source_dir)) != 0)
		ui->source_dir[0] = '\0';
	ui->dirs.config = ui->config_dir[0] ? ui->config_dir : NULL;
	ui->dirs.install = ui->cfg.theme_install_dir ? ui->cfg.theme_install_dir : ROASTOP_THEMEDIR;
	ui->dirs.source = ui->source_dir[0] ? ui->source_dir : NULL;
}

static void theme_setup(struct ui *ui)
{
	char err[512];
	dirs_setup(ui);
	ui->n_themes = theme_list(&ui->dirs, ui->theme_names, UI_MAX_THEMES);
	const char *name = ui->cfg.theme ? ui->cfg.theme : "default";
	if (theme_load(name, &ui->dirs, &ui->theme, err, sizeof(err)) != 0)
		ui_message(ui, "%s; using the default theme", err);
}

/* A terminal that cannot place the cursor cannot hold a dashboard. */
static int term_check(FILE *out, char *err, size_t errsz)
{
	int rc = 0;
	const char *term = getenv("TERM");
	if (!term || !term[0]) {
		snprintf(err, errsz, "TERM is not set");
		return -1;
	}
	if (setupterm(NULL, fileno(out), &rc) != OK) {
		snprintf(err, errsz, "unknown terminal type TERM=%.64s", term);
		return -1;
	}
	char *cup = tigetstr("cup");
	bool ok = cup && cup != (char *)-1;
	del_curterm(cur_term);
	if (!ok) {
		snprintf(err, errsz, "terminal TERM=%.64s has no cursor addressing", term);
		return -1;
	}
	return 0;
}

static int files_setup(struct ui *ui, char *err, size_t errsz)
{
	ui->out = ui->cfg.out ? ui->cfg.out : stdout;
	if (!ui->cfg.out && !isatty(fileno(ui->out))) {
		snprintf(err, errsz, "standard output is not a terminal");
		return -1;
	}
	ui->in = ui->cfg.in;
	if (!ui->in) {
		ui->in = fopen("/dev/tty", "r");
		ui->own_in = ui->in != NULL;
	}
	if (!ui->in)
		ui->in = stdin;
	ui->infd = fileno(ui->in);
	return term_check(ui->out, err, errsz);
}

/* Keys and SIGWINCH behind one descriptor for the app's poll(). */
static int events_setup(struct ui *ui)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	ui->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	ui->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ui->sigfd < 0 || ui->epfd < 0)
		return -1;
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = ui->sigfd };
	if (epoll_ctl(ui->epfd, EPOLL_CTL_ADD, ui->sigfd, &ev) != 0)
		return -1;
	ev.data.fd = ui->infd;
	/* /dev/null (the benchmark) cannot be watched: keys simply never come */
	if (epoll_ctl(ui->epfd, EPOLL_CTL_ADD, ui->infd, &ev) != 0 && errno != EPERM)
		return -1;
	return 0;
}

static int curses_setup(struct ui *ui, char *err, size_t errsz)
{
	ui->scr = newterm(NULL, ui->out, ui->in);
	if (!ui->scr) {
		snprintf(err, errsz, "cannot initialise the terminal");
		return -1;
	}
	set_term(ui->scr);
	if (ui->cfg.out && ui->cfg.cols > 0 && ui->cfg.rows > 0)
		resizeterm(ui->cfg.rows, ui->cfg.cols);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	ui->color = !ui->cfg.no_color && has_colors();
	if (ui->color) {
		start_color();
		use_default_colors();
		ui->ncolors = COLORS;
	}
	return 0;
}

/* Messages written to stderr while the screen is up would land in the
 * middle of it and stay until the next full repaint: hold them in a file
 * and print them when the terminal is restored. */
static void stderr_hold(struct ui *ui)
{
	ui->saved_stderr = -1;
	if (ui->cfg.out || !isatty(STDERR_FILENO))
		return;
	ui->held = tmpfile();
	if (!ui->held)
		return;
	fflush(stderr);
	ui->saved_stderr = dup(STDERR_FILENO);
	if (ui->saved_stderr < 0 || dup2(fileno(ui->held), STDERR_FILENO) < 0) {
		fclose(ui->held);
		ui->held = NULL;
	}
}

static void stderr_release(struct ui *ui)
{
	if (ui->saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(ui->saved_stderr, STDERR_FILENO);
	close(ui->saved_stderr);
	ui->saved_stderr = -1;
	char buf[4096];
	size_t n;
	rewind(ui->held);
	while ((n = fread(buf, 1, sizeof(buf), ui->held)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(ui->held);
	ui->held = NULL;
}

struct ui *ui_open(const struct ui_config *cfg, char *err, size_t errsz)
{
	struct ui *ui = calloc(1, sizeof(*ui));
	if (!ui) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	ui->cfg = *cfg;
	ui->epfd = ui->sigfd = ui->saved_stderr = -1;
	setlocale(LC_CTYPE, "");
	ui->ascii = cfg->ascii || strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	ui->interval = cfg->interval > 0 ? cfg->interval : UI_DEFAULT_INTERVAL;
	if (files_setup(ui, err, errsz) != 0 || curses_setup(ui, err, errsz) != 0) {
		ui_close(ui);
		return NULL;
	}
	if (events_setup(ui) != 0) {
		snprintf(err, errsz, "cannot watch the terminal: %s", strerror(errno));
		ui_close(ui);
		return NULL;
	}
	ui_sync_size(ui); /* a resize before the signal was blocked is lost */
	stderr_hold(ui);
	theme_setup(ui);
	ui_apply_theme(ui);
	return ui;
}

void ui_close(struct ui *ui)
{
	if (!ui)
		return;
	if (ui->scr) {
		endwin();
		delscreen(ui->scr);
	}
	stderr_release(ui);
	if (ui->epfd >= 0)
		close(ui->epfd);
	if (ui->sigfd >= 0)
		close(ui->sigfd);
	if (ui->own_in)
		fclose(ui->in);
	free(ui->vals);
	free(ui->cells);
	free(ui->idx);
	free(ui->wrows);
	free(ui);
}

int ui_fd(const struct ui *ui)
{
	return ui ? ui->epfd : -1;
}

void scr_fill(struct ui *ui, struct rect r)
{
	attrset(ui->attr[TH_TEXT]);
	for (int y = r.y; y < r.y + r.h; y++)
		mvhline(y, r.x, ' ', r.w);
}

/* Length of the UTF-8 sequence at s, 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = s[0] >= 0xF0 && s[0] < 0xF5 ? 4 : (s[0] >= 0xE0 ? 3 : (s[0] >= 0xC2 ? 2 : 0));
	if (s[0] >= 0xF5)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

size_t text_width(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);
		p += n ? n : 1;
		w++;
	}
	return w;
}

/* Copies at most maxw characters of s into buf, control bytes, invalid
 * UTF-8 (and, in ASCII mode, anything not ASCII) as '?'. */
static int sanitize(const struct ui *ui, const char *s, int maxw, char *buf, size_t bufsz)
{
	size_t o = 0;
	int w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && w < maxw && o + 5 < bufsz; w++) {
		size_t n = utf8_len(p);
		if (n == 1 && *p >= 0x20 && *p != 0x7f) {
			buf[o++] = (char)*p;
		} else if (n > 1 && !ui->ascii) {
			memcpy(buf + o, p, n);
			o += n;
		} else {
			buf[o++] = '?';
		}
		p += n ? n : 1;
	}
	buf[o] = '\0';
	return w;
}

int scr_text(struct ui *ui, int y, int x, int maxw, enum theme_elem e, const char *s)
{
	if (maxw <= 0 || y < 0 || y >= LINES || x >= COLS)
		return 0;
	if (x + maxw > COLS)
		maxw = COLS - x;
	char buf[1024];
	int w = sanitize(ui, s, maxw, buf, sizeof(buf));
	attrset(ui->attr[e]);
	mvaddstr(y, x, buf);
	return w;
}

int scr_printf(struct ui *ui, int y, int x, int maxw, enum theme_elem e, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return scr_text(ui, y, x, maxw, e, buf);
}

void scr_cells(struct ui *ui, int y, int x, const uint32_t *cp, int w, attr_t a)
{
	if (y < 0 || y >= LINES || x >= COLS)
		return;
	if (x + w > COLS)
		w = COLS - x;
	char buf[2048];
	size_t o = 0;
	for (int i = 0; i < w && o + 5 < sizeof(buf); i++) {
		uint32_t c = cp[i];
		if (ui->ascii && c >= 0x80)
			c = '?';
		o += graph_utf8(c, buf + o);
	}
	buf[o] = '\0';
	attrset(a);
	mvaddstr(y, x, buf);
}

void scr_box(struct ui *ui, struct rect r, const char *title)
{
	if (r.w < 2 || r.h < 2)
		return;
	uint32_t tl = ui->ascii ? '+' : 0x256D, tr = ui->ascii ? '+' : 0x256E;
	uint32_t bl = ui->ascii ? '+' : 0x2570, br = ui->ascii ? '+' : 0x256F;
	uint32_t hz = ui->ascii ? '-' : 0x2500, vt = ui->ascii ? '|' : 0x2502;
	uint32_t line[1024];
	int w = r.w > 1024 ? 1024 : r.w;
	for (int i = 0; i < w; i++)
		line[i] = hz;
	line[0] = tl;
	line[w - 1] = tr;
	scr_cells(ui, r.y, r.x, line, w, ui->attr[TH_BORDER]);
	line[0] = bl;
	line[w - 1] = br;
	scr_cells(ui, r.y + r.h - 1, r.x, line, w, ui->attr[TH_BORDER]);
	for (int y = r.y + 1; y < r.y + r.h - 1; y++) {
		scr_cells(ui, y, r.x, &vt, 1, ui->attr[TH_BORDER]);
		scr_cells(ui, y, r.x + r.w - 1, &vt, 1, ui->attr[TH_BORDER]);
	}
	if (title && title[0] && r.w > 6)
		scr_printf(ui, r.y, r.x + 2, r.w - 4, TH_TITLE, " %s ", title);
}

void scr_scale(struct ui *ui, int y, int x, enum theme_elem e, double v, const char *unit)
{
	char t[FMT_LEN], lab[UI_SCALE_W + 1];
	format_axis(t, v, unit);
	snprintf(lab, sizeof(lab), "%*.*s", UI_SCALE_W - 1, UI_SCALE_W - 1, t);
	scr_text(ui, y, x, UI_SCALE_W, e, lab);
}

void scr_mark(struct ui *ui, uint32_t *cells, int w, int h, double v, double vmax)
{
	if (!(v > 0) || !(v <= vmax))
		return;
	int row = h - 1 - (int)floor(v / vmax * h - 1e-9);
	if (row < 0)
		row = 0;
	for (int x = 0; x < w; x += 2)
		if (cells[row * w + x] == ' ')
			cells[row * w + x] = ui->ascii ? '-' : 0x2504;
}

void scr_graph(struct ui *ui, int y, int x, int w, int h, const uint32_t *cells)
{
	for (int row = 0; row < h; row++) {
		int k = h > 1 ? (h - 1 - row) * (UI_GRAD_STEPS - 1) / (h - 1) : UI_GRAD_STEPS / 2;
		attr_t a = ui->color ? ui->grad[k] : ui->attr[TH_VALUE];
		scr_cells(ui, y + row, x, cells + (size_t)row * (size_t)w, w, a);
	}
}
