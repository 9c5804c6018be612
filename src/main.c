/* roastop: arguments -> app. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "roastop/app.h"
#include "roastop/cli.h"
#include "roastop/compare.h"

/* NO_COLOR (no-color.org): set and not empty. */
static bool env_no_color(void)
{
	const char *v = getenv("NO_COLOR");
	return v && v[0];
}

int main(int argc, char **argv)
{
	struct app_config o;
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
	case CLI_COMPARE:
		return compare_main(o.compare[0], o.compare[1], stdout, stderr);
	case CLI_RUN: break;
	}
	/* the options as parsed, and what a terminal and NO_COLOR add */
	o.headless = o.headless || !isatty(STDOUT_FILENO);
	o.no_color = o.no_color || env_no_color();
	return app_main(&o);
}
