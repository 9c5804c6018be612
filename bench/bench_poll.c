/* The scheduler poller's cost.
 *
 * poll_parse_2000_workers   decode + run_apply of a 2,000-worker state.json
 *                           (and of an identity.json of the same cluster)
 * poll_cpu_10000_workers    roastop's CPU, as a share of one core, while its
 *                           real poller (libcurl multi, the same poll loop
 *                           shape as app.c) polls a fake scheduler serving a
 *                           10,000-worker state.json every second. The fake
 *                           scheduler is a forked child, so its CPU is not
 *                           counted.
 * BENCH_SMOKE=1 (make bench-smoke): 3 polls parsed, 2 s of polling; the
 * figures then mean nothing. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "roastop/clock.h"
#include "roastop/dask.h"
#include "roastop/source.h"
#include "roastop/dask_json.h"
#include "roastop/run.h"
#include "roastop/strbuf.h"
#include "bench.h"

#define PARSE_ROUNDS_MAX 30

/* Polls parsed and seconds polled: bench_smoke() shortens them. */
static int parse_rounds = PARSE_ROUNDS_MAX;
static double cpu_seconds = 10.0;


/* A state.json as roastop's route writes it: n workers, 40 task prefixes x
 * 4 activities of fine rows, and the same rows for the run's span. */
static void make_state(struct strbuf *sb, int n, double t)
{
	strbuf_appendf(sb, "{\"roastop_route\": 1, \"dask_version\": \"2026.8.0\", "
			   "\"scheduler_id\": \"Scheduler-bench\", \"time\": %.3f, \"n_workers\": %d, "
			   "\"total_threads\": %d, \"tasks_processing\": %d, \"workers\": [",
		       t, n, 4 * n, 3 * n);
	for (int i = 0; i < n; i++)
		strbuf_appendf(sb, "%s{\"address\": \"tcp://10.1.%d.%d:40%03d\", \"name\": \"worker-%d\", "
				   "\"host\": \"10.1.%d.%d\", \"nthreads\": 4, \"memory_limit\": 8589934592, "
				   "\"memory\": %d, \"managed_bytes\": %d, \"spilled_bytes\": 0, "
				   "\"cpu\": %.1f, \"executing\": 4, \"processing\": 7, \"status\": "
				   "\"running\", \"last_seen\": %.6f}",
			       i ? ", " : "", i / 250, i % 250, i % 1000, i, i / 250, i % 250,
			       1000000000 + (i % 1000) * 123457, 200000000 + i, 90.0 + (i % 10), t - 0.25);
	strbuf_puts(sb, "], \"fine\": [");
	static const char *const act[] = { "thread-cpu", "thread-noncpu", "executor", "other" };
	for (int i = 0; i < 160; i++)
		strbuf_appendf(sb, "%s[\"execute\", \"prefix-%d\", \"%s\", \"seconds\", %.6f]",
			       i ? ", " : "", i / 4, act[i % 4], t * 1e-3 * (i + 1));
	strbuf_puts(sb, "], \"span\": null}");
}

/* identity.json of the same cluster, with Dask's nested worker metrics. */
static void make_identity(struct strbuf *sb, int n, double t)
{
	strbuf_appendf(sb, "{\"type\": \"Scheduler\", \"id\": \"Scheduler-bench\", \"address\": "
			   "\"tcp://10.0.0.1:8786\", \"services\": {\"dashboard\": 8787}, "
			   "\"n_workers\": %d, \"total_threads\": %d, \"workers\": {",
		       n, 4 * n);
	for (int i = 0; i < n; i++)
		strbuf_appendf(
			sb,
			"%s\"tcp://10.1.%d.%d:40%03d\": {\"type\": \"Worker\", \"id\": \"worker-%d\", "
			"\"host\": \"10.1.%d.%d\", \"resources\": {}, \"local_directory\": "
			"\"/tmp/dask-scratch-space/worker-%d\", \"name\": \"worker-%d\", \"nthreads\": 4, "
			"\"memory_limit\": 8589934592, \"last_seen\": %.6f, \"services\": "
			"{\"dashboard\": 39%03d}, \"metrics\": {\"task_counts\": {\"executing\": 4, "
			"\"memory\": 12}, \"bandwidth\": {\"total\": 100000000, \"workers\": {}, "
			"\"types\": {}}, \"digests_total_since_heartbeat\": {\"latency\": 0.001}, "
			"\"managed_bytes\": %d, \"spilled_bytes\": {\"memory\": 0, \"disk\": 0}, "
			"\"transfer\": {\"incoming_bytes\": 0, \"incoming_count\": 0, "
			"\"incoming_count_total\": 0, \"outgoing_bytes\": 0, \"outgoing_count\": 0, "
			"\"outgoing_count_total\": 0}, \"event_loop_interval\": 0.02, \"cpu\": %.1f, "
			"\"memory\": %d, \"time\": %.6f, \"host_net_io\": {\"read_bps\": 1.0, "
			"\"write_bps\": 1.0}, \"host_disk_io\": {\"read_bps\": 0.0, \"write_bps\": 0.0}, "
			"\"num_fds\": 30}, \"status\": \"running\", \"nanny\": \"tcp://10.1.%d.%d:1\"}",
			i ? ", " : "", i / 250, i % 250, i % 1000, i, i / 250, i % 250, i, i, t - 0.3,
			i % 1000, 200000000 + i, 90.0 + (i % 10), 1000000000 + (i % 1000) * 123457, t - 0.3,
			i / 250, i % 250);
	strbuf_puts(sb, "}}");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median ms of decode + apply over parse_rounds polls of one body. */
static double parse_apply_ms(bool identity, int n)
{
	struct run *r = calloc(1, sizeof(*r));
	struct event ev, fine, span;
	event_init(&ev);
	event_init(&fine);
	event_init(&span);
	run_init(r);
	double ms[PARSE_ROUNDS_MAX];
	char err[160];
	for (int k = 0; k < parse_rounds; k++) {
		struct strbuf sb;
		strbuf_init(&sb);
		double t = 1.8e9 + k;
		if (identity)
			make_identity(&sb, n, t);
		else
			make_state(&sb, n, t);
		double t0 = clock_mono();
		enum dask_error e =
			identity ? dask_parse_identity(sb.data, sb.len, t, &ev, NULL, NULL, err, sizeof(err))
				 : dask_parse_state(sb.data, sb.len, t, &ev, &fine, &span, err, sizeof(err));
		if (e != DASK_OK) {
			fprintf(stderr, "bench_poll: %s\n", err);
			exit(1);
		}
		run_apply(r, &ev);
		if (!identity)
			run_apply(r, &fine);
		ms[k] = (clock_mono() - t0) * 1e3;
		strbuf_free(&sb);
	}
	if (r->workers.count != (size_t)n)
		exit(1);
	run_destroy(r);
	free(r);
	event_free(&ev);
	event_free(&fine);
	event_free(&span);
	qsort(ms, (size_t)parse_rounds, sizeof(ms[0]), cmp_double);
	return ms[parse_rounds / 2];
}

/* ---- a fake scheduler: HTTP/1.1 keep-alive, one connection at a time ---- */

static void serve_conn(int c, const struct strbuf *state)
{
	char req[8192];
	size_t have = 0;
	for (;;) {
		ssize_t k = read(c, req + have, sizeof(req) - 1 - have);
		if (k <= 0)
			return;
		have += (size_t)k;
		req[have] = '\0';
		char *end = strstr(req, "\r\n\r\n");
		if (!end)
			continue;
		bool is_state = strncmp(req, "GET /roastop/v1/state.json", 26) == 0;
		const char *body = is_state ? state->data : "{\"paths\": [\"/json/identity.json\"]}";
		size_t len = is_state ? state->len : strlen(body);
		char head[256];
		int h = snprintf(head, sizeof(head),
				 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				 "Content-Length: %zu\r\n\r\n",
				 len);
		if (write(c, head, (size_t)h) != h || write(c, body, len) != (ssize_t)len)
			return;
		size_t used = (size_t)(end + 4 - req);
		memmove(req, req + used, have - used);
		have -= used;
	}
}

static pid_t fake_scheduler(int n, int *port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 8) != 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) != 0)
		exit(1);
	*port = ntohs(a.sin_port);
	struct strbuf state;
	strbuf_init(&state);
	make_state(&state, n, 1.8e9);
	pid_t pid = bench_fork();
	if (pid == 0) {
		for (;;) {
			int c = accept(s, NULL, NULL);
			if (c < 0)
				_exit(0);
			serve_conn(c, &state);
			close(c);
		}
	}
	close(s);
	strbuf_free(&state);
	return pid;
}

struct sink {
	struct run *run;
	uint64_t samples;
};

static void sink_deliver(void *ctx, const struct event *ev)
{
	struct sink *s = ctx;
	run_apply(s->run, ev);
	s->samples += ev->type == EV_SAMPLE;
}

static double poll_cpu_percent(int n, uint64_t *samples)
{
	int port;
	pid_t child = fake_scheduler(n, &port);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct sink sink = { .run = calloc(1, sizeof(struct run)) };
	run_init(sink.run);
	struct dask_config cfg = { .url = url, .interval = 1.0 };
	char err[256];
	struct dask *d = dask_open(&cfg, sink_deliver, &sink, err, sizeof(err));
	if (!d) {
		fprintf(stderr, "bench_poll: %s\n", err);
		exit(1);
	}
	double c0 = clock_cpu(), t0 = clock_mono();
	while (clock_mono() - t0 < cpu_seconds) {
		struct pollfd pfd[SOURCE_MAX_FDS];
		size_t k = dask_pollfds(d, pfd, SOURCE_MAX_FDS);
		if (poll(pfd, k, 100) > 0)
			dask_dispatch(d, pfd, k, 1.8e9 + clock_mono());
	}
	double pct = 100.0 * (clock_cpu() - c0) / (clock_mono() - t0);
	*samples = sink.samples;
	dask_close(d);
	run_destroy(sink.run);
	free(sink.run);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return pct;
}

int main(void)
{
	if (bench_smoke()) {
		parse_rounds = 3;
		cpu_seconds = 2.0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("bench poll_parse_2000_workers: %.2f ms (target < 20)\n", parse_apply_ms(false, 2000));
	printf("bench poll_parse_identity_2000_workers: %.2f ms (target < 20)\n",
	       parse_apply_ms(true, 2000));
	uint64_t samples = 0;
	double pct = poll_cpu_percent(10000, &samples);
	/* one a second, less the first poll's and the last one's */
	double want = cpu_seconds > 3 ? cpu_seconds - 2 : 1;
	if ((double)samples < want) {
		fprintf(stderr, "bench_poll: only %llu samples in %.0f s\n", (unsigned long long)samples,
			cpu_seconds);
		return 1;
	}
	printf("bench poll_cpu_10000_workers: %.2f %% (target < 10)\n", pct);
	return 0;
}
