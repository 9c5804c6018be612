/* What cJSON does not check in a line: RFC 8259's lexical rules (cJSON
 * takes "01", "1.", raw control bytes in strings, any byte <= 0x20 as
 * whitespace), roastop's nesting bound, escapes that make bad UTF-8, and
 * numbers too long to read. One pass, no allocation. */
#ifndef ROASTOP_JSON_CHECK_H
#define ROASTOP_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "roastop/event_json.h"

#define JSON_NUMBER_MAX 63 /* characters of a number cJSON reads whole */

/* DEC_OK, or the first of DEC_NOT_JSON, DEC_TOO_DEEP, DEC_BAD_UTF8 (a lone
 * surrogate or \u0000) or DEC_OUT_OF_RANGE (a number over JSON_NUMBER_MAX
 * characters). The grammar between tokens is cJSON's to check. */
enum decode_error json_check(const char *text, size_t len, int max_depth);

/* The value texts of the top-level object's members, in order, of a text
 * json_check and cJSON accepted (a chunk keeps unknown fields as written). */
struct json_members {
	const char *p, *end;
};

void json_members_init(struct json_members *m, const char *text, size_t len);
/* The next member's value text; false after the last. */
bool json_members_next(struct json_members *m, const char **value, size_t *len);

#endif
