/* Command-line parsing: reentrant (no getopt, no globals) so it can be
 * fuzzed. Errors are one line for "roastop: <err>" and exit status 2.
 *
 * Grammar: "--opt value" or "--opt=value"; flags take no value; "-h" and
 * "-V" are the only short options; "--" ends the options, and since roastop
 * takes no positional arguments anything after it is an error. Long names
 * must be spelled out (no abbreviations). A value given as a separate
 * argument may not start with "--" (that is almost always a forgotten
 * value); write --opt=--value to mean it. A single-valued option given twice
 * keeps the last value; every value is checked when seen, so a bad earlier
 * one is still an error. --header accumulates. Parsing stops at the first
 * -h/--help or -V/--version.
 *
 * Numbers are decimal (no hex, inf, nan or surrounding spaces) and read
 * with strtod, whose decimal point follows LC_NUMERIC: call cli_parse
 * before setlocale(). */
#ifndef ROASTOP_CLI_H
#define ROASTOP_CLI_H

#include <stdio.h>

#include "roastop/common.h"

#define CLI_DEFAULT_SCHEDULER "http://localhost:8787"
#define CLI_DEFAULT_LISTEN_HOST "127.0.0.1"
#define CLI_DEFAULT_LISTEN_PORT 8790
#define CLI_DEFAULT_INTERVAL 1.0
#define CLI_DEFAULT_CHECKPOINT 10.0
/* Longer than any chunk is expected to take: a silent run is a dead client. */
#define CLI_DEFAULT_RUN_IDLE_TIMEOUT 300.0
#define CLI_MAX_HEADERS 16
#define CLI_MAX_URL 2048 /* bytes of --scheduler / ROASTOP_SCHEDULER */
#define CLI_MAX_HOST 253 /* bytes of the --listen host, brackets excluded */
#define CLI_MAX_VALUE 4096 /* bytes of any other value (paths, headers) */
#define CLI_MIN_RCVBUF 4096
#define CLI_MAX_RCVBUF (1 << 30)

enum cli_result { CLI_RUN = 0, CLI_HELP, CLI_VERSION, CLI_ERROR };

/* --serve: not given (live: the --listen address; a replay: none), off, or
 * HOST:PORT. */
enum cli_serve { CLI_SERVE_AUTO = 0, CLI_SERVE_OFF, CLI_SERVE_AT };

/* Strings point into argv (or the environment string): they live as long
 * as those do. NULL means "not given". */
struct cli_opts {
	const char *scheduler; /* never NULL after cli_parse / cli_defaults */
	char listen_host[CLI_MAX_HOST + 1]; /* IPv4, hostname or IPv6 without brackets */
	int listen_port; /* 0..65535, 0 = pick a free port */
	const char *key_file;
	bool new_key;
	bool no_auth;
	bool no_task_stream; /* do not subscribe to the scheduler's /eventstream */
	enum cli_serve serve;
	char serve_host[CLI_MAX_HOST + 1]; /* CLI_SERVE_AT: as listen_host */
	int serve_port;
	bool serve_metrics_open;
	double interval; /* scheduler poll, seconds, 0.1..3600 */
	const char *output; /* NULL = the app chooses */
	bool headless;
	double duration; /* seconds, 0 = no limit, else (0, 1e7] */
	bool exit_on_run_end;
	double run_idle_timeout; /* seconds, 0 = never, else 1..1e7 */
	const char *record;
	const char *replay; /* "-" = standard input */
	double speed; /* replay factor 0..1e6, 0 = as fast as possible */
	bool speed_given;
	const char *theme; /* a name or a path */
	bool no_color;
	bool ascii;
	double checkpoint; /* seconds, 0 = off, else 1..3600 */
	const char *processor_prefix;
	const char *dashboard_prefix;
	const char *cacert;
	bool insecure;
	const char *headers[CLI_MAX_HEADERS]; /* "Name: value", checked */
	size_t n_headers;
	int rcvbuf; /* SO_RCVBUF bytes, 0 = system default */
};

/* The documented defaults, ignoring the environment. */
void cli_defaults(struct cli_opts *o);

/* Fills *o from argv[1..argc-1]. env_scheduler is ROASTOP_SCHEDULER (NULL
 * or "" = unset); --scheduler overrides it. On CLI_ERROR, err holds one line
 * (no newline) naming the option and echoing at most 64 bytes of the bad
 * value, control bytes shown as '?'; *o is then unspecified. */
enum cli_result cli_parse(int argc, char *const argv[], const char *env_scheduler,
			  struct cli_opts *o, char *err, size_t errsz);

void cli_usage(FILE *f);

#endif
