#include "roastop/clock.h"

#include <stdbool.h>
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

static bool session_set;
static double session_wall0, session_mono0;

double clock_session(void)
{
	double mono = clock_mono();
	if (!session_set) {
		session_wall0 = clock_read(CLOCK_REALTIME);
		session_mono0 = mono;
		session_set = true;
	}
	return session_wall0 + (mono - session_mono0);
}

double clock_session_offset(void)
{
	double session = clock_session();
	return clock_read(CLOCK_REALTIME) - session;
}

double clock_cpu(void)
{
	return clock_read(CLOCK_PROCESS_CPUTIME_ID);
}
