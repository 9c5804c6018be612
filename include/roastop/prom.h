/* A parser for the Prometheus text exposition format (version 0.0.4), as
 * the Dask scheduler and workers serve it on /metrics. Hostile input is
 * bounded (line, name, label and count limits) and every rejected line is
 * counted by reason; good lines around it are still delivered. */
#ifndef ROASTOP_PROM_H
#define ROASTOP_PROM_H

#include "roastop/common.h"

#define PROM_MAX_LINE 65536
#define PROM_MAX_NAME 256
#define PROM_MAX_LABELS 32
#define PROM_MAX_VALUE 4096 /* bytes of one label value */

struct prom_label {
	const char *name, *value;
};

struct prom_sample {
	const char *name;
	size_t n_labels;
	struct prom_label labels[PROM_MAX_LABELS];
	double value; /* NaN and +/-Inf are legal in this format */
	bool has_timestamp;
	int64_t timestamp_ms;
};

enum prom_error {
	PROM_OK = 0,
	PROM_LINE_TOO_LONG,
	PROM_BAD_NAME,
	PROM_BAD_LABELS,
	PROM_TOO_MANY_LABELS,
	PROM_BAD_VALUE,
	PROM_BAD_TIMESTAMP,
	PROM_TRAILING,
	PROM__COUNT
};

struct prom_stats {
	uint64_t samples, comments;
	uint64_t rejected[PROM__COUNT];
	uint64_t first_bad_line; /* 1-based, 0 = none */
};

/* Called for each sample; its strings live until the callback returns. */
typedef void (*prom_sample_fn)(void *ctx, const struct prom_sample *s);

void prom_parse(const char *text, size_t len, prom_sample_fn fn, void *ctx,
		struct prom_stats *st);
/* The value of label `name` in s, or NULL. */
const char *prom_label(const struct prom_sample *s, const char *name);

#endif
