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
 * before setlocale(). The options land in struct app_config (app.h), the
 * one place each is declared. */
#ifndef ROASTOP_CLI_H
#define ROASTOP_CLI_H

#include <stdio.h>

#include "roastop/config.h"
#include "roastop/common.h"

#define CLI_DEFAULT_SCHEDULER "http://localhost:8787"
#define CLI_DEFAULT_LISTEN_HOST "127.0.0.1"
#define CLI_DEFAULT_LISTEN_PORT 8790
#define CLI_DEFAULT_INTERVAL 1.0
#define CLI_DEFAULT_CHECKPOINT 10.0
/* Longer than any chunk is expected to take: a silent run is a dead client. */
#define CLI_DEFAULT_RUN_IDLE_TIMEOUT 300.0
#define CLI_MAX_URL 2048 /* bytes of --scheduler / ROASTOP_SCHEDULER */
#define CLI_MAX_VALUE 4096 /* bytes of any other value (paths, headers) */
#define CLI_MIN_RCVBUF 4096
#define CLI_MAX_RCVBUF (1 << 30)

/* CLI_COMPARE: "roastop compare DIR_A DIR_B", the two in o->compare.
 * CLI_HISTORY: "roastop history [DIR] [--name TEXT] [--json]", in o->history_*. */
enum cli_result { CLI_RUN = 0, CLI_HELP, CLI_VERSION, CLI_ERROR, CLI_COMPARE, CLI_HISTORY };

/* The documented defaults, ignoring the environment. */
void cli_defaults(struct app_config *o);

/* Fills *o from argv[1..argc-1]. env_scheduler is ROASTOP_SCHEDULER (NULL
 * or "" = unset); --scheduler overrides it. On CLI_ERROR, err holds one line
 * (no newline) naming the option and echoing at most 64 bytes of the bad
 * value, control bytes shown as '?'; *o is then unspecified. */
enum cli_result cli_parse(int argc, char *const argv[], const char *env_scheduler,
			  struct app_config *o, char *err, size_t errsz);

/* The help; manual, when not NULL, is where roastop(1) is (datadir.h). */
void cli_usage(FILE *f, const char *manual);

#endif
