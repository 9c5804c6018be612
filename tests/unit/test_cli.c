#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roastop/cli.h"

#define END ((const char *)NULL)
#define MAX_ARGS 64

/* argv from a NULL-terminated list; the strings must outlive the result. */
static enum cli_result vparse(struct app_config *o, char *err, size_t errsz, const char *env,
			      va_list ap)
{
	static char *argv[MAX_ARGS + 1];
	int argc = 0;
	argv[argc++] = "roastop";
	for (const char *a; (a = va_arg(ap, const char *));) {
		assert_true(argc < MAX_ARGS);
		argv[argc++] = (char *)a;
	}
	argv[argc] = NULL;
	return cli_parse(argc, argv, env, o, err, errsz);
}

static enum cli_result parse(struct app_config *o, char *err, const char *env, ...)
{
	va_list ap;
	va_start(ap, env);
	enum cli_result r = vparse(o, err, 256, env, ap);
	va_end(ap);
	return r;
}

/* The arguments must fail with one line that contains opt and bad. */
static void expect_error(int line, const char *env, const char *opt, const char *bad, ...)
{
	struct app_config o;
	char err[256];
	va_list ap;
	va_start(ap, bad);
	enum cli_result r = vparse(&o, err, sizeof(err), env, ap);
	va_end(ap);
	if (r != CLI_ERROR)
		fail_msg("line %d: result %d, expected CLI_ERROR", line, r);
	if (!err[0] || strchr(err, '\n'))
		fail_msg("line %d: error '%s' is not one line", line, err);
	if (!strstr(err, opt) || (bad && !strstr(err, bad)))
		fail_msg("line %d: error '%s' should mention '%s' and '%s'", line, err, opt,
			 bad ? bad : "");
}

#define ERR(opt, bad, ...) expect_error(__LINE__, NULL, opt, bad, __VA_ARGS__, END)

static void defaults(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	cli_defaults(&o);
	assert_string_equal(o.scheduler_url, "http://localhost:8787");
	assert_string_equal(o.listen_host, "127.0.0.1");
	assert_int_equal(o.listen_port, 8790);
	assert_false(o.listen_explicit); /* a taken port gives way (listener.c) */
	assert_near(o.interval, 1.0, 0);
	assert_near(o.speed, 1.0, 0);
	assert_near(o.checkpoint_interval, 10.0, 0);
	assert_near(o.duration, 0, 0);
	assert_int_equal(o.rcvbuf, 0);
	assert_int_equal(o.n_headers, 0);
	assert_null(o.key_file);
	assert_null(o.output_dir);
	assert_null(o.record_path);
	assert_null(o.replay_path);
	assert_null(o.theme);
	assert_null(o.processor_prefix);
	assert_null(o.dashboard_prefix);
	assert_null(o.cacert);
	assert_false(o.no_auth || o.new_key || o.headless || o.exit_on_run_end || o.no_color ||
		     o.ascii || o.insecure || o.speed_given);

	struct app_config p;
	memset(&p, 0xa5, sizeof(p)); /* cli_parse must set every field itself */
	assert_int_equal(parse(&p, err, NULL, END), CLI_RUN);
	assert_string_equal(err, "");
	assert_string_equal(p.scheduler_url, o.scheduler_url);
	assert_string_equal(p.listen_host, o.listen_host);
	assert_int_equal(p.listen_port, 8790);
	assert_near(p.interval, 1.0, 0);
	assert_near(p.checkpoint_interval, 10.0, 0);
	assert_near(p.duration, 0, 0);
	assert_null(p.output_dir);
	assert_false(p.headless || p.speed_given || p.new_key);
	assert_int_equal(p.n_headers, 0);
}

static void environment(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, "https://dask.example:8787/", END), CLI_RUN);
	assert_string_equal(o.scheduler_url, "https://dask.example:8787/");
	assert_int_equal(parse(&o, err, "", END), CLI_RUN); /* set but empty = unset */
	assert_string_equal(o.scheduler_url, "http://localhost:8787");
	assert_int_equal(parse(&o, err, "http://env:1", "--scheduler", "http://cli:2", END),
			 CLI_RUN);
	assert_string_equal(o.scheduler_url, "http://cli:2");
	/* a broken environment does not matter once --scheduler replaces it */
	assert_int_equal(parse(&o, err, "ftp://env", "--scheduler=http://cli:2", END), CLI_RUN);
	assert_string_equal(o.scheduler_url, "http://cli:2");
	expect_error(__LINE__, "ftp://env", "ROASTOP_SCHEDULER", "'ftp://env'", END);
	expect_error(__LINE__, "localhost:8787", "ROASTOP_SCHEDULER", "http://", END);
}

static void every_option_separate(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, "http://env:1", "--scheduler", "https://s.example:443/x",
			       "--listen", "0.0.0.0:9000", "--key-file", "k.key", "--no-auth",
			       "--interval", "2.5", "--output", "out", "--headless", "--duration",
			       "60", "--exit-on-run-end", "--record", "r.jsonl", "--replay",
			       "p.jsonl", "--speed", "0", "--theme", "light", "--no-color",
			       "--ascii", "--checkpoint", "0", "--processor-prefix", "My*",
			       "--dashboard-prefix", "/dask", "--cacert", "ca.pem", "--insecure",
			       "--header", "Authorization: token x", "--rcvbuf", "8388608", END),
			 CLI_RUN);
	assert_string_equal(o.scheduler_url, "https://s.example:443/x");
	assert_string_equal(o.listen_host, "0.0.0.0");
	assert_int_equal(o.listen_port, 9000);
	assert_true(o.listen_explicit);
	assert_string_equal(o.key_file, "k.key");
	assert_true(o.no_auth);
	assert_near(o.interval, 2.5, 0);
	assert_string_equal(o.output_dir, "out");
	assert_true(o.headless);
	assert_near(o.duration, 60, 0);
	assert_true(o.exit_on_run_end);
	assert_string_equal(o.record_path, "r.jsonl");
	assert_string_equal(o.replay_path, "p.jsonl");
	assert_near(o.speed, 0, 0);
	assert_true(o.speed_given);
	assert_string_equal(o.theme, "light");
	assert_true(o.no_color);
	assert_true(o.ascii);
	assert_near(o.checkpoint_interval, 0, 0);
	assert_string_equal(o.processor_prefix, "My*");
	assert_string_equal(o.dashboard_prefix, "/dask");
	assert_string_equal(o.cacert, "ca.pem");
	assert_true(o.insecure);
	assert_int_equal(o.n_headers, 1);
	assert_string_equal(o.headers[0], "Authorization: token x");
	assert_int_equal(o.rcvbuf, 8388608);
}

static void every_option_equals(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "--scheduler=http://a:1", "--listen=[::1]:0",
			       "--key-file=k", "--interval=0.25", "--output=o=1", "--duration=1e3",
			       "--record=r", "--replay=-", "--speed=12.5", "--theme=./t.theme",
			       "--checkpoint=3600", "--processor-prefix=Dimuon",
			       "--dashboard-prefix=status", "--cacert=c", "--header=X-A:",
			       "--rcvbuf=4096", END),
			 CLI_RUN);
	assert_string_equal(o.scheduler_url, "http://a:1");
	assert_string_equal(o.listen_host, "::1");
	assert_int_equal(o.listen_port, 0);
	assert_string_equal(o.key_file, "k");
	assert_near(o.interval, 0.25, 0);
	assert_string_equal(o.output_dir, "o=1"); /* only the first '=' splits */
	assert_near(o.duration, 1000, 0);
	assert_string_equal(o.record_path, "r");
	assert_string_equal(o.replay_path, "-");
	assert_near(o.speed, 12.5, 0);
	assert_string_equal(o.theme, "./t.theme");
	assert_near(o.checkpoint_interval, 3600, 0);
	assert_string_equal(o.processor_prefix, "Dimuon");
	assert_string_equal(o.dashboard_prefix, "status");
	assert_string_equal(o.cacert, "c");
	assert_string_equal(o.headers[0], "X-A:"); /* an empty value is a valid header */
	assert_int_equal(o.rcvbuf, 4096);
}

static void serve_option(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, END), CLI_RUN);
	assert_false(o.serve_off); /* no address: the app follows --listen */
	assert_string_equal(o.serve_host, "");
	assert_false(o.serve_metrics_open);
	assert_int_equal(parse(&o, err, NULL, "--serve", "127.0.0.1:1", "--serve", "off", END),
			 CLI_RUN);
	assert_true(o.serve_off);
	assert_string_equal(o.serve_host, ""); /* the last --serve wins */
	assert_int_equal(parse(&o, err, NULL, "--serve=[::1]:0", "--serve-metrics-open", END),
			 CLI_RUN);
	assert_false(o.serve_off);
	assert_string_equal(o.serve_host, "::1");
	assert_int_equal(o.serve_port, 0);
	assert_true(o.serve_metrics_open);
	assert_string_equal(o.listen_host, "127.0.0.1"); /* --serve leaves --listen alone */
	assert_int_equal(parse(&o, err, NULL, "--serve", "on", END), CLI_ERROR);
	assert_non_null(strstr(err, "--serve: 'on' is not HOST:PORT (or 'off')"));
	assert_int_equal(parse(&o, err, NULL, "--serve", "127.0.0.1:70000", END), CLI_ERROR);
}

struct listen_case {
	const char *arg;
	const char *host; /* NULL = must fail */
	int port;
};

static void listen_addresses(void **state)
{
	(void)state;
	const struct listen_case cases[] = {
		{ "127.0.0.1:8790", "127.0.0.1", 8790 },
		{ "login01.cluster.example:65535", "login01.cluster.example", 65535 },
		{ "node_7:1", "node_7", 1 },
		{ "fqdn.example.:80", "fqdn.example.", 80 },
		{ "[::]:0", "::", 0 },
		{ "[fe80::1%eth0]:8790", "fe80::1%eth0", 8790 },
		{ "[::ffff:10.0.0.1]:5", "::ffff:10.0.0.1", 5 },
		{ "localhost", NULL, 0 }, /* no port */
		{ "localhost:", NULL, 0 },
		{ ":8790", NULL, 0 },
		{ "h:65536", NULL, 0 },
		{ "h:-1", NULL, 0 },
		{ "h:80x", NULL, 0 },
		{ "h:8e3", NULL, 0 },
		{ "h:99999999999999999999", NULL, 0 },
		{ "::1:80", NULL, 0 }, /* IPv6 without brackets */
		{ "[::1]80", NULL, 0 },
		{ "[::1", NULL, 0 },
		{ "[]:80", NULL, 0 },
		{ "[1.2.3.4]:80", NULL, 0 },
		{ "[::1%]:80", NULL, 0 },
		{ "[::g]:80", NULL, 0 },
		{ "-bad:80", NULL, 0 },
		{ "bad-.x:80", NULL, 0 },
		{ "a..b:80", NULL, 0 },
		{ "a b:80", NULL, 0 },
		{ "a/b:80", NULL, 0 },
	};
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		struct app_config o;
		char err[256];
		enum cli_result r = parse(&o, err, NULL, "--listen", cases[i].arg, END);
		if (!cases[i].host) {
			if (r != CLI_ERROR || !strstr(err, "--listen"))
				fail_msg("'%s' accepted or error '%s'", cases[i].arg, err);
			continue;
		}
		if (r != CLI_RUN)
			fail_msg("'%s' refused: %s", cases[i].arg, err);
		assert_string_equal(o.listen_host, cases[i].host);
		assert_int_equal(o.listen_port, cases[i].port);
	}
	char longhost[300];
	memset(longhost, 'a', sizeof(longhost));
	memcpy(longhost + 254, ":80", 4); /* 254 bytes of host: over the limit */
	ERR("--listen", NULL, "--listen", longhost);
	char label[80];
	memset(label, 'a', 64);
	memcpy(label + 64, ":80", 4); /* a 64-byte label */
	ERR("--listen", NULL, "--listen", label);
}

struct num_case {
	const char *opt;
	const char *value;
	bool ok;
	double want;
};

static double field(const struct app_config *o, const char *opt)
{
	if (!strcmp(opt, "--interval"))
		return o->interval;
	if (!strcmp(opt, "--duration"))
		return o->duration;
	if (!strcmp(opt, "--speed"))
		return o->speed;
	if (!strcmp(opt, "--checkpoint"))
		return o->checkpoint_interval;
	return o->rcvbuf;
}

static void numbers(void **state)
{
	(void)state;
	const struct num_case cases[] = {
		/* syntax */
		{ "--interval", "2", true, 2 },
		{ "--interval", "+2", true, 2 },
		{ "--interval", ".5", true, 0.5 },
		{ "--interval", "5.", true, 5 },
		{ "--interval", "1e1", true, 10 },
		{ "--interval", "25E-1", true, 2.5 },
		{ "--interval", "", false, 0 },
		{ "--interval", ".", false, 0 },
		{ "--interval", "1x", false, 0 },
		{ "--interval", " 1", false, 0 },
		{ "--interval", "1 ", false, 0 },
		{ "--interval", "0x10", false, 0 },
		{ "--interval", "inf", false, 0 },
		{ "--interval", "nan", false, 0 },
		{ "--interval", "1,5", false, 0 },
		{ "--interval", "1e", false, 0 },
		{ "--interval", "1e+", false, 0 },
		{ "--interval", "--1", false, 0 },
		{ "--interval", "1e999", false, 0 },
		/* ranges */
		{ "--interval", "0.1", true, 0.1 },
		{ "--interval", "0.09", false, 0 },
		{ "--interval", "3600", true, 3600 },
		{ "--interval", "3600.001", false, 0 },
		{ "--interval", "-1", false, 0 },
		{ "--duration", "0", false, 0 },
		{ "--duration", "-0", false, 0 },
		{ "--duration", "0.001", true, 0.001 },
		{ "--duration", "1e7", true, 1e7 },
		{ "--duration", "10000001", false, 0 },
		{ "--speed", "0", true, 0 },
		{ "--speed", "-0", true, 0 },
		{ "--speed", "0.001", true, 0.001 },
		{ "--speed", "0.0005", false, 0 },
		{ "--speed", "1e-400", false, 0 },
		{ "--speed", "1e6", true, 1e6 },
		{ "--speed", "1000001", false, 0 },
		{ "--speed", "-1", false, 0 },
		{ "--checkpoint", "0", true, 0 },
		{ "--checkpoint", "0.5", false, 0 },
		{ "--checkpoint", "1", true, 1 },
		{ "--checkpoint", "3600", true, 3600 },
		{ "--checkpoint", "3601", false, 0 },
		{ "--rcvbuf", "4095", false, 0 },
		{ "--rcvbuf", "4096", true, 4096 },
		{ "--rcvbuf", "1073741824", true, 1073741824.0 },
		{ "--rcvbuf", "1073741825", false, 0 },
		{ "--rcvbuf", "99999999999999999999999", false, 0 },
		{ "--rcvbuf", "4096.0", false, 0 },
		{ "--rcvbuf", "8M", false, 0 },
		{ "--rcvbuf", "-4096", false, 0 },
	};
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		const struct num_case *c = &cases[i];
		struct app_config o;
		char err[256];
		/* --speed needs --replay; it does not change the other options */
		enum cli_result r = parse(&o, err, NULL, c->opt, c->value, "--replay", "x", END);
		if (!c->ok) {
			if (r != CLI_ERROR || !strstr(err, c->opt) || !strstr(err, c->value))
				fail_msg("%s '%s' accepted or error '%s'", c->opt, c->value, err);
			continue;
		}
		if (r != CLI_RUN)
			fail_msg("%s '%s' refused: %s", c->opt, c->value, err);
		assert_near(field(&o, c->opt), c->want, 1e-12);
	}
	/* the messages tell a typo from a range */
	struct app_config o;
	char err[256];
	parse(&o, err, NULL, "--interval", "1x", END);
	assert_non_null(strstr(err, "not a decimal number"));
	parse(&o, err, NULL, "--checkpoint", "0.5", END);
	assert_non_null(strstr(err, "out of range: must be 0, or between 1 and 3600"));
	parse(&o, err, NULL, "--duration", "0", END);
	assert_non_null(strstr(err, "must be more than 0 and at most 10000000"));
	parse(&o, err, NULL, "--interval", "0", END);
	assert_string_equal(err, "--interval: '0' is out of range: must be between 0.1 and 3600");
	parse(&o, err, NULL, "--rcvbuf", "1.5", END);
	assert_non_null(strstr(err, "whole"));
	/* "-0" is stored as +0, so a later "> 0" or 1/x test cannot be fooled */
	assert_int_equal(parse(&o, err, NULL, "--checkpoint", "-0", END), CLI_RUN);
	assert_false(signbit(o.checkpoint_interval));
}

static void last_wins_and_headers(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "--interval", "2", "--interval=3", "--listen",
			       "a:1", "--listen", "[::1]:2", "--output", "x", "--output", "y",
			       "--headless", "--headless", END),
			 CLI_RUN);
	assert_near(o.interval, 3, 0);
	assert_string_equal(o.listen_host, "::1");
	assert_int_equal(o.listen_port, 2);
	assert_string_equal(o.output_dir, "y");
	/* an earlier bad value is still an error */
	ERR("--interval", "'0'", "--interval", "0", "--interval", "2");

	char names[APP_MAX_HEADERS + 1][16];
	static char *argv[2 * (APP_MAX_HEADERS + 1) + 1];
	int argc = 0;
	argv[argc++] = "roastop";
	for (int i = 0; i <= APP_MAX_HEADERS; i++) {
		snprintf(names[i], sizeof(names[i]), "X-H%d: %d", i, i);
		argv[argc++] = "--header";
		argv[argc++] = names[i];
	}
	assert_int_equal(cli_parse(argc - 2, argv, NULL, &o, err, sizeof(err)), CLI_RUN);
	assert_int_equal(o.n_headers, APP_MAX_HEADERS);
	assert_string_equal(o.headers[0], "X-H0: 0");
	assert_string_equal(o.headers[15], "X-H15: 15");
	assert_int_equal(cli_parse(argc, argv, NULL, &o, err, sizeof(err)), CLI_ERROR);
	assert_non_null(strstr(err, "--header"));
	assert_non_null(strstr(err, "more than 16"));
	assert_non_null(strstr(err, "X-H16"));
}

static void help_and_version(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "-h", END), CLI_HELP);
	assert_int_equal(parse(&o, err, NULL, "--help", END), CLI_HELP);
	assert_int_equal(parse(&o, err, NULL, "-V", END), CLI_VERSION);
	assert_int_equal(parse(&o, err, NULL, "--version", END), CLI_VERSION);
	/* parsing stops at the first of them */
	assert_int_equal(parse(&o, err, NULL, "--headless", "--help", "--nope", END), CLI_HELP);
	assert_int_equal(parse(&o, err, NULL, "-V", "-h", END), CLI_VERSION);
	ERR("--nope", NULL, "--nope", "--help");
	ERR("--help", "'x'", "--help=x");
	ERR("-hV", NULL, "-hV");
	ERR("-x", NULL, "-x");
	ERR("--Help", NULL, "--Help");
	ERR("--hel", NULL, "--hel"); /* no abbreviations */
}

static void arguments_and_double_dash(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "--headless", "--", END), CLI_RUN);
	assert_true(o.headless);
	ERR("stray", "only options", "stray");
	ERR("'-'", NULL, "-");
	ERR("x", "after '--'", "--", "x");
	ERR("--headless", "after '--'", "--", "--headless");
	ERR("file", NULL, "--headless", "file");
	ERR("unexpected argument ''", NULL, "");
}

/* "compare DIR_A DIR_B": exactly two non-empty directories, only first. */
static void compare_command(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "compare", "a", "b", END), CLI_COMPARE);
	assert_string_equal(o.compare[0], "a");
	assert_string_equal(o.compare[1], "b");
	assert_int_equal(parse(&o, err, NULL, "compare", "--help", END), CLI_HELP);
	assert_int_equal(parse(&o, err, NULL, "--headless", END), CLI_RUN);
	assert_null(o.compare[0]);
	ERR("compare takes two", NULL, "compare", END);
	ERR("compare takes two", NULL, "compare", "a");
	ERR("compare takes two", NULL, "compare", "a", "b", "c");
	ERR("compare takes two", NULL, "compare", "a", "");
	ERR("unexpected argument 'compare'", NULL, "--headless", "compare", "a", "b"); /* first only */
}

/* "history [DIR] [--name TEXT] [--json]": the output root by default. */
static void history_command(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "history", END), CLI_HISTORY);
	assert_string_equal(o.history_dir, "roastop-measurements");
	assert_null(o.history_name);
	assert_false(o.history_json);
	assert_int_equal(parse(&o, err, NULL, "history", "d", "--name", "x", "--json", END),
			 CLI_HISTORY);
	assert_string_equal(o.history_dir, "d");
	assert_string_equal(o.history_name, "x");
	assert_true(o.history_json);
	assert_int_equal(parse(&o, err, NULL, "history", "--help", END), CLI_HELP);
	ERR("history takes", NULL, "history", "a", "b", END);
	ERR("history takes", NULL, "history", "--name", END);
	ERR("history takes", NULL, "history", "--bogus", END);
}

static void missing_and_forgotten_values(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	const char *valued[] = { "--scheduler", "--listen", "--key-file", "--interval",
				 "--output", "--duration", "--record", "--replay",
				 "--speed", "--theme", "--checkpoint", "--processor-prefix",
				 "--dashboard-prefix", "--cacert", "--header", "--rcvbuf" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(valued); i++) {
		expect_error(__LINE__, NULL, valued[i], "needs a value", valued[i], END);
		expect_error(__LINE__, NULL, valued[i], "'--headless'", valued[i], "--headless",
			     END);
		expect_error(__LINE__, NULL, valued[i], "'--'", valued[i], "--", END);
	}
	/* a value may start with one dash, or with two when written with '=' */
	assert_int_equal(parse(&o, err, NULL, "--replay", "-", "--output", "-o", END), CLI_RUN);
	assert_string_equal(o.replay_path, "-");
	assert_string_equal(o.output_dir, "-o");
	assert_int_equal(parse(&o, err, NULL, "--output=--weird", END), CLI_RUN);
	assert_string_equal(o.output_dir, "--weird");
	const char *flags[] = { "--no-auth", "--new-key", "--headless", "--exit-on-run-end",
				"--no-color", "--ascii", "--insecure" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(flags); i++) {
		char arg[64];
		snprintf(arg, sizeof(arg), "%s=yes", flags[i]);
		expect_error(__LINE__, NULL, flags[i], "takes no value", arg, END);
	}
}

static void string_values(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	const char *strs[] = { "--key-file", "--output", "--record", "--replay", "--theme",
			       "--processor-prefix", "--dashboard-prefix", "--cacert" };
	static char big[CLI_MAX_VALUE + 2];
	memset(big, 'p', sizeof(big) - 1);
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(strs); i++) {
		char arg[64];
		snprintf(arg, sizeof(arg), "%s=", strs[i]);
		expect_error(__LINE__, NULL, strs[i], "non-empty", arg, END);
		expect_error(__LINE__, NULL, strs[i], "longer than 4096", strs[i], big, END);
	}
	big[CLI_MAX_VALUE] = '\0'; /* exactly the limit */
	assert_int_equal(parse(&o, err, NULL, "--output", big, END), CLI_RUN);
	assert_int_equal(strlen(o.output_dir), CLI_MAX_VALUE);
	assert_int_equal(parse(&o, err, NULL, "--output", "dir with spaces", "--theme",
			       "/usr/share/roastop/themes/dark.theme", END),
			 CLI_RUN);
	assert_string_equal(o.output_dir, "dir with spaces");
	ERR("--dashboard-prefix", "'/a b'", "--dashboard-prefix", "/a b");
	ERR("--dashboard-prefix", "'/a?b'", "--dashboard-prefix", "/a\nb");
}

static void scheduler_urls(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "--scheduler", "HTTPS://Dask.Example", END),
			 CLI_RUN);
	assert_string_equal(o.scheduler_url, "HTTPS://Dask.Example");
	assert_int_equal(parse(&o, err, NULL, "--scheduler", "http://[::1]:8787/status", END),
			 CLI_RUN);
	ERR("--scheduler", "http:// or https://", "--scheduler", "ftp://x");
	ERR("--scheduler", "http:// or https://", "--scheduler", "localhost:8787");
	ERR("--scheduler", "no host", "--scheduler", "http://");
	ERR("--scheduler", "no host", "--scheduler", "https:///path");
	ERR("--scheduler", "space", "--scheduler", "http://a b");
	ERR("--scheduler", "'http://a??b'", "--scheduler", "http://a\r\nb");
	static char url[CLI_MAX_URL + 2];
	memset(url, 'u', sizeof(url) - 1);
	memcpy(url, "http://", 7);
	ERR("--scheduler", "longer than 2048", "--scheduler", url);
	url[CLI_MAX_URL] = '\0';
	assert_int_equal(parse(&o, err, NULL, "--scheduler", url, END), CLI_RUN);
	assert_int_equal(strlen(o.scheduler_url), CLI_MAX_URL);
}

static void bad_headers(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "--header", "X-Tab:\ta\tb", END), CLI_RUN);
	ERR("--header", "'novalue'", "--header", "novalue");
	ERR("--header", "Name: value", "--header", ": x");
	ERR("--header", "Name: value", "--header", "Bad Name: x");
	ERR("--header", "Name: value", "--header", "X-A : x");
	ERR("--header", "control character", "--header", "X-A: a\r\nInjected: 1");
	ERR("--header", "control character", "--header", "X-A: a\x7f");
}

static void record_and_replay(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	ERR("--speed", "--replay", "--speed", "2");
	ERR("--speed", "--replay", "--speed", "0", "--record", "r");
	assert_int_equal(parse(&o, err, NULL, "--speed", "2", "--replay", "r", END), CLI_RUN);
	assert_near(o.speed, 2, 0);
	assert_int_equal(parse(&o, err, NULL, "--replay", "r", "--speed=2", END), CLI_RUN);
	ERR("--record", "'a.jsonl'", "--record", "a.jsonl", "--replay", "a.jsonl");
	/* standard input is not a path: recording to a file named "-" is fine */
	assert_int_equal(parse(&o, err, NULL, "--replay", "-", "--record", "-", END), CLI_RUN);

	/* one existing file under two names */
	char path[] = "/tmp/roastop_test_cli_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	char other[64];
	snprintf(other, sizeof(other), "/tmp/./%s", path + 5);
	ERR("--record", "--replay file", "--record", other, "--replay", path);
	char missing[80];
	snprintf(missing, sizeof(missing), "%s.new", path);
	assert_int_equal(parse(&o, err, NULL, "--record", missing, "--replay", path, END), CLI_RUN);
	unlink(path);
}

/* --new-key replaces the default key file, or the --key-file; with
 * --no-auth there is no key to make: a usage error, whatever the order. */
static void new_key(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	assert_int_equal(parse(&o, err, NULL, "--new-key", END), CLI_RUN);
	assert_true(o.new_key);
	assert_null(o.key_file);
	assert_int_equal(parse(&o, err, NULL, "--new-key", "--key-file", "k", END), CLI_RUN);
	assert_true(o.new_key);
	assert_string_equal(o.key_file, "k");
	ERR("--new-key", "--no-auth", "--new-key", "--no-auth");
	ERR("--new-key", "--no-auth", "--no-auth", "--key-file=k", "--new-key");
}

static void error_text(void **state)
{
	(void)state;
	struct app_config o;
	char err[256];
	/* found by fuzz_cli: a newline in an echoed argument made a two-line error */
	assert_int_equal(parse(&o, err, NULL, "--bad\noption", END), CLI_ERROR);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, "'--bad?option'"));
	/* only the name of an unknown --name=value is echoed */
	assert_int_equal(parse(&o, err, NULL, "--nope=secret", END), CLI_ERROR);
	assert_string_equal(err, "unknown option '--nope'");
	/* long values are cut at 64 bytes */
	char lng[200];
	memset(lng, 'z', sizeof(lng));
	lng[sizeof(lng) - 1] = '\0';
	assert_int_equal(parse(&o, err, NULL, "--interval", lng, END), CLI_ERROR);
	char want[80];
	snprintf(want, sizeof(want), "'%.64s...'", lng);
	assert_non_null(strstr(err, want));
	assert_true(strlen(err) < 160);
	/* a short buffer is filled, not overrun; no buffer at all is tolerated */
	char small[9];
	memset(small, 'x', sizeof(small));
	char *argv[] = { "roastop", "--nope", NULL };
	assert_int_equal(cli_parse(2, argv, NULL, &o, small, 8), CLI_ERROR);
	assert_string_equal(small, "unknown");
	assert_int_equal(small[8], 'x');
	assert_int_equal(cli_parse(2, argv, NULL, &o, NULL, 0), CLI_ERROR);
	assert_int_equal(cli_parse(2, argv, NULL, &o, small, 0), CLI_ERROR);
	assert_int_equal(small[0], 'u');
	/* argc 0 and a NULL inside argc end the list */
	assert_int_equal(cli_parse(0, argv, NULL, &o, err, sizeof(err)), CLI_RUN);
	char *holey[] = { "roastop", "--headless", NULL, "--nope" };
	assert_int_equal(cli_parse(4, holey, NULL, &o, err, sizeof(err)), CLI_RUN);
	assert_true(o.headless);
}

static void usage_lists_every_option(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	cli_usage(f, "/opt/roastop/share/man/man1/roastop.1");
	fclose(f);
	const char *names[] = { "--scheduler URL", "--listen HOST:PORT", "--key-file FILE",
				"--new-key", "--no-auth", "--task-stream", "--interval SECONDS", "--output DIR",
				"--headless", "--duration SECONDS", "--exit-on-run-end", "--record FILE",
				"--replay FILE", "--speed X", "--theme NAME|PATH", "--no-color",
				"--ascii", "--checkpoint SECONDS", "--processor-prefix PATTERN",
				"--dashboard-prefix PATH", "--cacert FILE", "--insecure",
				"--header 'Name: value'", "--rcvbuf BYTES", "-h, --help",
				"-V, --version", "127.0.0.1:8790", "http://localhost:8787",
				"roastop compare DIR_A DIR_B", "--demo",
				"Manual: man /opt/roastop/share/man/man1/roastop.1" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(names); i++)
		if (!strstr(text, names[i]))
			fail_msg("usage does not mention '%s'", names[i]);
	/* fits an 80-column terminal */
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		assert_non_null(nl);
		assert_true(nl - line < 80);
		line = nl + 1;
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(serve_option),
		cmocka_unit_test(environment),
		cmocka_unit_test(every_option_separate),
		cmocka_unit_test(every_option_equals),
		cmocka_unit_test(listen_addresses),
		cmocka_unit_test(numbers),
		cmocka_unit_test(last_wins_and_headers),
		cmocka_unit_test(help_and_version),
		cmocka_unit_test(arguments_and_double_dash),
		cmocka_unit_test(compare_command),
		cmocka_unit_test(history_command),
		cmocka_unit_test(missing_and_forgotten_values),
		cmocka_unit_test(string_values),
		cmocka_unit_test(scheduler_urls),
		cmocka_unit_test(bad_headers),
		cmocka_unit_test(record_and_replay),
		cmocka_unit_test(new_key),
		cmocka_unit_test(error_text),
		cmocka_unit_test(usage_lists_every_option),
	};
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
