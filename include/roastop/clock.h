/* The clocks roastop reads, in seconds as doubles. */
#ifndef ROASTOP_CLOCK_H
#define ROASTOP_CLOCK_H

/* CLOCK_MONOTONIC: intervals, timeouts, pacing. */
double clock_mono(void);
/* The time stamped on live events: CLOCK_REALTIME read once, at the first
 * call, plus CLOCK_MONOTONIC time since. It never steps back and a step of
 * the system clock does not move it, so elapsed times and the order of
 * samples survive an NTP step or a `date -s` (docs/metrics.md, "Time"). */
double clock_session(void);
/* The system clock (CLOCK_REALTIME) - clock_session(): how far the system clock has been
 * stepped (or has drifted) since the session's clock was anchored. */
double clock_session_offset(void);

#endif
