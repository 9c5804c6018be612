/* Option table + a small reentrant parser: --opt value, --opt=value, "--". */
#include "roastop/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum okind { O_FLAG, O_STR, O_NUM, O_LISTEN, O_HEADER, O_HELP, O_VERSION };

struct option_def {
	const char *name; /* long name without "--" */
	char short_name;
	enum okind kind;
	size_t off;
	double lo, hi;
};

#define OFF(f) offsetof(struct cli_opts, f)

static const struct option_def options[] = {
	{ "scheduler", 0, O_STR, OFF(scheduler), 0, 0 },
	{ "listen", 0, O_LISTEN, 0, 0, 0 },
	{ "key-file", 0, O_STR, OFF(key_file), 0, 0 },
	{ "no-auth", 0, O_FLAG, OFF(no_auth), 0, 0 },
	{ "interval", 0, O_NUM, OFF(interval), 0.1, 3600 },
	{ "output", 0, O_STR, OFF(output), 0, 0 },
	{ "headless", 0, O_FLAG, OFF(headless), 0, 0 },
	{ "duration", 0, O_NUM, OFF(duration), 1e-3, 1e7 },
	{ "exit-on-run-end", 0, O_FLAG, OFF(exit_on_run_end), 0, 0 },
	{ "record", 0, O_STR, OFF(record), 0, 0 },
	{ "replay", 0, O_STR, OFF(replay), 0, 0 },
	{ "speed", 0, O_NUM, OFF(speed), 0, 1e6 },
	{ "theme", 0, O_STR, OFF(theme), 0, 0 },
	{ "no-color", 0, O_FLAG, OFF(no_color), 0, 0 },
	{ "ascii", 0, O_FLAG, OFF(ascii), 0, 0 },
	{ "checkpoint", 0, O_NUM, OFF(checkpoint), 0, 3600 },
	{ "processor-prefix", 0, O_STR, OFF(processor_prefix), 0, 0 },
	{ "dashboard-prefix", 0, O_STR, OFF(dashboard_prefix), 0, 0 },
	{ "cacert", 0, O_STR, OFF(cacert), 0, 0 },
	{ "insecure", 0, O_FLAG, OFF(insecure), 0, 0 },
	{ "header", 0, O_HEADER, 0, 0, 0 },
	{ "rcvbuf", 0, O_NUM, OFF(rcvbuf), 4096, 1 << 30 },
	{ "help", 'h', O_HELP, 0, 0, 0 },
	{ "version", 'V', O_VERSION, 0, 0, 0 },
};

void cli_defaults(struct cli_opts *o, const char *env_scheduler)
{
	memset(o, 0, sizeof(*o));
	o->scheduler = env_scheduler && *env_scheduler ? env_scheduler : CLI_DEFAULT_SCHEDULER;
	snprintf(o->listen_host, sizeof(o->listen_host), "%s", CLI_DEFAULT_LISTEN_HOST);
	o->listen_port = CLI_DEFAULT_LISTEN_PORT;
	o->interval = 1.0;
	o->speed = 1.0;
	o->checkpoint = 10.0;
}

static const struct option_def *find_long(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0)
			return &options[i];
	return NULL;
}

static const struct option_def *find_short(char c)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (options[i].short_name && options[i].short_name == c)
			return &options[i];
	return NULL;
}

/* An argument echoed in an error: at most 64 bytes, control bytes as '?',
 * so an error stays one line whatever the user (or a fuzzer) typed. */
static const char *shown(const char *arg, char buf[72])
{
	size_t i = 0;
	for (; arg[i] && i < 64; i++) {
		unsigned char c = (unsigned char)arg[i];
		buf[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	buf[i] = '\0';
	return buf;
}

static bool parse_number(const char *s, double lo, double hi, double *out)
{
	char *end = NULL;
	double v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* HOST:PORT, [IPv6]:PORT; PORT 0..65535. */
static bool parse_listen(const char *s, struct cli_opts *o)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s)
		return false;
	const char *host = s;
	size_t hlen = (size_t)(colon - s);
	if (s[0] == '[') {
		if (hlen < 3 || s[hlen - 1] != ']')
			return false;
		host++;
		hlen -= 2;
	} else if (memchr(s, ':', hlen)) {
		return false; /* a bare IPv6 address needs brackets */
	}
	double port;
	if (hlen >= sizeof(o->listen_host) || !parse_number(colon + 1, 0, 65535, &port) ||
	    port != floor(port))
		return false;
	memcpy(o->listen_host, host, hlen);
	o->listen_host[hlen] = '\0';
	o->listen_port = (int)port;
	return true;
}

static enum cli_result set_value(const struct option_def *d, const char *v, struct cli_opts *o,
				 char *err, size_t errsz)
{
	char q[72];
	char *base = (char *)o;
	switch (d->kind) {
	case O_STR:
		if (!*v) {
			snprintf(err, errsz, "--%s needs a non-empty value", d->name);
			return CLI_ERROR;
		}
		*(const char **)(base + d->off) = v;
		return CLI_RUN;
	case O_NUM:
		if (!parse_number(v, d->lo, d->hi, (double *)(base + d->off))) {
			snprintf(err, errsz, "--%s: '%s' is not a number in [%g, %g]", d->name, shown(v, q),
				 d->lo, d->hi);
			return CLI_ERROR;
		}
		if (d->off == OFF(speed))
			o->speed_given = true;
		return CLI_RUN;
	case O_LISTEN:
		if (!parse_listen(v, o)) {
			snprintf(err, errsz, "--listen: '%s' is not HOST:PORT", shown(v, q));
			return CLI_ERROR;
		}
		return CLI_RUN;
	case O_HEADER:
		if (o->n_headers == CLI_MAX_HEADERS || !strchr(v, ':')) {
			snprintf(err, errsz, "--header: '%s' is not 'Name: value' or too many", shown(v, q));
			return CLI_ERROR;
		}
		o->headers[o->n_headers++] = v;
		return CLI_RUN;
	default: return CLI_RUN;
	}
}

static enum cli_result no_value_kind(const struct option_def *d, struct cli_opts *o)
{
	if (d->kind == O_HELP)
		return CLI_HELP;
	if (d->kind == O_VERSION)
		return CLI_VERSION;
	*(bool *)((char *)o + d->off) = true;
	return CLI_RUN;
}

/* One option at argv[*i]; advances *i past its value. */
static enum cli_result parse_one(int argc, char *const argv[], int *i, struct cli_opts *o,
				 char *err, size_t errsz)
{
	char q[72];
	const char *arg = argv[*i];
	const struct option_def *d = NULL;
	const char *value = NULL;
	if (arg[0] == '-' && arg[1] == '-') {
		const char *eq = strchr(arg + 2, '=');
		size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		d = find_long(arg + 2, len);
		value = eq ? eq + 1 : NULL;
	} else if (arg[0] == '-' && arg[1] && !arg[2]) {
		d = find_short(arg[1]);
	} else {
		snprintf(err, errsz, "unexpected argument '%s'", shown(arg, q));
		return CLI_ERROR;
	}
	if (!d) {
		snprintf(err, errsz, "unknown option '%s'", shown(arg, q));
		return CLI_ERROR;
	}
	bool takes_value = d->kind != O_FLAG && d->kind != O_HELP && d->kind != O_VERSION;
	if (!takes_value) {
		if (value) {
			snprintf(err, errsz, "--%s takes no value", d->name);
			return CLI_ERROR;
		}
		return no_value_kind(d, o);
	}
	if (!value) {
		if (*i + 1 >= argc) {
			snprintf(err, errsz, "--%s needs a value", d->name);
			return CLI_ERROR;
		}
		value = argv[++*i];
	}
	return set_value(d, value, o, err, errsz);
}

static enum cli_result check_combination(struct cli_opts *o, char *err, size_t errsz)
{
	char q[72];
	if (strncmp(o->scheduler, "http://", 7) != 0 && strncmp(o->scheduler, "https://", 8) != 0) {
		snprintf(err, errsz, "--scheduler: '%s' must start with http:// or https://",
			 shown(o->scheduler, q));
		return CLI_ERROR;
	}
	if (strlen(o->scheduler) > 2048) {
		snprintf(err, errsz, "--scheduler: URL longer than 2048 bytes");
		return CLI_ERROR;
	}
	if (o->speed_given && !o->replay) {
		snprintf(err, errsz, "--speed only applies with --replay FILE");
		return CLI_ERROR;
	}
	if (o->record && o->replay && strcmp(o->record, o->replay) == 0) {
		snprintf(err, errsz, "--record and --replay name the same file '%s'", shown(o->record, q));
		return CLI_ERROR;
	}
	return CLI_RUN;
}

enum cli_result cli_parse(int argc, char *const argv[], const char *env_scheduler,
			  struct cli_opts *o, char *err, size_t errsz)
{
	char q[72];
	cli_defaults(o, env_scheduler);
	err[0] = '\0';
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			if (i + 1 < argc) {
				snprintf(err, errsz, "unexpected argument '%s'", shown(argv[i + 1], q));
				return CLI_ERROR;
			}
			break;
		}
		enum cli_result r = parse_one(argc, argv, &i, o, err, errsz);
		if (r != CLI_RUN)
			return r;
	}
	return check_combination(o, err, errsz);
}

void cli_usage(FILE *f)
{
	fputs("Usage: roastop [options]\n"
	      "Watch a coffea analysis on a Dask cluster; write the roastcoffea measurement on exit.\n"
	      "\n"
	      "Sources:\n"
	      "  --scheduler URL         Dask dashboard URL (default " CLI_DEFAULT_SCHEDULER
	      ", env ROASTOP_SCHEDULER)\n"
	      "  --interval SECONDS      scheduler poll interval (default 1)\n"
	      "  --listen HOST:PORT      UDP listener for chunk events (default 127.0.0.1:8790; port 0 = any)\n"
	      "  --key-file FILE         HMAC key for datagrams (default: a new random key)\n"
	      "  --no-auth               accept unauthenticated datagrams (loopback use)\n"
	      "  --replay FILE           replay a recording instead of watching (FILE - = stdin)\n"
	      "  --speed X               replay speed factor (default 1; 0 = as fast as possible)\n"
	      "  --dashboard-prefix PATH, --cacert FILE, --insecure, --header 'Name: value', --rcvbuf BYTES\n"
	      "\n"
	      "Output:\n"
	      "  --output DIR            measurement directory (default roastop-measurements/<date>_<time>)\n"
	      "  --checkpoint SECONDS    rewrite the measurement every SECONDS (default 10; 0 = off)\n"
	      "  --record FILE           record every event to FILE\n"
	      "  --processor-prefix GLOB task prefixes that count as processor work in fine metrics\n"
	      "\n"
	      "Running:\n"
	      "  --headless              no screen: collect, then write the measurement\n"
	      "  --duration SECONDS      stop after SECONDS\n"
	      "  --exit-on-run-end       stop when the run-end message arrives\n"
	      "  --theme NAME|PATH, --no-color, --ascii   screen appearance\n"
	      "  -h, --help              this text\n"
	      "  -V, --version           the version\n"
	      "\n"
	      "Exit status: 0 ok, 1 runtime error (e.g. unwritable output), 2 bad arguments.\n",
	      f);
}
