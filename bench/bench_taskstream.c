/* The task stream's cost in roastop (docs/metrics.md, "Dask tasks"):
 *   bench taskstream_cpu_per_1000     parse + model, CPU ms per 1,000 messages of
 *                                     the shape distributed sends, 1,000 prefixes,
 *                                     64 workers, a transfer every fourth task
 *   bench taskstream_model_bytes      what one run's model holds after a million
 *                                     tasks of 5,000 prefixes on 100 workers (its
 *                                     caps): its charge to the session's pool
 * BENCH_SMOKE=1 (make bench-smoke): 10,000 messages each; the figures then
 * mean nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roastop/clock.h"
#include "roastop/tasks.h"
#include "roastop/taskstream.h"
#include "bench.h"

/* Messages per measurement: bench_smoke() shrinks it. */
static unsigned n_msg = 1000000;


static size_t message(char *buf, size_t size, unsigned i, unsigned prefixes, unsigned workers)
{
	double t0 = 1795561108.0 + i * 1e-3;
	const char *action = i % 4 == 3 ? "transfer" : "compute";
	return (size_t)snprintf(
		buf, size,
		"{\"key\": [\"op%u-082f3fca5b79e16de971fafa73b5ddf1\", %u, 0], \"name\": \"transition\", "
		"\"color\": \"#FDE724\", \"stimulus_id\": \"task-finished-1795561108.2237601\", "
		"\"worker\": \"tcp://10.0.0.%u:40877\", \"metadata\": {}, \"nbytes\": 8, \"typename\": "
		"\"numpy.ndarray\", \"thread\": 139825026254528, \"startstops\": [{\"action\": \"%s\", "
		"\"start\": %.6f, \"stop\": %.6f}], \"status\": \"OK\", \"action\": \"%s\", \"start\": "
		"%.6f, \"stop\": %.6f}",
		i % prefixes, i, i % workers, action, t0, t0 + 0.01, action, t0, t0 + 0.01);
}

static double run(struct tasks *t, unsigned prefixes, unsigned workers)
{
	static char buf[1024];
	struct event ev;
	event_init(&ev);
	double cpu0 = clock_cpu();
	for (unsigned i = 0; i < n_msg; i++) {
		size_t n = message(buf, sizeof(buf), i, prefixes, workers);
		if (taskstream_parse(buf, n, &ev) != TSP_TASK)
			abort();
		tasks_apply(t, &ev.u.task, 0);
	}
	double cpu = clock_cpu() - cpu0;
	event_free(&ev);
	return cpu;
}

int main(void)
{
	if (bench_smoke())
		n_msg = 10000;
	struct tasks t;
	tasks_init(&t);
	double cpu = run(&t, 1000, 64);
	/* the message's formatting is the bench's own: timed alone and taken out */
	static char buf[1024];
	double f0 = clock_cpu();
	size_t sink = 0;
	for (unsigned i = 0; i < n_msg; i++)
		sink += message(buf, sizeof(buf), i, 1000, 64);
	double fmt = clock_cpu() - f0;
	printf("bench taskstream_cpu_per_1000: %.3f ms (target <= 10)\n",
	       (cpu - fmt) / (n_msg / 1000.0) * 1e3);
	tasks_free(&t);
	tasks_init(&t);
	struct strmap_pool pool = { 0, SIZE_MAX };
	tasks_set_pool(&t, &pool);
	run(&t, 5000, 100);
	size_t bytes = pool.used;
	printf("bench taskstream_model_bytes: %.2f MiB (target <= 4)\n", (double)bytes / (1 << 20));
	fprintf(stderr, "  (%zu prefixes held, %llu tasks past the cap; %zu bytes formatted)\n", t.n,
		(unsigned long long)t.prefix_overflow, sink);
	tasks_free(&t);
	return 0;
}
