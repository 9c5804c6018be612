/* The clocks roastop reads, in seconds as doubles. */
#ifndef ROASTOP_CLOCK_H
#define ROASTOP_CLOCK_H

/* CLOCK_MONOTONIC: intervals, timeouts, pacing. */
double clock_mono(void);
/* The time stamped on live events: CLOCK_REALTIME at the first call plus
 * CLOCK_MONOTONIC time since, so a step of the system clock does not move
 * it (docs/metrics.md, "Time"). */
double clock_session(void);
/* CLOCK_REALTIME - clock_session(): how far the system clock has stepped
 * or drifted since the session began. */
double clock_session_offset(void);
/* CLOCK_PROCESS_CPUTIME_ID: this process's CPU time, user and system (the benchmarks'). */
double clock_cpu(void);

#endif
