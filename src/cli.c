/* Option table + a small reentrant parser: --opt value, --opt=value, "--".
 * Every value is checked the moment it is read, so an accepted struct
 * app_config is within the documented ranges whatever argv held. */
#include "roastop/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "roastop/strutil.h"

enum okind {
	O_FLAG,
	O_HELP,
	O_VERSION,
	O_STR, /* non-empty, bounded: paths, names, patterns */
	O_WORD, /* O_STR without spaces or control bytes: URL paths */
	O_URL,
	O_REAL,
	O_INT,
	O_LISTEN,
	O_SERVE,
	O_HEADER,
};

enum orange {
	R_CLOSED, /* [lo, hi] */
	R_OPEN_LO, /* (lo, hi] */
	R_OR_ZERO, /* 0 or [lo, hi]: 0 switches the feature off */
};

struct option_def {
	const char *name; /* long name without "--"; NULL: a heading of the help */
	char short_name;
	enum okind kind;
	size_t off;
	const char *arg; /* the value's name in the help */
	const char *help; /* lines after the first indented to its column */
	double lo, hi;
	enum orange range;
};

#define OFF(f) offsetof(struct app_config, f)

/* The options in the order of the help, under its headings. */
static const struct option_def options[] = {
	{ .help = "Scheduler:" },
	{ "scheduler", 0, O_URL, OFF(scheduler_url), .arg = "URL",
	  .help = "Dask dashboard URL (default " CLI_DEFAULT_SCHEDULER ",\n"
		  "or $ROASTOP_SCHEDULER)" },
	{ "interval", 0, O_REAL, OFF(interval), "SECONDS", "poll interval, 0.1 to 3600 (default 1)",
	  0.1, 3600, R_CLOSED },
	{ "dashboard-prefix", 0, O_WORD, OFF(dashboard_prefix), .arg = "PATH",
	  .help = "the scheduler's --dashboard-prefix" },
	{ "cacert", 0, O_STR, OFF(cacert), .arg = "FILE",
	  .help = "CA bundle for an https scheduler" },
	{ "insecure", 0, O_FLAG, OFF(insecure),
	  .help = "do not verify the scheduler's certificate" },
	{ "task-stream", 0, O_FLAG, OFF(task_stream),
	  .help = "follow the scheduler's /eventstream: per-task\n"
		  "detail at a cost to the scheduler per task\n(docs/scheduler.md)" },
	{ "header", 0, O_HEADER, 0, .arg = "'Name: value'",
	  .help = "extra HTTP header (repeatable, at most 16)" },
	{ .help = "Chunk events (UDP from the Python emitter):" },
	{ "listen", 0, O_LISTEN, 0, .arg = "HOST:PORT",
	  .help = "listen address (default 127.0.0.1:8790, or the port\n"
		  "last used, or another free one, remembered;\n"
		  "[IPv6]:PORT; port 0 picks a free port)" },
	{ "key-file", 0, O_STR, OFF(key_file), .arg = "FILE",
	  .help = "HMAC key the datagrams are signed with (default\n"
		  "~/.config/roastop/key, made on first use)" },
	{ "new-key", 0, O_FLAG, OFF(new_key), .help = "replace the key file with a fresh key" },
	{ "no-auth", 0, O_FLAG, OFF(no_auth), .help = "accept unsigned datagrams" },
	{ "rcvbuf", 0, O_INT, OFF(rcvbuf), "BYTES", "socket receive buffer, 4096 to 1073741824",
	  CLI_MIN_RCVBUF, CLI_MAX_RCVBUF, R_CLOSED },
	{ .help = "HTTP (runs, metrics.json, OpenMetrics; bearer token = ROASTOP_KEY):" },
	{ "serve", 0, O_SERVE, 0, .arg = "HOST:PORT|off",
	  .help = "serve over TCP (default: the --listen address;\nin a replay only when given)" },
	{ "serve-metrics-open", 0, O_FLAG, OFF(serve_metrics_open),
	  .help = "/metrics without the token (the rest keeps it)" },
	{ .help = "Recording and replay:" },
	{ "record", 0, O_STR, OFF(record_path), .arg = "FILE",
	  .help = "write every event to FILE (JSON lines)" },
	{ "replay", 0, O_STR, OFF(replay_path), .arg = "FILE",
	  .help = "replay a recording instead (- = standard input)" },
	/* A non-zero speed below 1/1000 would turn one recorded second into
	 * hours of waiting: a typo, not a wish. */
	{ "speed", 0, O_REAL, OFF(speed), "X",
	  "replay speed factor: 0 = as fast as possible,\n"
	  "or 0.001 to 1000000 (default 1); needs --replay",
	  1e-3, 1e6, R_OR_ZERO },
	{ "demo", 0, O_FLAG, OFF(demo), .help = "replay the demo recording shipped with roastop" },
	{ .help = "Measurement:" },
	{ "output", 0, O_STR, OFF(output_dir), .arg = "DIR",
	  .help = "measurement directory\n(default roastop-measurements; a dir per run)" },
	{ "checkpoint", 0, O_REAL, OFF(checkpoint_interval), "SECONDS",
	  "rewrite it every SECONDS: 0 = never, or 1 to 3600\n(default 10)", 1, 3600, R_OR_ZERO },
	{ "processor-prefix", 0, O_STR, OFF(processor_prefix), .arg = "PATTERN",
	  .help = "task prefixes counted as processor work" },
	{ .help = "Running:" },
	{ "headless", 0, O_FLAG, OFF(headless), .help = "no screen; print progress lines" },
	{ "duration", 0, O_REAL, OFF(duration), "SECONDS",
	  "stop after SECONDS (up to 1e7; default: never)", 0, 1e7, R_OPEN_LO },
	{ "exit-on-run-end", 0, O_FLAG, OFF(exit_on_run_end),
	  .help = "stop when the analysis reports its end (and the\n"
		  "collector has fetched it, or 3 s later)\n(or is marked incomplete)" },
	{ "run-idle-timeout", 0, O_REAL, OFF(run_idle_timeout), "SECONDS",
	  "a run with no datagram for SECONDS is\nincomplete: 0 = never, or 1 to 1e7 (default 300)",
	  1, 1e7, R_OR_ZERO },
	{ "theme", 0, O_STR, OFF(theme), .arg = "NAME|PATH", .help = "colour theme" },
	{ "no-color", 0, O_FLAG, OFF(no_color), .help = "no colours (also when NO_COLOR is set)" },
	{ "ascii", 0, O_FLAG, OFF(ascii), .help = "ASCII graphs and borders only" },
	{ "help", 'h', O_HELP, 0, .help = "print this help and exit" },
	{ "version", 'V', O_VERSION, 0, .help = "print the version and exit" },
};

struct parser {
	int argc;
	char *const *argv;
	int i; /* the argument being read */
	struct app_config *o;
	bool scheduler_from_cli;
	char *err;
	size_t errsz;
};

enum { SHOWN_MAX = 64, SHOWN_SZ = SHOWN_MAX + 4 };

#define STR_(x) #x
#define STR(x) STR_(x)

void cli_defaults(struct app_config *o)
{
	memset(o, 0, sizeof(*o));
	o->scheduler_url = CLI_DEFAULT_SCHEDULER;
	snprintf(o->listen_host, sizeof(o->listen_host), "%s", CLI_DEFAULT_LISTEN_HOST);
	o->listen_port = CLI_DEFAULT_LISTEN_PORT;
	o->interval = CLI_DEFAULT_INTERVAL;
	o->speed = 1.0;
	o->checkpoint_interval = CLI_DEFAULT_CHECKPOINT;
	o->run_idle_timeout = CLI_DEFAULT_RUN_IDLE_TIMEOUT;
}

/* At most n bytes of s echoed in an error (strutil_shown), so the message
 * stays one short line whatever was typed. */
static const char *shown(const char *s, size_t n, char buf[SHOWN_SZ])
{
	return strutil_shown(buf, SHOWN_MAX, s, n);
}

__attribute__((format(printf, 2, 3)))
static enum cli_result fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, p->errsz, fmt, ap);
	va_end(ap);
	return CLI_ERROR;
}

static const struct option_def *find_long(const char *name, size_t len)
{
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(options); i++)
		if (options[i].name && strlen(options[i].name) == len &&
		    memcmp(options[i].name, name, len) == 0)
			return &options[i];
	return NULL;
}

static const struct option_def *find_short(char c)
{
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(options); i++)
		if (options[i].short_name && options[i].short_name == c)
			return &options[i];
	return NULL;
}

/* ctype.h follows the locale; arguments are judged by ASCII rules. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_ctl_or_space(unsigned char c)
{
	return c <= 0x20 || c == 0x7f;
}

enum num_status { NUM_OK, NUM_SYNTAX, NUM_RANGE };

/* [+-]? (D+ [.D*] | .D+) ([eE] [+-]? D+)?: what strtod reads, minus hex,
 * inf, nan and the leading spaces it would skip. */
static bool decimal_syntax(const char *s)
{
	size_t i = 0, digits = 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	for (; is_digit(s[i]); i++)
		digits++;
	if (s[i] == '.')
		for (i++; is_digit(s[i]); i++)
			digits++;
	if (digits == 0)
		return false;
	if (s[i] == 'e' || s[i] == 'E') {
		i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		if (!is_digit(s[i]))
			return false;
		while (is_digit(s[i]))
			i++;
	}
	return s[i] == '\0';
}

static enum num_status read_real(const char *s, double *out)
{
	if (!decimal_syntax(s))
		return NUM_SYNTAX;
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (*end != '\0')
		return NUM_SYNTAX; /* a locale whose decimal point is not '.' */
	if (errno == ERANGE || !isfinite(v))
		return NUM_RANGE;
	*out = v == 0 ? 0.0 : v; /* no -0 */
	return NUM_OK;
}

static enum num_status read_int(const char *s, long *out)
{
	size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
	if (!is_digit(s[i]))
		return NUM_SYNTAX;
	while (is_digit(s[i]))
		i++;
	if (s[i] != '\0')
		return NUM_SYNTAX;
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno == ERANGE || *end != '\0')
		return NUM_RANGE;
	*out = v;
	return NUM_OK;
}

static bool in_range(const struct option_def *d, double v)
{
	switch (d->range) {
	case R_OPEN_LO: return v > d->lo && v <= d->hi;
	case R_OR_ZERO: return v == 0 || (v >= d->lo && v <= d->hi);
	case R_CLOSED: break;
	}
	return v >= d->lo && v <= d->hi;
}

static enum cli_result range_error(struct parser *p, const struct option_def *d, const char *v)
{
	char q[SHOWN_SZ];
	const char *before_lo = d->range == R_OPEN_LO ? "more than " :
				d->range == R_OR_ZERO ? "0, or between " :
							"between ";
	const char *before_hi = d->range == R_OPEN_LO ? "at most " : "";
	return fail(p, "--%s: '%s' is out of range: must be %s%.10g and %s%.10g", d->name,
		    shown(v, SIZE_MAX, q), before_lo, d->lo, before_hi, d->hi);
}

static enum cli_result set_number(struct parser *p, const struct option_def *d, const char *v)
{
	char q[SHOWN_SZ];
	char *base = (char *)p->o;
	double x = 0;
	long n = 0;
	enum num_status st = d->kind == O_INT ? read_int(v, &n) : read_real(v, &x);
	if (d->kind == O_INT)
		x = (double)n;
	if (st == NUM_SYNTAX)
		return fail(p, "--%s: '%s' is not a %s number", d->name, shown(v, SIZE_MAX, q),
			    d->kind == O_INT ? "whole decimal" : "decimal");
	if (st == NUM_RANGE || !in_range(d, x))
		return range_error(p, d, v);
	if (d->kind == O_INT)
		*(int *)(base + d->off) = (int)n;
	else
		*(double *)(base + d->off) = x;
	if (d->off == OFF(speed))
		p->o->speed_given = true;
	return CLI_RUN;
}

/* NULL when s is a URL the scheduler poller can use, else why not. */
static const char *url_problem(const char *s)
{
	size_t n = strnlen(s, CLI_MAX_URL + 1);
	if (n > CLI_MAX_URL)
		return "is longer than " STR(CLI_MAX_URL) " bytes";
	size_t scheme;
	if (strncasecmp(s, "http://", 7) == 0)
		scheme = 7;
	else if (strncasecmp(s, "https://", 8) == 0)
		scheme = 8;
	else
		return "must start with http:// or https://";
	if (s[scheme] == '\0' || s[scheme] == '/')
		return "has no host";
	for (size_t i = 0; i < n; i++)
		if (is_ctl_or_space((unsigned char)s[i]))
			return "contains a space or a control character";
	return NULL;
}

/* IPv4 literals pass as host names; labels of letters, digits, '-' and
 * '_' (seen on real clusters), one trailing dot allowed. */
static bool hostname_ok(const char *h, size_t n)
{
	if (n == 0 || n > APP_MAX_HOST)
		return false;
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		char c = h[i];
		if (c == '.') {
			if (label == 0 || h[i - 1] == '-')
				return false;
			label = 0;
		} else if (is_alnum(c) || c == '_' || (c == '-' && label > 0)) {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return label == 0 || h[n - 1] != '-';
}

/* Hex groups, ':' and '.', then an optional %zone (an interface name). */
static bool ipv6_ok(const char *h, size_t n)
{
	size_t i = 0, colons = 0;
	for (; i < n && h[i] != '%'; i++) {
		if (h[i] == ':')
			colons++;
		else if (strutil_hexval(h[i]) < 0 && h[i] != '.')
			return false;
	}
	if (colons < 2 || i > 45)
		return false;
	if (i == n)
		return true;
	if (i + 1 == n || n - i > 64)
		return false;
	for (i++; i < n; i++)
		if (!is_alnum(h[i]) && h[i] != '_' && h[i] != '.' && h[i] != '-')
			return false;
	return true;
}

/* HOST:PORT or [IPv6]:PORT into host (APP_MAX_HOST + 1 bytes) and port;
 * NULL on success, else why not. */
static const char *listen_problem(const char *s, char *out_host, int *out_port)
{
	const char *host = s, *colon;
	size_t hlen;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return "is not [IPv6]:PORT";
		host = s + 1;
		hlen = (size_t)(close - host);
		colon = close + 1;
		if (!ipv6_ok(host, hlen))
			return "has a bad IPv6 address";
	} else {
		colon = strchr(s, ':');
		if (!colon)
			return "is not HOST:PORT";
		if (strchr(colon + 1, ':'))
			return "needs brackets around an IPv6 address, as in [::1]:8790";
		hlen = (size_t)(colon - s);
		if (!hostname_ok(host, hlen))
			return "has a bad host name";
	}
	long port = -1;
	if (read_int(colon + 1, &port) != NUM_OK || port < 0 || port > 65535)
		return "needs a port from 0 to 65535";
	memcpy(out_host, host, hlen);
	out_host[hlen] = '\0';
	*out_port = (int)port;
	return NULL;
}

/* RFC 9110 token characters. */
static bool is_tchar(char c)
{
	return is_alnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* "Name: value": a token, a colon, then no control byte but tab, so the
 * value cannot end the header line early and smuggle another one in. */
static const char *header_problem(const char *v)
{
	size_t n = strnlen(v, CLI_MAX_VALUE + 1);
	if (n > CLI_MAX_VALUE)
		return "is longer than " STR(CLI_MAX_VALUE) " bytes";
	size_t i = 0;
	while (i < n && is_tchar(v[i]))
		i++;
	if (i == 0 || v[i] != ':')
		return "is not 'Name: value'";
	for (i++; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return "has a control character in its value";
	}
	return NULL;
}

static enum cli_result set_header(struct parser *p, const char *v)
{
	char q[SHOWN_SZ];
	const char *why = header_problem(v);
	if (why)
		return fail(p, "--header: '%s' %s", shown(v, SIZE_MAX, q), why);
	if (p->o->n_headers == APP_MAX_HEADERS)
		return fail(p, "--header: more than %d headers, the last '%s'", APP_MAX_HEADERS,
			    shown(v, SIZE_MAX, q));
	p->o->headers[p->o->n_headers++] = v;
	return CLI_RUN;
}

static enum cli_result set_string(struct parser *p, const struct option_def *d, const char *v)
{
	char q[SHOWN_SZ];
	size_t n = strnlen(v, CLI_MAX_VALUE + 1);
	if (n == 0)
		return fail(p, "--%s needs a non-empty value", d->name);
	if (n > CLI_MAX_VALUE)
		return fail(p, "--%s: '%s' is longer than %d bytes", d->name, shown(v, n, q),
			    CLI_MAX_VALUE);
	if (d->kind == O_WORD)
		for (size_t i = 0; i < n; i++)
			if (is_ctl_or_space((unsigned char)v[i]))
				return fail(p, "--%s: '%s' contains a space or a control character",
					    d->name, shown(v, n, q));
	*(const char **)((char *)p->o + d->off) = v;
	return CLI_RUN;
}

static enum cli_result set_value(struct parser *p, const struct option_def *d, const char *v)
{
	char q[SHOWN_SZ];
	const char *why;
	switch (d->kind) {
	case O_STR:
	case O_WORD: return set_string(p, d, v);
	case O_REAL:
	case O_INT: return set_number(p, d, v);
	case O_HEADER: return set_header(p, v);
	case O_URL:
		if ((why = url_problem(v)))
			return fail(p, "--scheduler: '%s' %s", shown(v, SIZE_MAX, q), why);
		p->o->scheduler_url = v;
		p->scheduler_from_cli = true;
		return CLI_RUN;
	case O_LISTEN:
		if ((why = listen_problem(v, p->o->listen_host, &p->o->listen_port)))
			return fail(p, "--listen: '%s' %s", shown(v, SIZE_MAX, q), why);
		p->o->listen_explicit = true;
		return CLI_RUN;
	case O_SERVE:
		/* the last --serve wins: "off" forgets an address given before */
		p->o->serve_off = strcmp(v, "off") == 0;
		p->o->serve_host[0] = '\0';
		if (!p->o->serve_off && (why = listen_problem(v, p->o->serve_host, &p->o->serve_port)))
			return fail(p, "--serve: '%s' %s (or 'off')", shown(v, SIZE_MAX, q), why);
		return CLI_RUN;
	case O_FLAG:
	case O_HELP:
	case O_VERSION: break;
	}
	return CLI_RUN;
}

static bool takes_value(const struct option_def *d)
{
	return d->kind != O_FLAG && d->kind != O_HELP && d->kind != O_VERSION;
}

static enum cli_result no_value(struct parser *p, const struct option_def *d)
{
	if (d->kind == O_HELP)
		return CLI_HELP;
	if (d->kind == O_VERSION)
		return CLI_VERSION;
	*(bool *)((char *)p->o + d->off) = true;
	return CLI_RUN;
}

/* The value of a "--opt value" pair: the next argument, unless there is
 * none or it looks like the next option (a forgotten value). */
static enum cli_result next_value(struct parser *p, const struct option_def *d, const char **v)
{
	char q[SHOWN_SZ];
	if (p->i + 1 >= p->argc || !p->argv[p->i + 1])
		return fail(p, "--%s needs a value", d->name);
	const char *next = p->argv[p->i + 1];
	if (next[0] == '-' && next[1] == '-')
		return fail(p, "--%s needs a value, not the option '%s'; "
			    "write --%s=VALUE if that is the value",
			    d->name, shown(next, SIZE_MAX, q), d->name);
	p->i++;
	*v = next;
	return CLI_RUN;
}

/* One option at argv[p->i]; advances p->i past a separate value. */
static enum cli_result parse_one(struct parser *p)
{
	char q[SHOWN_SZ];
	const char *arg = p->argv[p->i];
	const struct option_def *d = NULL;
	const char *value = NULL;
	if (arg[0] != '-' || arg[1] == '\0')
		return fail(p, "unexpected argument '%s': roastop takes only options",
			    shown(arg, SIZE_MAX, q));
	if (arg[1] == '-') {
		const char *eq = strchr(arg + 2, '=');
		size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		d = find_long(arg + 2, len);
		value = eq ? eq + 1 : NULL;
		if (!d)
			return fail(p, "unknown option '%s'", shown(arg, len + 2, q));
	} else {
		d = arg[2] ? NULL : find_short(arg[1]);
		if (!d)
			return fail(p, "unknown option '%s'", shown(arg, SIZE_MAX, q));
	}
	if (!takes_value(d)) {
		if (value)
			return fail(p, "--%s takes no value, got '%s'", d->name,
				    shown(value, SIZE_MAX, q));
		return no_value(p, d);
	}
	if (!value && next_value(p, d, &value) != CLI_RUN)
		return CLI_ERROR;
	return set_value(p, d, value);
}

/* Two names of one existing file (a link, "./", "//") count as the same:
 * recording would truncate the file being replayed. stdin is not a path. */
static bool same_file(const char *a, const char *b)
{
	if (strcmp(b, "-") == 0)
		return false;
	if (strcmp(a, b) == 0)
		return true;
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static enum cli_result check_combination(struct parser *p)
{
	char q[SHOWN_SZ];
	const struct app_config *o = p->o;
	const char *why;
	if (!p->scheduler_from_cli && (why = url_problem(o->scheduler_url)))
		return fail(p, "ROASTOP_SCHEDULER: '%s' %s; fix it or give --scheduler URL",
			    shown(o->scheduler_url, SIZE_MAX, q), why);
	if (o->new_key && o->no_auth)
		return fail(p, "--new-key makes a key, --no-auth turns keys off: give one of them");
	if (o->demo && o->replay_path)
		return fail(p, "--demo replays the recording shipped with roastop: give it or "
			       "--replay FILE, not both");
	if (o->speed_given && !o->replay_path && !o->demo)
		return fail(p, "--speed %.10g only applies with --replay FILE or --demo", o->speed);
	if (o->record_path && o->replay_path && same_file(o->record_path, o->replay_path))
		return fail(p, "--record '%s' is the --replay file: it would be overwritten",
			    shown(o->record_path, SIZE_MAX, q));
	return CLI_RUN;
}

/* "compare DIR_A DIR_B": two measurement directories, nothing else. */
static enum cli_result parse_compare(struct parser *p)
{
	char q[SHOWN_SZ];
	if (p->argc == 3 && p->argv[2] &&
	    (strcmp(p->argv[2], "-h") == 0 || strcmp(p->argv[2], "--help") == 0))
		return CLI_HELP;
	if (p->argc != 4 || !p->argv[2] || !p->argv[3] || !p->argv[2][0] || !p->argv[3][0])
		return fail(p, "compare takes two measurement directories: roastop compare "
			       "DIR_A DIR_B");
	for (int i = 2; i < 4; i++)
		if (strnlen(p->argv[i], CLI_MAX_VALUE + 1) > CLI_MAX_VALUE)
			return fail(p, "compare: '%s' is longer than %d bytes",
				    shown(p->argv[i], SIZE_MAX, q), CLI_MAX_VALUE);
	p->o->compare[0] = p->argv[2];
	p->o->compare[1] = p->argv[3];
	return CLI_COMPARE;
}

/* "history [DIR] [--name TEXT] [--json]": DIR defaults to the output root. */
static enum cli_result parse_history(struct parser *p)
{
	char q[SHOWN_SZ];
	p->o->history_dir = "roastop-measurements";
	for (int i = 2; i < p->argc && p->argv[i]; i++) {
		const char *a = p->argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			return CLI_HELP;
		if (strnlen(a, CLI_MAX_VALUE + 1) > CLI_MAX_VALUE)
			return fail(p, "history: '%s' is longer than %d bytes",
				    shown(a, SIZE_MAX, q), CLI_MAX_VALUE);
		if (strcmp(a, "--json") == 0)
			p->o->history_json = true;
		else if (strcmp(a, "--name") == 0 && i + 1 < p->argc && p->argv[i + 1])
			p->o->history_name = p->argv[++i];
		else if (a[0] == '-' || !a[0] || i > 2)
			return fail(p, "history takes a directory, --name TEXT and --json: '%s'",
				    shown(a, SIZE_MAX, q));
		else
			p->o->history_dir = a;
	}
	return CLI_HISTORY;
}

enum cli_result cli_parse(int argc, char *const argv[], const char *env_scheduler,
			  struct app_config *o, char *err, size_t errsz)
{
	char q[SHOWN_SZ], sink[1];
	struct parser p = {
		.argc = argv ? argc : 0,
		.argv = argv,
		.o = o,
		.err = err && errsz ? err : sink,
		.errsz = err && errsz ? errsz : sizeof(sink),
	};
	p.err[0] = '\0';
	cli_defaults(o);
	if (env_scheduler && *env_scheduler)
		o->scheduler_url = env_scheduler;
	if (p.argc > 1 && argv[1] && strcmp(argv[1], "compare") == 0)
		return parse_compare(&p);
	if (p.argc > 1 && argv[1] && strcmp(argv[1], "history") == 0)
		return parse_history(&p);
	for (p.i = 1; p.i < p.argc && argv[p.i]; p.i++) {
		if (strcmp(argv[p.i], "--") == 0) {
			if (p.i + 1 < p.argc && argv[p.i + 1])
				return fail(&p, "unexpected argument '%s' after '--': roastop "
						"takes only options",
					    shown(argv[p.i + 1], SIZE_MAX, q));
			break;
		}
		enum cli_result r = parse_one(&p);
		if (r != CLI_RUN)
			return r;
	}
	return check_combination(&p);
}

/* "  --name ARG" in 25 columns (or two spaces after it), then the help. */
static void usage_option(FILE *f, const struct option_def *d)
{
	char left[64], short_name[8] = "";
	if (d->short_name)
		snprintf(short_name, sizeof(short_name), "-%c, ", d->short_name);
	snprintf(left, sizeof(left), "  %s--%s%s%s", short_name, d->name, d->arg ? " " : "",
		 d->arg ? d->arg : "");
	fprintf(f, "%-25s  ", left);
	for (const char *h = d->help; *h;) {
		size_t n = strcspn(h, "\n");
		fprintf(f, "%.*s\n", (int)n, h);
		h += n + (h[n] == '\n');
		if (*h)
			fprintf(f, "%27s", "");
	}
}

void cli_usage(FILE *f, const char *manual)
{
	fputs("Usage: roastop [OPTION]...\n"
	      "       roastop compare DIR_A DIR_B\n"
	      "       roastop history [DIR] [--name TEXT] [--json]\n"
	      "Watch a coffea analysis on a Dask cluster; write the roastcoffea-style\n"
	      "measurement when it exits. compare: two measurements (roastop's or\n"
	      "roastcoffea's) side by side, with the change and the findings of each.\n"
	      "history: the measurements under DIR (default roastop-measurements),\n"
	      "newest first.\n",
	      f);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(options); i++) {
		if (options[i].name)
			usage_option(f, &options[i]);
		else
			fprintf(f, "\n%s\n", options[i].help);
	}
	fputs("\n'--opt value' and '--opt=value' both work; a repeated option keeps its last\n"
	      "value. Exit status: 0 done, 1 runtime error, 2 bad arguments. See roastop(1).\n",
	      f);
	if (manual)
		fprintf(f, "Manual: man %s\n", manual);
}
