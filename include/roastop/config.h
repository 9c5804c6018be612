/* The configuration: a types-only header, so a source can read its options
 * without knowing the app (source.h). */
#ifndef ROASTOP_CONFIG_H
#define ROASTOP_CONFIG_H

#include "roastop/common.h"

#define APP_MAX_HOST 253 /* bytes of a --listen or --serve host, brackets excluded */
#define APP_MAX_HEADERS 16

/* Every option: cli_parse (cli.h) fills it from argv, each value within
 * its documented range. Strings point into argv or the environment; NULL
 * means "not given". */
struct app_config {
	const char *compare[2]; /* roastop compare DIR_A DIR_B (CLI_COMPARE), else NULL */
	/* roastop history [DIR] [--name TEXT] [--json] (CLI_HISTORY) */
	const char *history_dir, *history_name;
	bool history_json;
	const char *replay_path; /* NULL = live; "-" = standard input */
	bool demo; /* --demo: replay the recording shipped with roastop (datadir.h) */
	double speed; /* replay factor 0..1e6, 0 = as fast as possible */
	bool speed_given; /* --speed was given (only with --replay) */
	const char *record_path; /* NULL = do not record */
	const char *output_dir; /* NULL = roastop-measurements/<timestamp> */
	double duration; /* seconds, 0 = no limit, else (0, 1e7] */
	double checkpoint_interval; /* seconds, 0 = no checkpoints, else 1..3600 */
	bool headless;
	bool exit_on_run_end;
	double run_idle_timeout; /* seconds without a datagram of a run: incomplete; 0 = never */
	const char *processor_prefix; /* glob for fine-metrics processor rows, or NULL */
	/* the UDP listener (live mode) */
	char listen_host[APP_MAX_HOST + 1]; /* IPv4, hostname or IPv6 without brackets */
	int listen_port; /* 0..65535, 0 = pick a free port */
	/* --listen given: that address or a loud failure; else a taken default
	 * port gives way to another, remembered beside the key (portfile.h) */
	bool listen_explicit;
	const char *key_file; /* NULL: the per-user key file */
	bool new_key; /* replace the key file with a fresh key */
	bool no_auth;
	bool task_stream; /* --task-stream: follow /eventstream (costs the scheduler per task) */
	int rcvbuf; /* SO_RCVBUF bytes, 0 = 8 MiB */
	/* the HTTP server (serve.h): off, or at serve_host:serve_port; with no
	 * serve_host (""), live at the listener's address and not in a replay */
	bool serve_off;
	char serve_host[APP_MAX_HOST + 1];
	int serve_port;
	bool serve_metrics_open; /* /metrics without the bearer token */
	/* the Dask scheduler (live mode) */
	const char *scheduler_url; /* never NULL after cli_parse */
	const char *dashboard_prefix;
	double interval; /* seconds between polls, 0.1..3600 */
	const char *cacert;
	bool insecure;
	const char *headers[APP_MAX_HEADERS]; /* "Name: value", checked */
	size_t n_headers;
	/* the dashboard (unless headless) */
	const char *theme; /* --theme NAME|PATH, NULL = default */
	bool no_color; /* --no-color or NO_COLOR */
	bool ascii; /* --ascii */
};

#endif
