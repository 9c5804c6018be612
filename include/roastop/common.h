/* Shared small types: the "valid bit" number and version. */
#ifndef ROASTOP_COMMON_H
#define ROASTOP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROASTOP_VERSION "0.1.0"

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
