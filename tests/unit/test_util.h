/* Shared bits for the cmocka unit tests. */
#ifndef ROASTOP_TEST_UTIL_H
#define ROASTOP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#define assert_near(a, b, tol) \
	assert_true(fabs((double)(a) - (double)(b)) <= (tol) * fmax(1.0, fabs((double)(b))))

#endif
