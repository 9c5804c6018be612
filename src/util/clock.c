#include "roastop/clock.h"

#include <time.h>

static double clock_read(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double clock_mono(void)
{
	return clock_read(CLOCK_MONOTONIC);
}

double clock_real(void)
{
	return clock_read(CLOCK_REALTIME);
}

double clock_cpu(void)
{
	return clock_read(CLOCK_PROCESS_CPUTIME_ID);
}
