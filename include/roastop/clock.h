/* The two clocks roastop reads, in seconds as doubles. */
#ifndef ROASTOP_CLOCK_H
#define ROASTOP_CLOCK_H

/* CLOCK_MONOTONIC: intervals, timeouts, pacing. */
double clock_mono(void);
/* CLOCK_REALTIME: seconds since the epoch, the time stamped on events. */
double clock_real(void);
/* CLOCK_PROCESS_CPUTIME_ID: this process's CPU time, user and system. */
double clock_cpu(void);

#endif
