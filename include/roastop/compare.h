/* roastop compare DIR_A DIR_B (docs/compare.md): two measurement
 * directories, roastop's or roastcoffea's, side by side: each headline
 * number of A and B and the change (metrics_change), and the findings each
 * run had. The numbers are those the measurement's metrics.json holds
 * (metrics_read_json: the writer's key tables); nothing is computed here. */
#ifndef ROASTOP_COMPARE_H
#define ROASTOP_COMPARE_H

#include <stdio.h>

#include "roastop/metrics.h"
#include "roastop/previous.h"
#include "roastop/strbuf.h"

#define COMPARE_MAX_BYTES (64u << 20) /* a larger metrics.json is refused */
#define COMPARE_MAX_FINDINGS 32u /* listed per side; the others counted */
#define COMPARE_TEXT 160u
#define COMPARE_DATASETS PAST_DATASETS /* per_dataset entries kept, in the file's order */

/* How a headline number prints: the formatter the report uses for it. */
enum compare_kind { CK_DURATION, CK_COUNT, CK_KHZ, CK_GBPS, CK_BYTES, CK_FIXED, CK_FRACTION,
		    CK_PERCENT };

/* A headline number (report.html's cards, compare's rows): its label, its
 * key in metrics.json, and how it prints. */
struct compare_row {
	const char *label, *key;
	size_t off; /* of an optnum in struct metrics */
	enum compare_kind kind;
	const char *fmt; /* CK_FIXED's printf format */
};

#define COMPARE_ROW(label, f, kind, fmt) { label, #f, offsetof(struct metrics, f), kind, fmt }

struct compare_finding {
	char id[64];
	char severity[16];
	char title[COMPARE_TEXT];
};

/* One loaded measurement. */
struct compare_side {
	char path[COMPARE_TEXT]; /* the metrics.json read, as given (its end) */
	char writer[64]; /* "roastop 0.4.0", or "roastcoffea" (no roastop block) */
	char run[COMPARE_TEXT]; /* run name and status, or "" */
	char name[96], status[16]; /* run_name and run_status, "" absent */
	size_t n_datasets;
	struct past_dataset datasets[COMPARE_DATASETS];
	struct past_file *files; /* NULL, or PAST_FILES to fill from raw_chunk_metrics */
	size_t n_files;
	bool has_identity; /* roastop.identity was there */
	struct identity id;
	struct metrics m;
	bool has_findings; /* metrics.json had roastop.findings */
	size_t n_findings; /* kept, at most COMPARE_MAX_FINDINGS */
	size_t findings_total; /* in the array */
	struct compare_finding findings[COMPARE_MAX_FINDINGS];
};

/* Reads DIR/metrics.json, or DIR/latest/metrics.json (an output root). 0,
 * or -1 with one line in err. */
int compare_load(const char *dir, struct compare_side *s, char *err, size_t errsz);
/* path (under the directory dfd, or AT_FDCWD; open(2) flags added) whole,
 * NUL-terminated, at most COMPARE_MAX_BYTES. NULL with one line in err, and
 * *absent when it could not be opened or is no regular file. */
char *compare_read_at(int dfd, const char *path, int flags, bool *absent, char *err,
		      size_t errsz);
/* The measurement in text (a metrics.json, NUL-terminated; changed in
 * place) into s, whose path names it in err; its per-file figures only when
 * s->files is set. 0, or -1 with one line in err. */
int compare_parse(char *text, struct compare_side *s, char *err, size_t errsz);
/* The row's value v as it prints (buf, FMT_LEN bytes). */
const char *compare_format(char *buf, const struct compare_row *row, optnum v);
/* The comparison as text, A then B, lines of at most 80 columns. */
void compare_write(struct strbuf *o, const struct compare_side *a, const struct compare_side *b);
/* The command: the comparison on out, or a line on errs. Exit status: 0,
 * or 1 when a measurement could not be read. */
int compare_main(const char *dir_a, const char *dir_b, FILE *out, FILE *errs);

#endif
