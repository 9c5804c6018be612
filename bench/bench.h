/* What every benchmark shares: its smoke mode and its settings from the
 * environment. Header-only: each benchmark is one program. */
#ifndef ROASTOP_BENCH_H
#define ROASTOP_BENCH_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

#endif
