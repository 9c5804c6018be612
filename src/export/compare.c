/* roastop compare: two measurements side by side; see compare.h. */
#include "roastop/compare.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "roastop/cjson_lock.h"
#include "roastop/format.h"
#include "roastop/metrics_json.h"
#include "roastop/strutil.h"

#define R COMPARE_ROW

/* report.html's headline numbers, and the chunk figures a chunk size moves. */
static const struct compare_row compare_rows[] = {
	R("Elapsed", elapsed_time_seconds, CK_DURATION, NULL),
	R("Events", total_events, CK_COUNT, NULL),
	R("Event rate (elapsed)", event_rate_elapsed_khz, CK_KHZ, NULL),
	R("Event rate per core", event_rate_core_khz, CK_KHZ, NULL),
	R("Data rate", data_rate_gbps, CK_GBPS, NULL),
	R("Bytes read", total_bytes_read, CK_BYTES, NULL),
	R("Chunks", num_chunks, CK_COUNT, NULL),
	R("Failed chunks", num_failed_chunks, CK_COUNT, NULL),
	R("Retries", chunk_retries, CK_COUNT, NULL),
	R("Mean chunk time", chunk_duration_mean, CK_DURATION, NULL),
	R("Chunk time p99", chunk_duration_p99, CK_DURATION, NULL),
	R("Mean events/chunk", chunk_events_mean, CK_COUNT, NULL),
	R("Workers (time-averaged)", avg_workers, CK_FIXED, "%.2f"),
	R("Cores (time-averaged)", total_cores, CK_FIXED, "%.1f"),
	R("Core efficiency", core_efficiency, CK_FRACTION, NULL),
	R("Speedup", speedup_factor, CK_FIXED, "%.2fx"),
	R("CPU utilization (mean)", cpu_utilization_mean_percent, CK_PERCENT, NULL),
	R("Peak memory (per worker)", peak_memory_bytes, CK_BYTES, NULL),
};

#define LABEL_W 25
#define VALUE_W 13

const char *compare_format(char *buf, const struct compare_row *row, optnum v)
{
	switch (row->kind) {
	case CK_DURATION: return format_duration(buf, v);
	case CK_COUNT: return format_count(buf, v);
	case CK_KHZ: return format_rate(buf, v, 1e3, "Hz");
	case CK_GBPS: return format_rate(buf, v, 1e9, "bps");
	case CK_BYTES: return format_bytes(buf, v);
	case CK_FIXED: return format_num(buf, v, row->fmt);
	case CK_FRACTION:
		return format_num(buf, v.valid ? optnum_of(100 * v.value) : v, "%.1f %%");
	case CK_PERCENT: return format_num(buf, v, "%.1f %%");
	}
	return format_num(buf, optnum_none(), "%g");
}

/* The change: its magnitude in the number's own format (a share's in
 * percentage points), format_change for the rest. */
static void compare_change(char out[FORMAT_CHANGE_LEN], const struct compare_row *row, optnum a,
			   optnum b)
{
	optnum delta, pct;
	metrics_change(a, b, &delta, &pct);
	char mag[FMT_LEN];
	optnum abs_delta = optnum_of(fabs(delta.value));
	if (row->kind == CK_FRACTION || row->kind == CK_PERCENT)
		format_num(mag, row->kind == CK_FRACTION ? optnum_of(100 * abs_delta.value)
							 : abs_delta, "%.1f pp");
	else
		compare_format(mag, row, abs_delta);
	format_change(out, delta, mag, pct);
}

static optnum row_value(const struct compare_side *s, const struct compare_row *row)
{
	return *(const optnum *)((const char *)&s->m + row->off);
}

static void compare_numbers(struct strbuf *o, const struct compare_side *a,
			    const struct compare_side *b)
{
	char va[FMT_LEN], vb[FMT_LEN], ch[FORMAT_CHANGE_LEN];
	strbuf_appendf(o, "%-*s %*s %*s  %s\n", LABEL_W, "", VALUE_W, "A", VALUE_W, "B",
		       "change (B - A)");
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(compare_rows); i++) {
		const struct compare_row *row = &compare_rows[i];
		optnum x = row_value(a, row), y = row_value(b, row);
		compare_change(ch, row, x, y);
		strbuf_appendf(o, "%-*s %*s %*s  %s\n", LABEL_W, row->label, VALUE_W,
			       compare_format(va, row, x), VALUE_W, compare_format(vb, row, y), ch);
	}
}

static void compare_findings(struct strbuf *o, const char *name, const struct compare_side *s)
{
	if (!s->has_findings) {
		strbuf_appendf(o, "  %s  findings: n/a (none recorded: roastcoffea's or an older "
				  "roastop's)\n", name);
		return;
	}
	if (s->findings_total == 0) {
		strbuf_appendf(o, "  %s  no finding\n", name);
		return;
	}
	strbuf_appendf(o, "  %s  %zu finding%s\n", name, s->findings_total,
		       s->findings_total == 1 ? "" : "s");
	for (size_t i = 0; i < s->n_findings; i++) {
		const struct compare_finding *f = &s->findings[i];
		char sev[9], id[25], title[COMPARE_TEXT]; /* cut to fit 80 columns */
		strutil_copy(sev, sizeof(sev), f->severity);
		strutil_copy(id, sizeof(id), f->id);
		strutil_copy(title, 80 - 5 - 9 - strlen(id) - 2 + 1, f->title);
		strbuf_appendf(o, "     %-8s %s: %s\n", sev, id, title);
	}
	if (s->findings_total > s->n_findings)
		strbuf_appendf(o, "     and %zu more (metrics.json)\n",
			       s->findings_total - s->n_findings);
}

/* Whether A and B are the same analysis (identity.h), and what differs. */
static void compare_identity(struct strbuf *o, const struct compare_side *a,
			     const struct compare_side *b)
{
	char differs[64];
	if (!a->has_identity || !b->has_identity) {
		strbuf_puts(o, "analysis: n/a (a side has no roastop.identity)\n");
		return;
	}
	switch (identity_match(&a->id, &b->id, differs, sizeof(differs))) {
	case IDENTITY_SAME: strbuf_puts(o, "analysis: the same\n"); break;
	case IDENTITY_COMPARABLE: strbuf_appendf(o, "analysis: comparable, %s differ\n", differs);
		break;
	case IDENTITY_OTHER: strbuf_puts(o, "analysis: another (not the same processor)\n");
	}
}

void compare_write(struct strbuf *o, const struct compare_side *a, const struct compare_side *b)
{
	const struct compare_side *sides[] = { a, b };
	char path[78], who[78]; /* 80 columns; a longer path keeps its end, the run's directory */
	for (size_t i = 0; i < 2; i++) {
		strutil_copy_tail(path, sizeof(path), sides[i]->path);
		strutil_copy(who, sizeof(who), sides[i]->writer);
		size_t n = strlen(who);
		if (sides[i]->run[0] && n + 2 < sizeof(who)) {
			memcpy(who + n, ", ", 3);
			strutil_copy(who + n + 2, sizeof(who) - n - 2, sides[i]->run);
		}
		strbuf_appendf(o, "%c  %s\n   %s\n", "AB"[i], path, who);
	}
	compare_identity(o, a, b);
	strbuf_puts(o, "\n");
	compare_numbers(o, a, b);
	strbuf_puts(o, "\nFindings\n");
	compare_findings(o, "A", a);
	compare_findings(o, "B", b);
}

/* ---- loading ---------------------------------------------------------- */

/* A string of the file as one line for a terminal. */
static void compare_copy(char *dst, size_t size, const cJSON *v)
{
	strutil_copy_line(dst, size, cJSON_IsString(v) ? v->valuestring : "?");
}

/* Python's json writes NaN, Infinity and -Infinity, which are no JSON:
 * each becomes a string of the same length (not a number: not measured),
 * in place. Strings are skipped whole. */
static void compare_relax(char *s)
{
	static const char *const words[] = { "NaN", "Infinity", "-Infinity" };
	bool in_str = false;
	for (char *p = s; *p; p++) {
		if (in_str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				in_str = false;
			continue;
		}
		if (*p == '"') {
			in_str = true;
			continue;
		}
		for (size_t i = 0; i < ROASTOP_ARRAY_LEN(words); i++) {
			size_t n = strlen(words[i]);
			if (strncmp(p, words[i], n) == 0) {
				p[0] = p[n - 1] = '"';
				p += n - 1;
				break;
			}
		}
	}
}

char *compare_read_at(int dfd, const char *path, int flags, bool *absent, char *err,
		      size_t errsz)
{
	int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | flags);
	struct stat st;
	*absent = fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode);
	if (*absent) {
		snprintf(err, errsz, "%s: %s", path, fd < 0 ? strerror(errno) : "not a file");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	size_t size = (size_t)st.st_size, got = 0;
	char *text = size <= COMPARE_MAX_BYTES ? malloc(size + 1) : NULL;
	ssize_t n = 1;
	while (text && got < size && n > 0)
		if ((n = read(fd, text + got, size - got)) > 0)
			got += (size_t)n;
	close(fd);
	if (!text || got != size) {
		snprintf(err, errsz, "%s: %s", path, !text ? "larger than 64 MiB, or out of memory"
						    : "could not be read whole");
		free(text);
		return NULL;
	}
	text[got] = '\0';
	return text;
}

static void compare_load_findings(const cJSON *list, struct compare_side *s)
{
	s->has_findings = cJSON_IsArray(list);
	if (!s->has_findings)
		return;
	const cJSON *f;
	cJSON_ArrayForEach(f, list) {
		s->findings_total++;
		if (!cJSON_IsObject(f) || s->n_findings == COMPARE_MAX_FINDINGS)
			continue;
		struct compare_finding *out = &s->findings[s->n_findings++];
		compare_copy(out->id, sizeof(out->id), cJSON_GetObjectItemCaseSensitive(f, "id"));
		compare_copy(out->severity, sizeof(out->severity),
			     cJSON_GetObjectItemCaseSensitive(f, "severity"));
		compare_copy(out->title, sizeof(out->title),
			     cJSON_GetObjectItemCaseSensitive(f, "title"));
	}
}

/* Who wrote the measurement, and the run's name and status when known. */
static void compare_load_run(const cJSON *doc, struct compare_side *s)
{
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(doc, "roastop");
	char version[32];
	compare_copy(version, sizeof(version), cJSON_GetObjectItemCaseSensitive(rs, "version"));
	if (cJSON_IsObject(rs))
		snprintf(s->writer, sizeof(s->writer), "roastop %s", version);
	else
		strutil_copy(s->writer, sizeof(s->writer), "roastcoffea");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(doc, "run_name");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(doc, "run_status");
	strutil_copy_line(s->name, sizeof(s->name), cJSON_GetStringValue(n));
	strutil_copy_line(s->status, sizeof(s->status), cJSON_GetStringValue(st));
	if (cJSON_IsString(n) || cJSON_IsString(st))
		snprintf(s->run, sizeof(s->run), "run %s, %s", cJSON_IsString(n) ? s->name : "n/a",
			 cJSON_IsString(st) ? s->status : "status n/a");
	compare_load_findings(cJSON_GetObjectItemCaseSensitive(rs, "findings"), s);
	s->has_identity = identity_read(cJSON_GetObjectItemCaseSensitive(rs, "identity"), &s->id);
}

static void compare_load_datasets(const cJSON *per, struct compare_side *s)
{
	const cJSON *d;
	if (!cJSON_IsObject(per))
		return;
	cJSON_ArrayForEach(d, per) {
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(d, "total_events");
		const cJSON *sec = cJSON_GetObjectItemCaseSensitive(d, "total_duration");
		if (s->n_datasets == COMPARE_DATASETS || !d->string || !cJSON_IsNumber(ev) ||
		    !cJSON_IsNumber(sec))
			continue;
		struct past_dataset *out = &s->datasets[s->n_datasets++];
		strutil_copy_line(out->name, sizeof(out->name), d->string);
		out->events = ev->valuedouble;
		out->seconds = sec->valuedouble;
	}
}

/* Each record's file, num_events and duration (else t_end - t_start), as
 * the run's own per-file figures add them (run_chunk.c). */
static void compare_load_files(const cJSON *raw, struct compare_side *s)
{
	const cJSON *c;
	if (!cJSON_IsArray(raw) || !s->files)
		return;
	cJSON_ArrayForEach(c, raw) {
		const cJSON *file = cJSON_GetObjectItemCaseSensitive(c, "file");
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(c, "num_events");
		const cJSON *dur = cJSON_GetObjectItemCaseSensitive(c, "duration");
		const cJSON *t0 = cJSON_GetObjectItemCaseSensitive(c, "t_start");
		const cJSON *t1 = cJSON_GetObjectItemCaseSensitive(c, "t_end");
		double sec = cJSON_IsNumber(dur) ? dur->valuedouble
			     : cJSON_IsNumber(t0) && cJSON_IsNumber(t1) ? t1->valuedouble - t0->valuedouble
									: NAN;
		if (cJSON_IsString(file) && isfinite(sec) && sec >= 0)
			previous_file_add(s->files, &s->n_files, file->valuestring,
					  cJSON_IsNumber(ev) ? ev->valuedouble : 0, sec);
	}
}

/* DIR/metrics.json, else DIR/latest/metrics.json. */
static void compare_path(const char *dir, char *path, size_t size)
{
	snprintf(path, size, "%s/metrics.json", dir);
	struct stat st;
	if (stat(path, &st) != 0)
		snprintf(path, size, "%s/latest/metrics.json", dir);
}

/* cJSON's parse and delete with its default allocator, which the
 * decoders swap for one parse of theirs (cjson_lock.h): this may run on
 * the history's threads. */
static cJSON *compare_tree(const char *text)
{
	cjson_lock();
	cJSON *doc = cJSON_Parse(text);
	cjson_unlock();
	return doc;
}

static void compare_tree_free(cJSON *doc)
{
	cjson_lock();
	cJSON_Delete(doc);
	cjson_unlock();
}

int compare_parse(char *text, struct compare_side *s, char *err, size_t errsz)
{
	compare_relax(text);
	cJSON *doc = compare_tree(text);
	if (!cJSON_IsObject(doc)) {
		snprintf(err, errsz, "%s: not a JSON object (a measurement's metrics.json?)",
			 s->path);
		compare_tree_free(doc);
		return -1;
	}
	metrics_read_json(doc, &s->m);
	compare_load_run(doc, s);
	compare_load_datasets(cJSON_GetObjectItemCaseSensitive(doc, "per_dataset"), s);
	compare_load_files(cJSON_GetObjectItemCaseSensitive(doc, "raw_chunk_metrics"), s);
	compare_tree_free(doc);
	return 0;
}

int compare_load(const char *dir, struct compare_side *s, char *err, size_t errsz)
{
	memset(s, 0, sizeof(*s));
	char path[4096 + 32];
	compare_path(dir, path, sizeof(path));
	strutil_copy_tail(s->path, sizeof(s->path), path);
	bool absent;
	char *text = compare_read_at(AT_FDCWD, path, 0, &absent, err, errsz);
	if (!text)
		return -1;
	int rc = compare_parse(text, s, err, errsz);
	free(text);
	return rc;
}

int compare_main(const char *dir_a, const char *dir_b, FILE *out, FILE *errs)
{
	struct compare_side *sides = calloc(2, sizeof(*sides));
	char err[512];
	int rc = 1;
	if (!sides)
		fputs("roastop compare: out of memory\n", errs);
	else if (compare_load(dir_a, &sides[0], err, sizeof(err)) != 0 ||
		 compare_load(dir_b, &sides[1], err, sizeof(err)) != 0)
		fprintf(errs, "roastop compare: %s\n", err);
	else
		rc = 0;
	if (rc == 0) {
		struct strbuf o;
		strbuf_init(&o);
		compare_write(&o, &sides[0], &sides[1]);
		fputs(o.failed ? "roastop compare: out of memory\n" : o.data, o.failed ? errs : out);
		rc = o.failed ? 1 : 0;
		strbuf_free(&o);
	}
	free(sides);
	return rc;
}
