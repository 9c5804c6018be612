/* roastop: arguments -> app. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "roastop/app.h"
#include "roastop/cli.h"

/* NO_COLOR (no-color.org): set and not empty. */
static bool env_no_color(void)
{
	const char *v = getenv("NO_COLOR");
	return v && v[0];
}

int main(int argc, char **argv)
{
	struct cli_opts o;
	char err[256];
	switch (cli_parse(argc, argv, getenv("ROASTOP_SCHEDULER"), &o, err, sizeof(err))) {
	case CLI_HELP:
		cli_usage(stdout);
		return 0;
	case CLI_VERSION:
		printf("roastop %s\n", ROASTOP_VERSION);
		return 0;
	case CLI_ERROR:
		fprintf(stderr, "roastop: %s (try 'roastop --help')\n", err);
		return 2;
	case CLI_RUN: break;
	}
	struct app_config cfg = {
		.replay_path = o.replay,
		.speed = o.speed,
		.record_path = o.record,
		.output_dir = o.output,
		.duration = o.duration,
		.checkpoint_interval = o.checkpoint,
		.headless = o.headless || !isatty(STDOUT_FILENO),
		.exit_on_run_end = o.exit_on_run_end,
		.run_idle_timeout = o.run_idle_timeout,
		.processor_prefix = o.processor_prefix,
		.listen_host = o.listen_host,
		.listen_port = o.listen_port,
		.key_file = o.key_file,
		.new_key = o.new_key,
		.no_auth = o.no_auth,
		.no_task_stream = o.no_task_stream,
		.rcvbuf = o.rcvbuf,
		.serve_off = o.serve == CLI_SERVE_OFF,
		.serve_host = o.serve == CLI_SERVE_AT ? o.serve_host : NULL,
		.serve_port = o.serve_port,
		.serve_metrics_open = o.serve_metrics_open,
		.scheduler_url = o.scheduler,
		.dashboard_prefix = o.dashboard_prefix,
		.interval = o.interval,
		.cacert = o.cacert,
		.insecure = o.insecure,
		.headers = o.headers,
		.n_headers = o.n_headers,
		.theme = o.theme,
		.no_color = o.no_color || env_no_color(),
		.ascii = o.ascii,
	};
	return app_main(&cfg);
}
