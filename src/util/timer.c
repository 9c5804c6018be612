/* One copy of the timerfd arithmetic: the loop's timers and the Dask
 * poller's both come through here. */
#include "roastop/timer.h"

#include <math.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static struct timespec timer_spec(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - floor(s)) * 1e9) };
	return ts;
}

void timer_set_periodic(int fd, double first, double period)
{
	struct itimerspec it = { .it_value = timer_spec(first), .it_interval = timer_spec(period) };
	if (it.it_value.tv_sec == 0 && it.it_value.tv_nsec == 0)
		it.it_value.tv_nsec = 1; /* 0 would disarm */
	timerfd_settime(fd, 0, &it, NULL);
}

void timer_set(int fd, double seconds)
{
	if (seconds >= 0) {
		timer_set_periodic(fd, seconds, 0);
		return;
	}
	struct itimerspec off = { 0 };
	timerfd_settime(fd, 0, &off, NULL);
}

int timer_open(double first, double period)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd >= 0 && first > 0)
		timer_set_periodic(fd, first, period);
	return fd;
}

void timer_drain(int fd)
{
	uint64_t n;
	while (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		;
}

double timer_backoff(unsigned failures, double max)
{
	if (failures == 0)
		return 0.0;
	double s = ldexp(1.0, (int)(failures > 16 ? 16 : failures) - 1);
	return s < max ? s : max;
}
