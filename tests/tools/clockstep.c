/* An LD_PRELOAD shim that steps the wall clock of the process it is loaded
 * into, for tests/integration/test_time.py: CLOCK_REALTIME (and its coarse
 * form), gettimeofday() and time() read as the real time plus an offset in
 * seconds, read from the file named by CLOCKSTEP_FILE (no file, or no
 * number in it: 0). The test writes the file while roastop runs: a step,
 * as NTP or `date -s` would make one. CLOCK_MONOTONIC is left alone.
 *
 * The file is read again at most every 10 ms (of monotonic time), so a
 * loop reading the clock does not read the file each time. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

#define REREAD_NS 10000000LL

static clock_gettime_fn real_clock_gettime(void)
{
	static clock_gettime_fn fn;
	if (!fn)
		fn = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	return fn;
}

static long long offset_ns(void)
{
	static long long cached, read_at = -1;
	struct timespec now;
	real_clock_gettime()(CLOCK_MONOTONIC, &now);
	long long mono = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
	if (read_at >= 0 && mono - read_at < REREAD_NS)
		return cached;
	read_at = mono;
	const char *path = getenv("CLOCKSTEP_FILE");
	FILE *f = path ? fopen(path, "r") : NULL;
	double seconds = 0;
	if (f) {
		if (fscanf(f, "%lf", &seconds) != 1)
			seconds = 0;
		fclose(f);
	}
	cached = (long long)(seconds * 1e9);
	return cached;
}

static void shift(struct timespec *ts, long long ns)
{
	long long t = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + ns;
	ts->tv_sec = (time_t)(t / 1000000000LL);
	ts->tv_nsec = (long)(t % 1000000000LL);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int rc = real_clock_gettime()(id, ts);
	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		shift(ts, offset_ns());
	return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	(void)tz;
	struct timespec ts;
	int rc = clock_gettime(CLOCK_REALTIME, &ts);
	if (rc == 0) {
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return rc;
}

time_t time(time_t *out)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (out)
		*out = ts.tv_sec;
	return ts.tv_sec;
}
