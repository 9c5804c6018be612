/* Shared bits for the cmocka unit tests. */
#ifndef ROASTOP_TEST_UTIL_H
#define ROASTOP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
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

/* word as a token of its own in text, not inside a name (chunk_info):
 * a JSON number written as nan or inf. */
static inline bool has_token(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
		bool before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		bool after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return true;
	}
	return false;
}

#endif
