/* Shared bits for the cmocka unit tests. */
#ifndef ROASTOP_TEST_UTIL_H
#define ROASTOP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "roastop/event.h"

#define assert_near(a, b, tol) \
	assert_true(fabs((double)(a) - (double)(b)) <= (tol) * fmax(1.0, fabs((double)(b))))

/* An empty event of a type at a receive time, for tests that build
 * events by hand as the real sources would. */
static inline struct event test_event(enum event_type type, double t)
{
	struct event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.t = t;
	return ev;
}

#endif
