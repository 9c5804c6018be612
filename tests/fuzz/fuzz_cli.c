/* Arguments split on NUL bytes: the parser never crashes, what it accepts
 * is within the documented ranges, it holds no state between calls, and
 * every error is one line. An input starting with "ENV=" gives its first
 * piece (after the prefix) as ROASTOP_SCHEDULER. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "roastop/cli.h"

enum { MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static bool inside(const char *s, const char *lo, const char *hi)
{
	return (uintptr_t)s >= (uintptr_t)lo && (uintptr_t)s < (uintptr_t)hi;
}

/* NULL, or a non-empty string pointing into the input. */
static void check_str(const char *s, const char *lo, const char *hi)
{
	if (!s)
		return;
	check(inside(s, lo, hi));
	check(s[0] != '\0');
	check(strlen(s) <= CLI_MAX_VALUE);
}

static bool zero_or(double v, double lo, double hi)
{
	return v == 0 || (v >= lo && v <= hi);
}

static void check_numbers(const struct app_config *o)
{
	check(o->interval >= 0.1 && o->interval <= 3600);
	check(o->duration == 0 || (o->duration > 0 && o->duration <= 1e7));
	check(zero_or(o->speed, 1e-3, 1e6) && !signbit(o->speed));
	check(zero_or(o->checkpoint_interval, 1, 3600) && !signbit(o->checkpoint_interval));
	check(zero_or(o->rcvbuf, CLI_MIN_RCVBUF, CLI_MAX_RCVBUF));
	check(o->listen_port >= 0 && o->listen_port <= 65535);
	check(o->speed_given || o->speed == 1.0);
}

static void check_run(const struct app_config *o, const char *lo, const char *hi)
{
	check_numbers(o);
	size_t n = strlen(o->scheduler_url);
	check(n <= CLI_MAX_URL);
	check(strncasecmp(o->scheduler_url, "http://", 7) == 0 ||
	      strncasecmp(o->scheduler_url, "https://", 8) == 0);
	for (size_t i = 0; i < n; i++)
		check((unsigned char)o->scheduler_url[i] > 0x20 && o->scheduler_url[i] != 0x7f);
	check(o->listen_host[0] && strlen(o->listen_host) <= APP_MAX_HOST);
	check(!strpbrk(o->listen_host, "[] /"));
	check(!o->speed_given || o->replay_path);
	check(!o->record_path || !o->replay_path || strcmp(o->replay_path, "-") == 0 ||
	      strcmp(o->record_path, o->replay_path) != 0);
	const char *strs[] = { o->key_file, o->output_dir, o->record_path, o->replay_path, o->theme,
			       o->processor_prefix, o->dashboard_prefix, o->cacert };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(strs); i++)
		check_str(strs[i], lo, hi);
	if (!inside(o->scheduler_url, lo, hi)) /* argv or the environment, else the default */
		check(strcmp(o->scheduler_url, CLI_DEFAULT_SCHEDULER) == 0);
	check(o->n_headers <= APP_MAX_HEADERS);
	for (size_t i = 0; i < o->n_headers; i++) {
		check_str(o->headers[i], lo, hi);
		check(strchr(o->headers[i], ':') && !strpbrk(o->headers[i], "\r\n"));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	const char *env = NULL;
	size_t i = 0;
	if (size >= 4 && memcmp(copy, "ENV=", 4) == 0) {
		env = copy + 4;
		i = 4 + strlen(env) + 1;
	}
	char *argv[MAX_ARGS + 1] = { "roastop" };
	int argc = 1;
	for (; i < size && argc < MAX_ARGS; argc++) {
		argv[argc] = copy + i;
		i += strlen(copy + i) + 1;
	}
	argv[argc] = NULL;

	struct app_config o, again;
	char err[256], err2[256];
	enum cli_result r = cli_parse(argc, argv, env, &o, err, sizeof(err));
	check(r == cli_parse(argc, argv, env, &again, err2, sizeof(err2)));
	check(strcmp(err, err2) == 0); /* no state carried between calls */
	if (r == CLI_RUN) {
		check(memcmp(&o, &again, sizeof(o)) == 0); /* cli_defaults zeroes the padding */
		check_run(&o, copy, copy + size + 1);
	}
	else if (r == CLI_COMPARE)
		check(o.compare[0] && o.compare[0][0] && o.compare[1] && o.compare[1][0]);
	else if (r == CLI_HISTORY)
		check(o.history_dir && o.history_dir[0] && strlen(o.history_dir) <= CLI_MAX_VALUE);
	else if (r == CLI_ERROR)
		check(err[0] && !strchr(err, '\n') && strlen(err) < 200);
	free(copy);
	return 0;
}
