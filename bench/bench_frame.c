/* Dashboard benchmarks (issue 5).
 *   bench frame_time_10000_workers  metrics_compute + a full repaint of the
 *                                   workers view, 10,000 workers, 200x60
 *   bench frame_time_1000_workers   the same for the main view (timelines,
 *                                   histogram, breakdown), 1,000 workers
 *   bench ui_cpu_1000_workers_1hz   CPU share of a core the 1 Hz redraw of
 *                                   the main view costs with 1,000 workers
 *   bench process_cpu_1000_workers_1hz  the whole roastop process with its
 *                                   dashboard on a pseudo-terminal, replaying
 *                                   at real speed a run of 1,000 workers
 *                                   sampled every second (plus 300 chunks/s):
 *                                   utime + stime from /proc over 20 s
 * Each run holds a 1,000,000-chunk histogram and 240 scheduler samples. The
 * screen is a real ncurses terminal (TERM=xterm-256color) writing to
 * /dev/null; every frame repaints every cell (Ctrl-L), the worst case.
 * BENCH_SMOKE=1 (make bench-smoke): the same steps on small runs, a few
 * frames and seconds; the figures then mean nothing. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "roastop/clock.h"
#include "roastop/metrics.h"
#include "roastop/run.h"
#include "roastop/ui.h"
#include "bench.h"

#define T0 1767225600.0

/* The run's size and the frames timed: bench_smoke() shrinks them. */
static int n_chunks = 1000000, n_samples = 240, n_frames = 40;
static double live_warmup = 8.0, live_window = 20.0;


static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double unit(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static void apply(struct run *r, struct event *ev)
{
	if (run_apply(r, ev) != 0) {
		fprintf(stderr, "bench_frame: event not applied\n");
		exit(1);
	}
}

static void run_start(struct run *r)
{
	struct event ev = { .type = EV_RUN_START, .t = T0 };
	ev.u.run_start.run_id = "bench";
	ev.u.run_start.name = "frame benchmark";
	ev.u.run_start.processor = "Proc";
	ev.u.run_start.expected_events = optnum_of(n_chunks * 1.5e5);
	apply(r, &ev);
}

static void samples(struct run *r, size_t n_workers)
{
	struct worker_sample *ws = calloc(n_workers, sizeof(*ws));
	char (*ids)[32] = calloc(n_workers, 32);
	if (!ws || !ids)
		exit(1);
	for (size_t i = 0; i < n_workers; i++)
		snprintf(ids[i], 32, "tcp://10.%zu.%zu.%zu:4000", i / 65536, i / 256 % 256, i % 256);
	for (int s = 0; s < n_samples; s++) {
		for (size_t i = 0; i < n_workers; i++)
			ws[i] = (struct worker_sample){
				.id = ids[i], .name = ids[i] + 6, .host = "node", .status = "running",
				.nthreads = optnum_of(4), .memory_bytes = optnum_of(2e9 + 2e9 * unit()),
				.memory_limit = optnum_of(4e9), .cpu_percent = optnum_of(100 * unit()),
				.executing = optnum_of((double)(rng % 5)), .processing = optnum_of(4),
			};
		struct event ev = { .type = EV_SAMPLE, .t = T0 + s * 15.0 };
		ev.u.sample = (struct ev_sample){ .source = "state", .dask_version = "2026.7.0",
						  .worker_count = (uint32_t)n_workers,
						  .n_workers = n_workers, .workers = ws };
		apply(r, &ev);
	}
	free(ws);
	free(ids);
}

static void chunks(struct run *r)
{
	static const char *const ds[3] = { "DYJetsToLL_M-50", "TTToSemiLeptonic", "SingleMuon" };
	char file[64];
	for (int i = 0; i < n_chunks; i++) {
		struct event ev = { .type = EV_CHUNK, .t = T0 + i * (n_samples * 15.0 / n_chunks) };
		struct ev_chunk *c = &ev.u.chunk;
		snprintf(file, sizeof(file), "root://eos//store/file_%04d.root", i % 2000);
		c->duration = optnum_of(exp(1.2 + 0.5 * (unit() + unit() + unit() - 1.5)));
		c->num_events = optnum_of(50000 + 100000 * unit());
		c->bytes_read = optnum_of(1e7 * unit());
		c->dataset = ds[i % 3];
		c->file = file;
		c->worker = "tcp://10.0.0.1:4000";
		apply(r, &ev);
	}
}

struct result {
	double wall_ms, cpu_ms;
};

/* The header as a replay of a recording shows it (the frame's source whose
 * state is "recording"), the same work as the dashboard's in --replay. */
static const struct source_stats replay_stats = { .state_key = "recording",
						  .state = "reading",
						  .typed = { .role = SOURCE_RECORDING } };
static const struct ui_source replay_source = { .name = "replay", .st = &replay_stats,
						.target = "bench.jsonl" };

static struct result frames(const struct run *r, enum ui_view view)
{
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	struct ui_config cfg = { .out = out, .in = in, .cols = 200, .rows = 60 };
	char err[256];
	struct ui *ui = out && in ? ui_open(&cfg, err, sizeof(err)) : NULL;
	if (!ui) {
		fprintf(stderr, "bench_frame: %s\n", out && in ? err : "no /dev/null");
		exit(1);
	}
	ui_set_view(ui, view);
	struct metrics m;
	double now = r->t_last;
	double w0 = clock_mono(), c0 = clock_cpu();
	for (int i = 0; i < n_frames; i++) {
		metrics_compute(r, now, NULL, &m);
		struct ui_frame f = { .run = r, .m = &m, .sources = &replay_source, .n_sources = 1,
				      .now = now };
		ui_invalidate(ui);
		ui_draw(ui, &f);
	}
	struct result res = { (clock_mono() - w0) * 1e3 / n_frames,
			      (clock_cpu() - c0) * 1e3 / n_frames };
	ui_close(ui);
	fclose(out);
	fclose(in);
	return res;
}

static void build(struct run *r, size_t n_workers)
{
	if (run_init(r) != 0)
		exit(1);
	run_start(r);
	samples(r, n_workers);
	chunks(r);
}


/* utime + stime of pid, seconds */
static double proc_cpu(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return NAN;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return NAN;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Reads (and drops) what the child draws until the deadline; returns bytes. */
static size_t drain_until(int fd, double deadline)
{
	char buf[65536];
	size_t total = 0;
	while (clock_mono() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno != EINTR)
			break;
		total += n > 0 ? (size_t)n : 0;
	}
	return total;
}

static double process_cpu(void)
{
	const char *build = bench_env_or("BUILD", "build");
	char rec[512], cmd[1200];
	snprintf(rec, sizeof(rec), "%s/bench-1000-workers.jsonl", build);
	snprintf(cmd, sizeof(cmd), "%s/tools/gen_recording --chunks 12000 --workers 1000 --hours 0.011 "
		 "--sample-interval 1 --datasets 3 --files 200 > %s", build, rec);
	if (system(cmd) != 0)
		return NAN;
	char exe[512], out[512];
	snprintf(exe, sizeof(exe), "%s/roastop", build);
	snprintf(out, sizeof(out), "%s/bench-frame-measurement", build);
	struct winsize ws = { .ws_row = 50, .ws_col = 160 };
	int master;
	pid_t parent = getpid(), pid = forkpty(&master, NULL, NULL, &ws);
	if (pid < 0)
		return NAN;
	if (pid == 0) {
		bench_die_with(parent);
		execl(exe, exe, "--replay", rec, "--speed", "1", "--output", out, (char *)NULL);
		_exit(127);
	}
	drain_until(master, clock_mono() + live_warmup);
	double c0 = proc_cpu(pid), w0 = clock_mono();
	size_t drawn = drain_until(master, w0 + live_window);
	double c1 = proc_cpu(pid), w1 = clock_mono();
	if (write(master, "q", 1) != 1)
		kill(pid, SIGTERM);
	drain_until(master, clock_mono() + 2);
	int status;
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(master);
	unlink(rec);
	/* ~1 kB a second (a frame's changes at 1 Hz): else the dashboard did not run */
	if ((double)drawn < live_window * 1000) {
		fprintf(stderr, "bench_frame: the dashboard drew only %zu bytes\n", drawn);
		return NAN;
	}
	return (c1 - c0) / (w1 - w0) * 100;
}

int main(void)
{
	if (bench_smoke()) {
		n_chunks = 10000;
		n_samples = 4;
		n_frames = 2;
		live_warmup = 1.5;
		live_window = 2.0;
	}
	setenv("TERM", "xterm-256color", 1);
	static struct run r;
	build(&r, 10000);
	struct result w = frames(&r, UI_VIEW_WORKERS);
	printf("bench frame_time_10000_workers: %.2f ms (target < 5)\n", w.wall_ms);
	run_destroy(&r);
	build(&r, 1000);
	struct result mw = frames(&r, UI_VIEW_MAIN);
	printf("bench frame_time_1000_workers: %.2f ms (target < 20)\n", mw.wall_ms);
	/* one frame per second: the CPU share is the frame's CPU time per second */
	printf("bench ui_cpu_1000_workers_1hz: %.2f %% (target < 2)\n", mw.cpu_ms / 1000 * 100);
	run_destroy(&r);
	double cpu = process_cpu();
	if (isnan(cpu)) { /* the dashboard did not run: a failure, not a figure */
		printf("bench process_cpu_1000_workers_1hz: n/a %% (target < 2)\n");
		return 1;
	}
	printf("bench process_cpu_1000_workers_1hz: %.2f %% (target < 2)\n", cpu);
	return 0;
}
