/* Shared small types: the "valid bit" number and version. */
#ifndef ROASTOP_COMMON_H
#define ROASTOP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ROASTOP_VERSION comes from the build (Makefile: python/roastop/__init__.py). */
#ifndef ROASTOP_VERSION
#error "ROASTOP_VERSION is defined by the Makefile"
#endif

/* A number an external source may omit (nvtop's habit): when !valid the
 * screen shows "n/a" and exporters write null or leave the key out. */
typedef struct optnum {
	double value;
	bool valid;
} optnum;

static inline optnum optnum_of(double v)
{
	return (optnum){ .value = v, .valid = true };
}

static inline optnum optnum_none(void)
{
	return (optnum){ .value = 0.0, .valid = false };
}

#define ROASTOP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
