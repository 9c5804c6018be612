/* What every benchmark shares: its smoke mode and its settings from the
 * environment. Header-only: each benchmark is one program. */
#ifndef ROASTOP_BENCH_H
#define ROASTOP_BENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* BENCH_SMOKE=1 (make bench-smoke): every measurement run briefly, every
 * line printed; the figures then mean nothing. */
static inline bool bench_smoke(void)
{
	const char *v = getenv("BENCH_SMOKE");
	return v && strcmp(v, "1") == 0;
}

/* The environment's value of name, else dflt. */
static inline const char *bench_env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

/* In a child just forked from parent: killed when the parent ends, however
 * it ends (a signal, a timeout), so no process of a benchmark outlives it;
 * exec keeps it so. */
static inline void bench_die_with(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(1);
}

/* fork(), the child ending with its parent (bench_die_with). */
static inline pid_t bench_fork(void)
{
	pid_t parent = getpid(), pid = fork();
	if (pid == 0)
		bench_die_with(parent);
	return pid;
}

#endif
