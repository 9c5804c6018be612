/* roastop: arguments -> app. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "roastop/app.h"
#include "roastop/cli.h"
#include "roastop/compare.h"
#include "roastop/history.h"
#include "roastop/datadir.h"

/* The help, naming where the manual is when it is installed beside us. */
static int main_help(void)
{
	char manual[PATH_MAX];
	bool found = datadir_find(DATADIR_MANUAL, NULL, manual, sizeof(manual)) == 0;
	cli_usage(stdout, found ? manual : NULL);
	return 0;
}

/* --demo: the recording shipped beside the program, replayed. */
static int main_demo(struct app_config *o, char *path, size_t n)
{
	if (datadir_find(DATADIR_DEMO, NULL, path, n) != 0) {
		fputs("roastop: --demo: no demo recording beside this program (a build tree's "
		      "examples/, the wheel's roastop/data/ or PREFIX/share/roastop/)\n",
		      stderr);
		return 1;
	}
	o->replay_path = path;
	return 0;
}

int main(int argc, char **argv)
{
	struct app_config o;
	char err[256], demo[PATH_MAX];
	switch (cli_parse(argc, argv, getenv("ROASTOP_SCHEDULER"), &o, err, sizeof(err))) {
	case CLI_HELP:
		return main_help();
	case CLI_VERSION:
		printf("roastop %s\n", ROASTOP_VERSION);
		return 0;
	case CLI_ERROR:
		fprintf(stderr, "roastop: %s (try 'roastop --help')\n", err);
		return 2;
	case CLI_COMPARE:
		return compare_main(o.compare[0], o.compare[1], stdout, stderr);
	case CLI_HISTORY:
		return history_main(o.history_dir, o.history_name, o.history_json, stdout, stderr);
	case CLI_RUN: break;
	}
	if (o.demo && main_demo(&o, demo, sizeof(demo)) != 0)
		return 1;
	/* the options as parsed, and what a terminal and NO_COLOR (no-color.org:
	 * set and not empty) add */
	const char *no_color = getenv("NO_COLOR");
	o.headless = o.headless || !isatty(STDOUT_FILENO);
	o.no_color = o.no_color || (no_color && no_color[0]);
	return app_main(&o);
}
