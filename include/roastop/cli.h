/* Command-line parsing: reentrant (no getopt, no globals) so it can be
 * fuzzed. Errors are one line for "roastop: <err>" and exit status 2. */
#ifndef ROASTOP_CLI_H
#define ROASTOP_CLI_H

#include <stdio.h>

#include "roastop/common.h"

#define CLI_DEFAULT_SCHEDULER "http://localhost:8787"
#define CLI_DEFAULT_LISTEN_HOST "127.0.0.1"
#define CLI_DEFAULT_LISTEN_PORT 8790
#define CLI_MAX_HEADERS 16

enum cli_result { CLI_RUN = 0, CLI_HELP, CLI_VERSION, CLI_ERROR };

struct cli_opts {
	const char *scheduler;
	char listen_host[256];
	int listen_port; /* 0 = pick a free port */
	const char *key_file;
	bool no_auth;
	double interval; /* scheduler poll, seconds */
	const char *output;
	bool headless;
	double duration; /* <= 0: none */
	bool exit_on_run_end;
	const char *record;
	const char *replay;
	double speed;
	bool speed_given;
	const char *theme;
	bool no_color;
	bool ascii;
	double checkpoint; /* seconds, 0 = off */
	const char *processor_prefix;
	const char *dashboard_prefix;
	const char *cacert;
	bool insecure;
	const char *headers[CLI_MAX_HEADERS];
	size_t n_headers;
	double rcvbuf; /* bytes, 0 = default */
};

void cli_defaults(struct cli_opts *o, const char *env_scheduler);
enum cli_result cli_parse(int argc, char *const argv[], const char *env_scheduler,
			  struct cli_opts *o, char *err, size_t errsz);
void cli_usage(FILE *f);

#endif
