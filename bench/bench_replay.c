/* Replay benchmarks (issue: foundation).
 *   bench replay_apply_rate         run_apply() on decoded chunk events
 *   bench replay_decode_apply_rate  decode + apply, line by line
 *   bench replay_peak_rss           roastop --replay of a 10M-chunk, 2,000-worker,
 *                                   24-hour generated recording, through a pipe
 * The recording comes from build/tools/gen_recording; no file of GBs is kept.
 * BENCH_SMOKE=1 (make bench-smoke): a 5,000-chunk recording, 50,000 applies
 * and a 20,000-chunk half-hour replay; the figures then mean nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "roastop/clock.h"
#include "roastop/event.h"
#include "roastop/event_json.h"
#include "roastop/run.h"
#include "bench.h"

#define DISTINCT 4096 /* decoded chunk events cycled through run_apply */

/* The sizes: bench_smoke() shrinks them. */
static const char *gen_args = "--chunks 200000 --workers 200 --hours 2 --sample-interval 5 "
			      "--files 2000 --fail-every 500";
static uint64_t applies = 2000000;
static const char *rss_chunks = "10000000", *rss_hours = "24";



/* Reads the output of a command into memory. */
static char *slurp_cmd(const char *cmd, size_t *len)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, p)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (pclose(p) != 0 || !buf) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static size_t decode_chunks(char *text, size_t len, struct event *evs, size_t max)
{
	size_t n = 0;
	for (char *line = text; line < text + len && n < max;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t l = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		if (event_decode_json(line, l, &evs[n]) == DEC_OK && evs[n].type == EV_CHUNK)
			n++;
		line += l + 1;
	}
	return n;
}

static void bench_apply(char *text, size_t len, uint64_t total)
{
	struct event *evs = calloc(DISTINCT, sizeof(*evs));
	for (size_t i = 0; i < DISTINCT; i++)
		event_init(&evs[i]);
	size_t n = decode_chunks(text, len, evs, DISTINCT);
	struct run *r = malloc(sizeof(*r));
	run_init(r);
	double t = 1767225600.0, start = clock_mono();
	for (uint64_t i = 0; i < total; i++) {
		struct event *ev = &evs[i % n];
		ev->t = (t += 1e-4); /* time moves on as in a real run */
		run_apply(r, ev);
	}
	double rate = (double)total / (clock_mono() - start);
	printf("bench replay_apply_rate: %.0f events/s (target >= 1000000)\n", rate);
	run_destroy(r);
	free(r);
	for (size_t i = 0; i < DISTINCT; i++)
		event_free(&evs[i]);
	free(evs);
}

static void bench_decode_apply(const char *text, size_t len)
{
	struct event ev;
	event_init(&ev);
	struct run *r = malloc(sizeof(*r));
	run_init(r);
	uint64_t n = 0;
	double start = clock_mono();
	for (const char *line = text; line < text + len;) {
		const char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t l = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		if (event_decode_json(line, l, &ev) == DEC_OK && run_apply(r, &ev) == 0)
			n++;
		line += l + 1;
	}
	double rate = (double)n / (clock_mono() - start);
	printf("bench replay_decode_apply_rate: %.0f events/s (target >= 300000)\n", rate);
	run_destroy(r);
	free(r);
	event_free(&ev);
}

/* gen_recording | roastop --replay -: roastop's peak RSS from wait4(). */
static void bench_rss(const char *build, const char *chunks, const char *hours)
{
	char gen[512], bin[512], out[512];
	snprintf(gen, sizeof(gen), "%s/tools/gen_recording", build);
	snprintf(bin, sizeof(bin), "%s/roastop", build);
	snprintf(out, sizeof(out), "%s/bench-rss-measurement", build);
	int fd[2];
	if (pipe(fd) != 0)
		return;
	pid_t g = bench_fork();
	if (g == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		execl(gen, gen, "--chunks", chunks, "--workers", "2000", "--hours", hours,
		      "--sample-interval", "60", "--datasets", "40", "--files", "20000",
		      "--fail-every", "1000", (char *)NULL);
		_exit(127);
	}
	pid_t r = bench_fork();
	if (r == 0) {
		dup2(fd[0], 0);
		close(fd[1]);
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execl(bin, bin, "--replay", "-", "--speed", "0", "--headless", "--checkpoint", "0",
		      "--output", out, (char *)NULL);
		_exit(127);
	}
	close(fd[0]);
	close(fd[1]);
	double start = clock_mono();
	struct rusage ru;
	int st_r = 0, st_g = 0;
	wait4(r, &st_r, 0, &ru);
	waitpid(g, &st_g, 0);
	if (!WIFEXITED(st_r) || WEXITSTATUS(st_r) != 0 || !WIFEXITED(st_g) || WEXITSTATUS(st_g)) {
		fprintf(stderr, "bench_replay: the replay's pipeline failed\n");
		exit(1);
	}
	printf("bench replay_peak_rss: %.1f MB (target < 64)\n", (double)ru.ru_maxrss / 1024.0);
	printf("bench replay_10m_wall: %.1f s (target <= 120)\n", clock_mono() - start);
}

int main(void)
{
	if (bench_smoke()) {
		gen_args = "--chunks 5000 --workers 200 --hours 0.1 --sample-interval 5 "
			   "--files 200 --fail-every 500";
		applies = 50000;
		rss_chunks = "20000";
		rss_hours = "0.5";
	}
	const char *build = bench_env_or("BUILD", "build");
	char cmd[800];
	snprintf(cmd, sizeof(cmd), "%s/tools/gen_recording %s", build, gen_args);
	size_t len = 0;
	char *text = slurp_cmd(cmd, &len);
	if (!text) {
		fprintf(stderr, "bench_replay: cannot run %s: %s\n", cmd, strerror(errno));
		return 1;
	}
	bench_apply(text, len, applies);
	bench_decode_apply(text, len);
	free(text);
	bench_rss(build, bench_env_or("BENCH_RSS_CHUNKS", rss_chunks), rss_hours);
	return 0;
}
