/* Monotonic, non-blocking timerfds armed in seconds. */
#ifndef ROASTOP_TIMER_H
#define ROASTOP_TIMER_H

/* A timer first firing after `first` seconds (<= 0: disarmed) and then
 * every `period` seconds (0: once); -1 with errno when it cannot be made. */
int timer_open(double first, double period);
/* Arms fd to fire once after `seconds` (0 fires at once); < 0 disarms. */
void timer_set(int fd, double seconds);
/* Arms fd to fire after `first` seconds, then every `period` (0: once). */
void timer_set_periodic(int fd, double first, double period);
/* Reads what has expired, so the descriptor stops being readable. */
void timer_drain(int fd);
/* Seconds before retry number `failures` of a lost peer: 0 before any,
 * then 1, 2, 4, ... up to max. */
double timer_backoff(unsigned failures, double max);

#endif
