#include "test_util.h"

#include <string.h>

#include "roastop/cli.h"

static enum cli_result parse(struct cli_opts *o, char *err, const char *env, int argc, ...)
{
	static char *argv[32];
	va_list ap;
	va_start(ap, argc);
	argv[0] = "roastop";
	for (int i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	return cli_parse(argc, argv, env, o, err, 256);
}

static void defaults_and_env(void **state)
{
	(void)state;
	struct cli_opts o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, 1), CLI_RUN);
	assert_string_equal(o.scheduler, "http://localhost:8787");
	assert_string_equal(o.listen_host, "127.0.0.1");
	assert_int_equal(o.listen_port, 8790);
	assert_near(o.interval, 1, 0);
	assert_near(o.checkpoint, 10, 0);
	assert_false(o.headless);
	assert_int_equal(parse(&o, err, "https://dask.example:8787", 1), CLI_RUN);
	assert_string_equal(o.scheduler, "https://dask.example:8787");
	assert_int_equal(parse(&o, err, "http://env:1", 3, "--scheduler", "http://cli:2"), CLI_RUN);
	assert_string_equal(o.scheduler, "http://cli:2");
}

static void every_option(void **state)
{
	(void)state;
	struct cli_opts o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, 30, "--listen", "[::1]:0", "--key-file", "k",
			       "--no-auth", "--interval=2.5", "--output", "out", "--headless",
			       "--duration", "60", "--exit-on-run-end", "--record", "r.jsonl",
			       "--replay", "p.jsonl", "--speed", "0", "--theme", "light",
			       "--no-color", "--ascii", "--checkpoint", "0", "--header",
			       "Authorization: token x", "--insecure", "--processor-prefix", "My*"),
			 CLI_RUN);
	assert_string_equal(o.listen_host, "::1");
	assert_int_equal(o.listen_port, 0);
	assert_true(o.no_auth && o.headless && o.exit_on_run_end && o.no_color && o.ascii);
	assert_true(o.insecure);
	assert_near(o.interval, 2.5, 0);
	assert_near(o.duration, 60, 0);
	assert_near(o.speed, 0, 0);
	assert_near(o.checkpoint, 0, 0);
	assert_string_equal(o.replay, "p.jsonl");
	assert_int_equal(o.n_headers, 1);
	assert_string_equal(o.processor_prefix, "My*");
	assert_int_equal(parse(&o, err, NULL, 2, "-h"), CLI_HELP);
	assert_int_equal(parse(&o, err, NULL, 2, "--version"), CLI_VERSION);
	assert_int_equal(parse(&o, err, NULL, 3, "--listen", "0.0.0.0:9000"), CLI_RUN);
	assert_int_equal(o.listen_port, 9000);
}

struct bad {
	int argc;
	const char *a, *b, *c;
	const char *mention;
};

static void errors_name_the_option(void **state)
{
	(void)state;
	const struct bad cases[] = {
		{ 2, "--nope", NULL, NULL, "--nope" },
		{ 2, "--interval", NULL, NULL, "--interval" },
		{ 3, "--interval", "0", NULL, "--interval" },
		{ 3, "--interval", "1x", NULL, "--interval" },
		{ 3, "--interval", "nan", NULL, "--interval" },
		{ 3, "--duration", "-5", NULL, "--duration" },
		{ 3, "--speed", "2", NULL, "--speed" },
		{ 3, "--listen", "localhost", NULL, "--listen" },
		{ 3, "--listen", "::1:80", NULL, "--listen" },
		{ 3, "--listen", "h:70000", NULL, "--listen" },
		{ 3, "--scheduler", "ftp://x", NULL, "--scheduler" },
		{ 2, "stray", NULL, NULL, "stray" },
		{ 2, "--headless=yes", NULL, NULL, "--headless" },
		{ 3, "--header", "novalue", NULL, "--header" },
		{ 3, "--output", "", NULL, "--output" },
		{ 3, "--", "x", NULL, "x" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_opts o;
		char err[256];
		enum cli_result r = parse(&o, err, NULL, cases[i].argc, cases[i].a, cases[i].b, cases[i].c);
		if (r != CLI_ERROR || !strstr(err, cases[i].mention))
			fail_msg("case %zu: result %d, err '%s'", i, r, err);
		assert_null(strchr(err, '\n'));
	}
	struct cli_opts o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, 5, "--record", "a", "--replay", "a"), CLI_ERROR);
	/* found by fuzz_cli: a newline in an echoed argument made a two-line error */
	assert_int_equal(parse(&o, err, NULL, 2, "--bad\noption"), CLI_ERROR);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, "--bad?option"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_and_env),
		cmocka_unit_test(every_option),
		cmocka_unit_test(errors_name_the_option),
	};
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
