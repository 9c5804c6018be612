/* The lexical half of strict JSON, ahead of cJSON (json_check.h says why).
 * A token is checked where it stands; which token may follow which is left
 * to cJSON, which refuses every misplaced one. */
#include "roastop/json_check.h"
#include "roastop/strutil.h"

#include <stdint.h>
#include <string.h>

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(const char *p, const char *end)
{
	return p < end && (unsigned)(*p - '0') < 10;
}

/* What may follow a number or a literal: cJSON would read "01" as 1 and
 * "1.5.2" as far as it could. */
static bool is_delim(const char *p, const char *end)
{
	return p == end || is_ws(*p) || *p == ',' || *p == ']' || *p == '}';
}

static int hex4(const char *p, const char *end, uint32_t *out)
{
	if (end - p < 4)
		return -1;
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int h = strutil_hexval(p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | (uint32_t)h;
	}
	*out = v;
	return 0;
}

/* \uXXXX at p (after the backslash and u): a surrogate pair is one
 * character; a lone surrogate or U+0000 is no UTF-8 a string may hold. */
static enum decode_error check_u(const char **pp, const char *end)
{
	const char *p = *pp;
	uint32_t cp, lo;
	if (hex4(p, end, &cp))
		return DEC_NOT_JSON;
	p += 4;
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (end - p < 2 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, end, &lo) ||
		    lo < 0xDC00 || lo > 0xDFFF)
			return DEC_BAD_UTF8;
		p += 6;
	} else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0) {
		return DEC_BAD_UTF8;
	}
	*pp = p - 1; /* the caller steps past the last byte */
	return DEC_OK;
}

/* A string from its opening quote; *pp ends after the closing one. */
static enum decode_error check_string(const char **pp, const char *end)
{
	for (const char *p = *pp + 1; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (c > '\\' || (c >= 0x20 && c != '"' && c != '\\'))
			continue; /* an ordinary byte; a lowercase one is settled by the first test */
		if (c == '"') {
			*pp = p + 1;
			return DEC_OK;
		}
		if (c < 0x20)
			return DEC_NOT_JSON;
		if (++p == end || !memchr("\"\\/bfnrtu", *p, 9))
			return DEC_NOT_JSON;
		p++;
		if (p[-1] == 'u') {
			enum decode_error e = check_u(&p, end);
			if (e)
				return e;
		} else {
			p--;
		}
	}
	return DEC_NOT_JSON;
}

/* RFC 8259's number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static enum decode_error check_number(const char **pp, const char *end)
{
	const char *s = *pp, *p = s;
	p += p < end && *p == '-';
	if (!is_digit(p, end))
		return DEC_NOT_JSON;
	if (*p == '0')
		p++;
	else
		while (is_digit(p, end))
			p++;
	if (p < end && *p == '.') {
		if (!is_digit(++p, end))
			return DEC_NOT_JSON;
		while (is_digit(p, end))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		p += p < end && (*p == '+' || *p == '-');
		if (!is_digit(p, end))
			return DEC_NOT_JSON;
		while (is_digit(p, end))
			p++;
	}
	if (!is_delim(p, end))
		return DEC_NOT_JSON;
	*pp = p;
	return p - s > JSON_NUMBER_MAX ? DEC_OUT_OF_RANGE : DEC_OK;
}

static enum decode_error check_literal(const char **pp, const char *end)
{
	static const char *const words[] = { "true", "false", "null" };
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);
		if ((size_t)(end - *pp) >= n && memcmp(*pp, words[i], n) == 0 &&
		    is_delim(*pp + n, end)) {
			*pp += n;
			return DEC_OK;
		}
	}
	return DEC_NOT_JSON;
}

enum decode_error json_check(const char *text, size_t len, int max_depth)
{
	const char *p = text, *end = text + len;
	int depth = 0;
	while (p < end) {
		enum decode_error e = DEC_OK;
		char c = *p;
		if (is_ws(c) || c == ',' || c == ':') {
			p++;
		} else if (c == '{' || c == '[') {
			if (++depth > max_depth)
				return DEC_TOO_DEEP;
			p++;
		} else if (c == '}' || c == ']') {
			depth--;
			p++;
		} else if (c == '"') {
			e = check_string(&p, end);
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			e = check_number(&p, end);
		} else {
			e = check_literal(&p, end);
		}
		if (e)
			return e;
	}
	return DEC_OK;
}

static void skip_ws(struct json_members *m)
{
	while (m->p < m->end && is_ws(*m->p))
		m->p++;
}

/* Past a checked string, from its opening quote. */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end && *p != '"'; p++)
		if (*p == '\\')
			p++;
	return p < end ? p + 1 : end;
}

/* Past one checked value: a string, a container (its strings may hold
 * brackets) or a number or literal. */
static const char *skip_value(const char *p, const char *end)
{
	if (p < end && *p == '"')
		return skip_string(p, end);
	int depth = 0;
	while (p < end) {
		char c = *p;
		if (c == '"') {
			p = skip_string(p, end);
			continue;
		}
		if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
		if (depth < 0 || (depth == 0 && (c == ',' || is_ws(c))))
			return p; /* the end of a scalar, or of the object around it */
		p++;
		if (depth == 0 && (c == '}' || c == ']'))
			return p;
	}
	return p;
}

void json_members_init(struct json_members *m, const char *text, size_t len)
{
	m->p = text;
	m->end = text + len;
	skip_ws(m);
	m->p += m->p < m->end; /* the opening brace */
}

bool json_members_next(struct json_members *m, const char **value, size_t *len)
{
	skip_ws(m);
	if (m->p >= m->end || *m->p != '"')
		return false;
	m->p = skip_string(m->p, m->end);
	skip_ws(m);
	m->p += m->p < m->end; /* the colon */
	skip_ws(m);
	*value = m->p;
	m->p = skip_value(m->p, m->end);
	*len = (size_t)(m->p - *value);
	skip_ws(m);
	m->p += m->p < m->end && *m->p == ',';
	return true;
}
