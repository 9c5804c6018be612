/* The application: one poll() loop over a signalfd, timerfds and the
 * sources' descriptors (brubeck's habit: no signal handler doing real
 * work, no sleeps). Events flow source -> recorder -> run_apply. */
#ifndef ROASTOP_APP_H
#define ROASTOP_APP_H

#include "roastop/common.h"

struct app_config {
	const char *replay_path; /* NULL = live */
	double speed; /* replay speed factor, 0 = as fast as possible */
	const char *record_path; /* NULL = do not record */
	const char *output_dir; /* NULL or "" = roastop-measurements/<timestamp> */
	double duration; /* <= 0: no limit */
	double checkpoint_interval; /* seconds, 0 = no checkpoints */
	bool headless;
	bool exit_on_run_end;
	double run_idle_timeout; /* seconds without a datagram of a run: incomplete; 0 = never */
	const char *processor_prefix; /* glob for fine-metrics processor rows, or NULL */
	/* the UDP listener (live mode) */
	const char *listen_host;
	int listen_port;
	const char *key_file; /* NULL: the per-user key file */
	bool new_key; /* replace the key file with a fresh key */
	bool no_auth;
	bool no_task_stream;
	int rcvbuf;
	/* the HTTP server (serve.h): off, or at serve_host:serve_port; with no
	 * serve_host, live at the listener's address and not in a replay */
	bool serve_off;
	const char *serve_host;
	int serve_port;
	bool serve_metrics_open; /* /metrics without the bearer token */
	/* the Dask scheduler (live mode; NULL url: not polled) */
	const char *scheduler_url;
	const char *dashboard_prefix;
	double interval; /* seconds between polls */
	const char *cacert;
	bool insecure;
	const char *const *headers;
	size_t n_headers;
	/* the dashboard (unless headless) */
	const char *theme; /* --theme NAME|PATH, NULL = default */
	bool no_color; /* --no-color or NO_COLOR */
	bool ascii; /* --ascii */
};

/* Shows the dashboard unless cfg->headless (or there is no usable terminal:
 * then it says why and runs headless). Runs until q, a signal, --duration,
 * the end of a headless replay or --exit-on-run-end; writes the measurement
 * and prints the summary.
 * Returns the process exit status. */
int app_main(const struct app_config *cfg);

#endif
