/* A growable byte buffer for building text (JSON lines, summary tables). */
#ifndef ROASTOP_STRBUF_H
#define ROASTOP_STRBUF_H

#include "roastop/common.h"

struct strbuf {
	char *data; /* always NUL-terminated when cap > 0 */
	size_t len;
	size_t cap;
	bool failed; /* an allocation failed: contents are incomplete */
};

void strbuf_init(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_append(struct strbuf *sb, const char *s, size_t len);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_appendf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal with quotes; control characters escaped, \b and
 * \f as such when short_bf (cJSON's way), else as \u00XX. */
void strbuf_json_string_as(struct strbuf *sb, const char *s, bool short_bf);
void strbuf_json_string(struct strbuf *sb, const char *s);
/* A finite number as text that reads back to the same double: integers
 * below 2^53 as integers, exact decimals of up to 6 places as such
 * ("1767225600.036"), anything else with %.17g. Non-finite: null. No
 * printf on the first two paths: the recorder calls this per number. */
void strbuf_json_number(struct strbuf *sb, double v);

#endif
