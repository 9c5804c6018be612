/* The measurement at 10 M chunks (issue 21):
 *   bench metrics_json_size_10m   metrics.json's size
 *   bench metrics_json_write_10m  metrics_compute + measurement_write
 * A gen_recording of 200,000 chunks and 2,000 workers over half an hour is
 * applied 50 times over, each pass 30 minutes after the one before (its
 * chunk and sample events; 25 hours in all), to one run: 10 M chunks, the
 * raw records a 10,000-record sample of them, every table at its run's
 * size. Then the measurement is written as the app writes a run's.
 * BENCH_SMOKE=1 (make bench-smoke): 2,000 chunks of 200 workers, twice; the
 * figures then mean nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roastop/clock.h"
#include "roastop/event.h"
#include "roastop/event_json.h"
#include "roastop/measurement.h"
#include "roastop/run.h"
#include "bench.h"

#define PASS_SECONDS 1800.0

/* The recording and how often it is applied: bench_smoke() shrinks them. */
static int passes = 50;
static const char *gen_args = "--chunks 200000 --workers 2000 --hours 0.5 --sample-interval 60 "
			      "--datasets 40 --files 16000 --fail-every 1000";



/* The recording's chunk and sample events, decoded, in its order. */
static struct event *decode_recording(const char *cmd, size_t *n_out)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t cap = 1 << 18, n = 0, lcap = 1 << 20;
	struct event *evs = calloc(cap, sizeof(*evs));
	char *line = malloc(lcap);
	ssize_t l;
	while (evs && (l = getline(&line, &lcap, p)) > 0) {
		if (n == cap) {
			struct event *more = realloc(evs, 2 * cap * sizeof(*evs));
			if (!more)
				break;
			memset(more + cap, 0, cap * sizeof(*more));
			evs = more;
			cap *= 2;
		}
		event_init(&evs[n]);
		if (event_decode_json(line, (size_t)l, &evs[n]) == DEC_OK &&
		    (evs[n].type == EV_CHUNK || evs[n].type == EV_SAMPLE))
			n++;
		else
			event_free(&evs[n]);
	}
	free(line);
	if (pclose(p) != 0 || !evs) {
		fprintf(stderr, "bench_measurement: %s failed\n", cmd);
		exit(1);
	}
	*n_out = n;
	return evs;
}

int main(void)
{
	if (bench_smoke()) {
		passes = 2;
		gen_args = "--chunks 2000 --workers 200 --hours 0.5 --sample-interval 60 "
			   "--datasets 40 --files 160 --fail-every 1000";
	}
	const char *build = bench_env_or("BUILD", "build");
	char cmd[800], dir[512], file[600];
	snprintf(cmd, sizeof(cmd), "%s/tools/gen_recording %s", build, gen_args);
	size_t n = 0;
	struct event *evs = decode_recording(cmd, &n);
	struct run *r = malloc(sizeof(*r));
	if (!evs || !r || run_init(r) != 0)
		return 1;
	double t_first = evs[0].t, t = t_first;
	for (int pass = 0; pass < passes; pass++) {
		for (size_t i = 0; i < n; i++) {
			double t0 = evs[i].t;
			evs[i].t = t = t0 + pass * PASS_SECONDS;
			run_apply(r, &evs[i]);
			evs[i].t = t0;
		}
	}
	snprintf(dir, sizeof(dir), "%s/bench-measurement-10m", build);
	struct metrics *m = malloc(sizeof(*m));
	char err[256];
	double start = clock_mono();
	metrics_compute(r, t, NULL, m);
	int rc = measurement_write(dir, m, r, NULL, NULL, err, sizeof(err));
	double ms = (clock_mono() - start) * 1e3;
	snprintf(file, sizeof(file), "%s/metrics.json", dir);
	struct stat st;
	if (rc != 0 || stat(file, &st) != 0) {
		fprintf(stderr, "bench_measurement: %s %s\n", err, strerror(errno));
		return 1;
	}
	fprintf(stderr, "bench_measurement: %.0f chunks, %zu records kept, %zu workers\n",
		(double)r->n_chunks, r->raw.n, r->workers.count);
	printf("bench metrics_json_size_10m: %.1f MiB (target <= 20)\n",
	       (double)st.st_size / (1 << 20));
	printf("bench metrics_json_write_10m: %.0f ms (target <= 1000)\n", ms);
	run_destroy(r);
	free(r);
	free(m);
	for (size_t i = 0; i < n; i++)
		event_free(&evs[i]);
	free(evs);
	return 0;
}
