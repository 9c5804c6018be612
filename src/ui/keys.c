/* Keys and resizes: everything waiting is read at once and never blocks,
 * so a burst of keys cannot hold up the collection loop. */
#include "uipriv.h"

#include <ctype.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

static const double intervals[] = { 0.1, 0.25, 0.5, 1, 2, 5, 10 };

/* Follows the terminal's size; true when it changed. Asked of the kernel
 * rather than trusted to SIGWINCH, which may come before the UI listens. */
bool ui_sync_size(struct ui *ui)
{
	struct winsize ws;
	if (ui->cfg.out || ioctl(fileno(ui->out), TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 ||
	    ws.ws_col == 0)
		return false;
	if (ws.ws_row == LINES && ws.ws_col == COLS)
		return false;
	resizeterm(ws.ws_row, ws.ws_col);
	clearok(curscr, TRUE);
	ui->dirty = true;
	return true;
}

static void resize_check(struct ui *ui)
{
	struct signalfd_siginfo si;
	while (read(ui->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	ui_sync_size(ui);
}

static unsigned step_interval(struct ui *ui, int dir)
{
	size_t n = ROASTOP_ARRAY_LEN(intervals), i = 0;
	while (i + 1 < n && intervals[i] < ui->interval - 1e-9)
		i++;
	if (dir > 0 && intervals[i] <= ui->interval + 1e-9 && i + 1 < n)
		i++;
	else if (dir < 0 && i > 0)
		i--;
	ui->interval = intervals[i];
	ui_message(ui, "refresh every %gs", ui->interval);
	return UI_INTERVAL_CHANGED;
}

static void next_theme(struct ui *ui)
{
	size_t cur = 0;
	for (size_t i = 0; i < ui->n_themes; i++)
		if (strcmp(ui->theme_names[i], ui->theme.name) == 0)
			cur = i;
	const char *name = ui->theme_names[(cur + 1) % (ui->n_themes ? ui->n_themes : 1)];
	char err[512];
	if (theme_load(name, &ui->dirs, &ui->theme, err, sizeof(err)) != 0)
		ui_message(ui, "%s; using the default theme", err);
	else
		ui_message(ui, "theme %s", ui->theme.name);
	ui_apply_theme(ui);
}

static void move_sel(struct ui *ui, int delta, bool absolute)
{
	int *sel = &ui->sel[ui->view], n = ui->n_rows[ui->view];
	*sel = absolute ? delta : *sel + delta;
	if (*sel >= n)
		*sel = n - 1;
	if (*sel < 0)
		*sel = 0;
}

static bool filter_key(struct ui *ui, int ch)
{
	char *flt = ui->filter[ui->view];
	size_t len = strlen(flt);
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		ui->filter_edit = false;
	} else if (ch == 27) {
		ui->filter_edit = false;
		flt[0] = '\0';
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len)
			flt[len - 1] = '\0';
	} else if (ch >= 0x20 && ch < 0x7f && len + 1 < UI_FILTER_LEN) {
		flt[len] = (char)ch;
		flt[len + 1] = '\0';
	} else {
		return false;
	}
	ui->sel[ui->view] = ui->top[ui->view] = 0;
	return true;
}

/* View v, or (step +1/-1) the next one offered from v on, round. */
static void set_view_step(struct ui *ui, int v, int step)
{
	int n = UI_VIEW__COUNT;
	v = (v % n + n) % n;
	while (!ui_view_offered(ui, v)) /* no stream: no task view */
		v = ((v + step) % n + n) % n;
	ui->view = (enum ui_view)v;
	ui->help = false;
	ui->worker_open = false;
	ui->runs_entered = ui->view == UI_VIEW_RUNS;
}

void ui_open_view(struct ui *ui, int v)
{
	set_view_step(ui, v, 1);
}

/* The key that opens an offered view (shifted or not), or -1. */
static int view_of_key(const struct ui *ui, int ch)
{
	for (int v = 0; v < UI_VIEW__COUNT; v++) {
		int k = ui_views[v].key;
		if ((k == ch || toupper(k) == ch) && ui_view_offered(ui, v))
			return v;
	}
	return -1;
}

static unsigned view_key(struct ui *ui, int ch)
{
	int page = ui->rows_shown[ui->view] > 1 ? ui->rows_shown[ui->view] - 1 : 1;
	switch (ch) {
	case '\t': ui_open_view(ui, (int)ui->view + 1); break;
	case KEY_BTAB: set_view_step(ui, (int)ui->view - 1, -1); break;
	case KEY_UP: case 'k': move_sel(ui, -1, false); break;
	case KEY_DOWN: case 'j': move_sel(ui, 1, false); break;
	case KEY_PPAGE:
		ui->top[ui->view] -= page; /* the view scrolls with the selection */
		move_sel(ui, -page, false);
		break;
	case KEY_NPAGE: case ' ':
		ui->top[ui->view] += page;
		move_sel(ui, page, false);
		break;
	case KEY_HOME: case 'g': move_sel(ui, 0, true); break;
	case KEY_END: case 'G': move_sel(ui, ui->n_rows[ui->view] - 1, true); break;
	case 's':
		ui->wsort = (ui->wsort + 1) % WSORT__COUNT;
		ui_message(ui, "workers sorted by %s", ui_wsort_names[ui->wsort]);
		break;
	case '/':
		if (!ui_views[ui->view].filtered)
			ui_open_view(ui, UI_VIEW_WORKERS);
		ui->worker_open = false; /* the filter is the table's */
		ui->filter_edit = true;
		break;
	default:
		if (ui_views[ui->view].key_fn && ui_views[ui->view].key_fn(ui, ch))
			break;
		if (view_of_key(ui, ch) < 0)
			return UI_NONE;
		ui_open_view(ui, view_of_key(ui, ch));
	}
	return UI_REDRAW;
}

static unsigned key(struct ui *ui, int ch)
{
	if (ui->filter_edit && filter_key(ui, ch))
		return UI_REDRAW;
	switch (ch) {
	case 'q': case 'Q': return UI_QUIT;
	case 'p': case 'P':
		ui->paused = !ui->paused;
		ui_message(ui, ui->paused ? "display paused (collection goes on); p resumes" : "resumed");
		return UI_REDRAW;
	case 'e': case 'E': return UI_WRITE_NOW | UI_REDRAW;
	case 'w': case 'W': return UI_WRITE_EMITTER | UI_REDRAW;
	case 't': case 'T': next_theme(ui); return UI_REDRAW;
	case '+': case '=': return step_interval(ui, 1) | UI_REDRAW;
	case '-': case '_': return step_interval(ui, -1) | UI_REDRAW;
	case '?': case 'h': case KEY_F(1): ui->help = !ui->help; return UI_REDRAW;
	case 27: /* Esc: the help closes, else what the view has open (a worker's history) */
		if (!ui->help && ui_views[ui->view].key_fn)
			ui_views[ui->view].key_fn(ui, ch);
		ui->help = false;
		return UI_REDRAW;
	case KEY_RESIZE: return UI_REDRAW;
	case 12: ui_invalidate(ui); return UI_REDRAW; /* Ctrl-L */
	default: return view_key(ui, ch);
	}
}

/* A terminal that hung up stays readable for ever: stop watching it, or
 * the loop would spin until SIGHUP is handled. */
static bool hangup_check(struct ui *ui)
{
	struct pollfd p = { .fd = ui->infd, .events = POLLIN };
	if (ui->hungup || poll(&p, 1, 0) <= 0 || !(p.revents & (POLLHUP | POLLERR | POLLNVAL)))
		return ui->hungup;
	epoll_ctl(ui->epfd, EPOLL_CTL_DEL, ui->infd, NULL);
	ui->hungup = true;
	return true;
}

unsigned ui_input(struct ui *ui)
{
	if (!ui)
		return UI_NONE;
	if (hangup_check(ui))
		return UI_NONE;
	unsigned act = UI_NONE;
	resize_check(ui);
	int ch;
	while ((ch = getch()) != ERR) {
		act |= key(ui, ch);
		if (act & UI_QUIT)
			break;
	}
	if (act & UI_REDRAW)
		ui->dirty = true;
	return ui->dirty ? act | UI_REDRAW : act;
}
