/* Prometheus text format, line by line: comments and blank lines skipped,
 * each sample line parsed into a stack buffer and handed to the caller. */
#include "roastop/prom.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *prom_label(const struct prom_sample *s, const char *name)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (strcmp(s->labels[i].name, name) == 0)
			return s->labels[i].value;
	return NULL;
}

/* A line being parsed: input cursor, and an output arena for the strings. */
struct line {
	const char *p, *end;
	char *out;
	size_t used, cap;
};

static void blanks(struct line *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t'))
		l->p++;
}

static bool name_char(char c, bool first, bool metric)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	if (metric && c == ':')
		return true;
	return !first && c >= '0' && c <= '9';
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* (metric) or without ':' (label), copied out. */
static const char *take_name(struct line *l, bool metric)
{
	const char *s = l->p;
	while (l->p < l->end && name_char(*l->p, l->p == s, metric))
		l->p++;
	size_t n = (size_t)(l->p - s);
	if (n == 0 || n > PROM_MAX_NAME || l->used + n + 1 > l->cap)
		return NULL;
	char *o = l->out + l->used;
	memcpy(o, s, n);
	o[n] = '\0';
	l->used += n + 1;
	return o;
}

/* "..." with \\ \" \n escapes. */
static const char *take_quoted(struct line *l)
{
	if (l->p >= l->end || *l->p != '"')
		return NULL;
	l->p++;
	char *o = l->out + l->used;
	size_t n = 0;
	while (l->p < l->end && *l->p != '"') {
		char c = *l->p++;
		if (c == '\\') {
			if (l->p >= l->end)
				return NULL;
			c = *l->p++;
			if (c == 'n')
				c = '\n';
			else if (c != '\\' && c != '"')
				return NULL;
		}
		if (n >= PROM_MAX_VALUE || l->used + n + 2 > l->cap)
			return NULL;
		o[n++] = c;
	}
	if (l->p >= l->end)
		return NULL;
	l->p++;
	o[n] = '\0';
	l->used += n + 1;
	return o;
}

static enum prom_error take_labels(struct line *l, struct prom_sample *s)
{
	l->p++; /* '{' */
	for (;;) {
		blanks(l);
		if (l->p < l->end && *l->p == '}') {
			l->p++;
			return PROM_OK;
		}
		if (s->n_labels == PROM_MAX_LABELS)
			return PROM_TOO_MANY_LABELS;
		struct prom_label *lb = &s->labels[s->n_labels];
		lb->name = take_name(l, false);
		blanks(l);
		if (!lb->name || l->p >= l->end || *l->p++ != '=')
			return PROM_BAD_LABELS;
		blanks(l);
		lb->value = take_quoted(l);
		if (!lb->value)
			return PROM_BAD_LABELS;
		s->n_labels++;
		blanks(l);
		if (l->p < l->end && *l->p == ',')
			l->p++;
		else if (l->p >= l->end || *l->p != '}')
			return PROM_BAD_LABELS;
	}
}

/* A float, or NaN / +Inf / -Inf as the format spells them. */
static bool take_value(struct line *l, double *out)
{
	const char *s = l->p;
	while (l->p < l->end && *l->p != ' ' && *l->p != '\t')
		l->p++;
	size_t n = (size_t)(l->p - s);
	char buf[64];
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (strcmp(buf, "NaN") == 0 || strcmp(buf, "Nan") == 0) {
		*out = NAN;
		return true;
	}
	if (strcmp(buf, "+Inf") == 0 || strcmp(buf, "Inf") == 0 || strcmp(buf, "-Inf") == 0) {
		*out = buf[0] == '-' ? -INFINITY : INFINITY;
		return true;
	}
	char *end = NULL;
	*out = strtod(buf, &end);
	/* strtod also takes hex, "inf" and "nan": only plain decimal here */
	return end == buf + n && isfinite(*out) && !strpbrk(buf, "xXnNiI");
}

static enum prom_error parse_sample(struct line *l, struct prom_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->name = take_name(l, true);
	if (!s->name)
		return PROM_BAD_NAME;
	blanks(l);
	if (l->p < l->end && *l->p == '{') {
		enum prom_error e = take_labels(l, s);
		if (e)
			return e;
	}
	blanks(l);
	if (!take_value(l, &s->value))
		return PROM_BAD_VALUE;
	blanks(l);
	if (l->p < l->end) {
		char *end = NULL;
		char buf[32];
		size_t n = (size_t)(l->end - l->p);
		while (n && (l->p[n - 1] == ' ' || l->p[n - 1] == '\t' || l->p[n - 1] == '\r'))
			n--;
		if (n == 0)
			return PROM_OK;
		if (n >= sizeof(buf))
			return PROM_BAD_TIMESTAMP;
		memcpy(buf, l->p, n);
		buf[n] = '\0';
		errno = 0;
		long long ts = strtoll(buf, &end, 10);
		if (end != buf + n)
			return strpbrk(buf, " \t") ? PROM_TRAILING : PROM_BAD_TIMESTAMP;
		if (errno == ERANGE)
			return PROM_BAD_TIMESTAMP; /* strtoll clamped it: not the time given */
		s->has_timestamp = true;
		s->timestamp_ms = ts;
	}
	return PROM_OK;
}

static void reject(struct prom_stats *st, enum prom_error e, uint64_t line_no)
{
	st->rejected[e]++;
	if (!st->first_bad_line)
		st->first_bad_line = line_no;
}

void prom_parse(const char *text, size_t len, prom_sample_fn fn, void *ctx,
		struct prom_stats *st)
{
	memset(st, 0, sizeof(*st));
	char *scratch = malloc(PROM_MAX_LINE + 1);
	if (!scratch)
		return;
	uint64_t line_no = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		line_no++;
		struct line l = { p, eol, scratch, 0, PROM_MAX_LINE };
		p = nl ? nl + 1 : end;
		while (l.end > l.p && l.end[-1] == '\r')
			l.end--;
		blanks(&l);
		if (l.p == l.end)
			continue;
		if (*l.p == '#') {
			st->comments++;
			continue;
		}
		if ((size_t)(l.end - l.p) > PROM_MAX_LINE) {
			reject(st, PROM_LINE_TOO_LONG, line_no);
			continue;
		}
		struct prom_sample s;
		enum prom_error e = parse_sample(&l, &s);
		if (e) {
			reject(st, e, line_no);
			continue;
		}
		st->samples++;
		fn(ctx, &s);
	}
	free(scratch);
}
