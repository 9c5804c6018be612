/* Decoders for what a Dask scheduler's HTTP server answers: roastop's own
 * route (/roastop/v1/state.json, installed by the Python collector),
 * /json/identity.json, /json/counts.json, and the Prometheus text of the
 * scheduler's and the workers' /metrics. Pure functions of the body, so they are unit-tested
 * on captured responses and fuzzed.
 *
 * Bodies are hostile: a body is accepted whole or rejected whole, with a
 * reason and a one-line message naming the offending field. Limits: strings
 * EVENT_MAX_STRING bytes of valid UTF-8, lists EVENT_MAX_LIST entries,
 * numbers finite and within range.h's table (the one the recording decoder
 * uses), the JSON tree within the budget below (DASK_OVER_BUDGET otherwise).
 * Unknown fields are ignored (newer Dask). */
#ifndef ROASTOP_DASK_JSON_H
#define ROASTOP_DASK_JSON_H

#include "roastop/arena.h"
#include "roastop/event.h"
#include "roastop/prom.h"

#define DASK_MAX_BODY (64u << 20) /* bytes the poller accepts from one response */
/* The JSON routes build a cJSON tree of 4-6 bytes per body byte when legit
 * and up to 32 when hostile ("0,0,..."), so their bodies and trees have
 * budgets of their own (docs/scheduler.md, "Memory and time"): */
#define DASK_MAX_JSON_BODY (16u << 20) /* more than the largest tree under DASK_TREE_MAX */
#define DASK_TREE_MAX (48u << 20) /* arena bytes the tree may take, a hard cap */
#define DASK_NODES_BASE 120000u /* values besides workers: 2 x 8,192 fine rows x 6, slack */
#define DASK_NODES_PER_WORKER 256u /* identity.json has ~45 per worker, more when busy */

enum dask_error {
	DASK_OK = 0,
	DASK_BAD_JSON, /* not JSON, or nested too deep */
	DASK_BAD_SHAPE, /* JSON, but not the document expected */
	DASK_BAD_FIELD, /* a field of the wrong type or out of range */
	DASK_TOO_MANY, /* more workers or rows than EVENT_MAX_LIST */
	DASK_OUT_OF_RANGE, /* a number outside range.h's table, or a sum of them */
	DASK_NO_MEMORY,
	DASK_OVER_BUDGET, /* more JSON values or tree bytes than the route can hold */
	DASK_STALE_FACTS, /* a route body without the facts, whose token the cache lacks */
	DASK__COUNT
};

const char *dask_error_name(enum dask_error e);

/* state.json -> an EV_SAMPLE (workers), an EV_FINE cluster snapshot and,
 * when the route knows the run's span, an EV_FINE span snapshot (span->type
 * stays EV_NONE otherwise). Every event is reset first and stamped t. */
enum dask_error dask_parse_state(const char *body, size_t len, double t, struct event *sample,
				 struct event *fine, struct event *span, char *err, size_t errsz);

/* The workers' facts (address, name, host, threads, memory limit, pid) and
 * statuses of the last full version-3 route body, with its token and
 * scheduler id: a body asked with ?have=<token> leaves them out while the
 * token holds (docs/scheduler.md, "The route"). Owned by the poller. */
#define DASK_TOKEN_MAX 64u /* a facts token's characters, [A-Za-z0-9._-] */
struct dask_facts {
	struct arena mem;
	const char *token; /* NULL: nothing kept */
	const char *scheduler_id;
	size_t n;
	struct worker_sample *rows; /* the numbers left invalid */
};

void dask_facts_init(struct dask_facts *f);
/* Forgets what is kept (the next request goes without the token). */
void dask_facts_drop(struct dask_facts *f);
void dask_facts_free(struct dask_facts *f);

/* dask_parse_state with the kept facts: a full version-3 body replaces
 * them, a body without them takes them when its token, scheduler id and
 * worker count match (DASK_STALE_FACTS otherwise; facts may be NULL). */
enum dask_error dask_parse_state_facts(const char *body, size_t len, double t,
				       struct event *sample, struct event *fine,
				       struct event *span, struct dask_facts *facts, char *err,
				       size_t errsz);

/* /sitemap.json -> whether its "paths" list identity.json, /metrics and
 * counts.json: 1 yes, 0 no, -1 unknown (not a usable sitemap). Budgeted
 * like the rest. */
void dask_parse_sitemap(const char *body, size_t len, int *identity, int *prom, int *counts);

/* A worker's dashboard, from identity.json's services. */
typedef void (*dask_endpoint_fn)(void *ctx, const char *worker, const char *host, int port);

/* identity.json -> an EV_SAMPLE; fn (may be NULL) is called for every
 * worker that serves a dashboard (for its own /metrics). */
enum dask_error dask_parse_identity(const char *body, size_t len, double t, struct event *sample,
				    dask_endpoint_fn fn, void *ctx, char *err, size_t errsz);

/* /json/counts.json -> an EV_SAMPLE without per-worker rows: worker count
 * ("workers", required), total threads ("cores") and tasks processing. */
enum dask_error dask_parse_counts(const char *body, size_t len, double t, struct event *sample,
				  char *err, size_t errsz);

/* The scheduler's /metrics -> an EV_SAMPLE without per-worker rows (worker
 * count, threads and tasks processing). DASK_BAD_SHAPE when the text has no
 * dask_scheduler_workers family, DASK_OUT_OF_RANGE when a worker or task
 * count (or the workers' sum over states) is outside range.h's table.
 * Rejected lines are counted in st. */
enum dask_error dask_parse_scheduler_prom(const char *body, size_t len, double t,
					  struct event *sample, struct prom_stats *st);

/* The scheduler's own per-prefix totals on its /metrics (docs/scheduler.md,
 * "Task figures without the route"): each prefix's tasks gone into
 * "memory" (dask_scheduler_prefix_state_totals_total) and their compute
 * seconds (dask_scheduler_tasks_compute_seconds_total), since the scheduler
 * started. Prefixes past EVENT_MAX_SECTIONS, or with a name of
 * DASK_PREFIX_LEN bytes or more, or not UTF-8, are counted in left_out. */
#define DASK_PREFIX_LEN 128u
#define DASK_PREFIX_FAMILY "dask_scheduler_prefix_state_totals_total"
#define DASK_COMPUTE_FAMILY "dask_scheduler_tasks_compute_seconds_total"
struct dask_prefix_total {
	char name[DASK_PREFIX_LEN];
	optnum done, compute;
};
struct dask_prefix_totals {
	bool measured; /* the family is served (with no sample: no prefix yet) */
	size_t n;
	double left_out;
	struct dask_prefix_total p[EVENT_MAX_SECTIONS];
};

/* out->measured false and DASK_BAD_SHAPE without the family (no
 * prometheus_client, an older Dask); DASK_OUT_OF_RANGE (and nothing
 * measured) for a count that is not a whole number in range.h's table or
 * seconds outside it. */
enum dask_error dask_parse_prefix_prom(const char *body, size_t len,
				       struct dask_prefix_totals *out, struct prom_stats *st);
/* The totals as s's lists, in ev's arena; false when out of memory (s
 * then carries none: not measured). */
bool dask_prefix_attach(const struct dask_prefix_totals *pt, struct event *ev);

/* What one worker's /metrics says about it. */
struct dask_worker_prom {
	optnum memory_bytes; /* managed + unmanaged: the process memory Dask reports */
	optnum managed_bytes, spilled_bytes;
	optnum threads;
	optnum cpu_seconds; /* process_cpu_seconds_total, for a CPU rate */
};

/* DASK_BAD_SHAPE when the text has no dask_worker_memory_bytes family,
 * DASK_OUT_OF_RANGE when a value read (or managed + unmanaged) is outside
 * range.h's table; out is then all invalid. */
enum dask_error dask_parse_worker_prom(const char *body, size_t len, struct dask_worker_prom *out,
				       struct prom_stats *st);

/* The head of an answer the collector's route gives with a cursor
 * (tasks.json, datagrams.json; dask_json_tasks.c reads both): the cursor
 * to ask from next, what the scheduler's buffer dropped before this reader
 * read it, and whether the answer was cut at its cap. */
struct dask_cursor {
	char since[96]; /* "<stream>.<next index>"; "" before the first answer */
	uint64_t lost;
	bool more;
};

/* A tasks.json answer: its cursor and the rows. */
struct dask_tasks_answer {
	struct dask_cursor at;
	uint64_t tasks, rejected; /* startstops delivered, rows refused */
};

/* Each startstop as an EV_TASK event in ev, handed to deliver, stamped
 * with now less how long before the answer it stopped. False (out's cursor
 * empty) when the body is not the route's shape; rows refused one by one
 * are counted in out->rejected. */
bool dask_parse_tasks(const char *body, size_t len, double now, struct event *ev,
		      event_deliver_fn deliver, void *ctx, struct dask_tasks_answer *out);

/* Strict base64 (docs/protocol.md, "The Dask path"; state.json's
 * worker_state): len bytes (a multiple of 4, '=' only as the last one or
 * two, no other character outside the alphabet) decoded into out (cap bytes
 * at least len / 4 * 3). Its length, or -1. */
long dask_base64_decode(const char *text, size_t len, unsigned char *out, size_t cap);

/* A datagrams.json payload, [port, base64]: the port its sender addressed
 * (1 to 65535) and the text; text NULL when the payload is not that shape. */
typedef void (*dask_payload_fn)(void *ctx, int port, const char *text);

/* Each payload of a datagrams.json answer to each. False (out's cursor
 * empty, no payload handed) when the body is not the route's shape. */
bool dask_parse_datagrams(const char *body, size_t len, struct dask_cursor *out,
			  dask_payload_fn each, void *ctx);

#endif
