/* Decoders for what a Dask scheduler's HTTP server answers: roastop's own
 * route (/roastop/v1/state.json), identity.json, counts.json, and the
 * scheduler's and workers' /metrics. Pure functions of the body, tested on
 * captured responses and fuzzed. A body is accepted or rejected whole, with
 * a reason and a message naming the offending field: strings
 * EVENT_MAX_STRING bytes of UTF-8, lists EVENT_MAX_LIST entries, numbers
 * within range.h's table, the JSON tree within the budget below. Unknown
 * fields are ignored (newer Dask). */
#ifndef ROASTOP_DASK_JSON_H
#define ROASTOP_DASK_JSON_H

#include "roastop/arena.h"
#include "roastop/event.h"
#include "roastop/prom.h"

#define DASK_MAX_BODY (64u << 20) /* bytes the poller accepts from one response */
/* A cJSON tree is 4-6 bytes a body byte, up to 32 when hostile ("0,0,..."):
 * budgets of their own (docs/scheduler.md, "Memory and time") */
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

/* state.json -> an EV_SAMPLE, an EV_FINE cluster snapshot and, when the
 * route knows the run's span, an EV_FINE span snapshot (else EV_NONE).
 * Every event is reset first and stamped t. */
enum dask_error dask_parse_state(const char *body, size_t len, double t, struct event *sample,
				 struct event *fine, struct event *span, char *err, size_t errsz);

/* The workers' facts and statuses of the last full version-3 route body,
 * with its token and scheduler id: a body asked with ?have=<token> leaves
 * them out while the token holds (docs/scheduler.md, "The route"). */
#define DASK_TOKEN_MAX 64u /* a facts token's characters, [A-Za-z0-9._-] */
struct dask_facts {
	struct arena mem;
	const char *token; /* NULL: nothing kept */
	const char *scheduler_id;
	size_t n;
	struct worker_sample *rows; /* the numbers left invalid */
};

void dask_facts_init(struct dask_facts *f);
void dask_facts_drop(struct dask_facts *f);
void dask_facts_free(struct dask_facts *f);

/* dask_parse_state with the kept facts: a full version-3 body replaces
 * them, a body without them takes them when its token, scheduler id and
 * worker count match (DASK_STALE_FACTS otherwise; facts may be NULL). */
enum dask_error dask_parse_state_facts(const char *body, size_t len, double t,
				       struct event *sample, struct event *fine,
				       struct event *span, struct dask_facts *facts, char *err,
				       size_t errsz);

/* /sitemap.json -> whether it lists identity.json, /metrics and
 * counts.json: 1 yes, 0 no, -1 unknown (not a usable sitemap). */
void dask_parse_sitemap(const char *body, size_t len, int *identity, int *prom, int *counts);

typedef void (*dask_endpoint_fn)(void *ctx, const char *worker, const char *host, int port);

/* identity.json -> an EV_SAMPLE; fn (may be NULL) is called for every
 * worker that serves a dashboard (for its own /metrics). */
enum dask_error dask_parse_identity(const char *body, size_t len, double t, struct event *sample,
				    dask_endpoint_fn fn, void *ctx, char *err, size_t errsz);

/* /json/counts.json -> an EV_SAMPLE without per-worker rows: worker count
 * ("workers", required), total threads ("cores") and tasks processing. */
enum dask_error dask_parse_counts(const char *body, size_t len, double t, struct event *sample,
				  char *err, size_t errsz);

/* The scheduler's /metrics -> an EV_SAMPLE without per-worker rows.
 * DASK_BAD_SHAPE without the dask_scheduler_workers family,
 * DASK_OUT_OF_RANGE for a count (or the workers' sum) outside range.h's
 * table. Rejected lines are counted in st. */
enum dask_error dask_parse_scheduler_prom(const char *body, size_t len, double t,
					  struct event *sample, struct prom_stats *st);

/* The scheduler's per-prefix totals on its /metrics (docs/scheduler.md,
 * "Task figures without the route"): tasks gone into "memory" and compute
 * seconds, since the scheduler started. Prefixes past EVENT_MAX_SECTIONS,
 * with a name of DASK_PREFIX_LEN bytes or more, or not UTF-8, are counted
 * in left_out. */
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

/* DASK_BAD_SHAPE (not measured) without the family; DASK_OUT_OF_RANGE
 * (nor measured) for a count or seconds outside range.h's table. */
enum dask_error dask_parse_prefix_prom(const char *body, size_t len,
				       struct dask_prefix_totals *out, struct prom_stats *st);
/* The totals as the sample's lists; false (none: not measured) when out of
 * memory. */
bool dask_prefix_attach(const struct dask_prefix_totals *pt, struct event *ev);

/* What one worker's /metrics says about it. */
struct dask_worker_prom {
	optnum memory_bytes; /* managed + unmanaged: the process memory Dask reports */
	optnum managed_bytes, spilled_bytes;
	optnum threads;
	optnum cpu_seconds; /* process_cpu_seconds_total, for a CPU rate */
};

/* DASK_BAD_SHAPE without the dask_worker_memory_bytes family,
 * DASK_OUT_OF_RANGE for a value (or managed + unmanaged) outside range.h's
 * table; out is then all invalid. */
enum dask_error dask_parse_worker_prom(const char *body, size_t len, struct dask_worker_prom *out,
				       struct prom_stats *st);

/* The head of a route answer read with a cursor (tasks.json,
 * datagrams.json): what the scheduler's buffer dropped before this reader
 * read it, and whether the answer was cut at its cap. */
struct dask_cursor {
	char since[96]; /* "<stream>.<next index>"; "" before the first answer */
	uint64_t lost;
	bool more;
};

struct dask_tasks_answer {
	struct dask_cursor at;
	uint64_t tasks, rejected; /* startstops delivered, rows refused */
};

/* Each startstop as an EV_TASK event in ev, handed to deliver, stamped
 * with now less how long before the answer it stopped. False when the
 * body is not the route's shape; refused rows count in out->rejected. */
bool dask_parse_tasks(const char *body, size_t len, double now, struct event *ev,
		      event_deliver_fn deliver, void *ctx, struct dask_tasks_answer *out);

/* Strict base64 (docs/protocol.md, "The Dask path"): len a multiple of 4,
 * '=' only as the last one or two, into out (cap >= len / 4 * 3). Its
 * length, or -1. */
long dask_base64_decode(const char *text, size_t len, unsigned char *out, size_t cap);

/* A datagrams.json payload [port, base64]; text NULL when not that shape. */
typedef void (*dask_payload_fn)(void *ctx, int port, const char *text);

/* Each payload to each. False when the body is not the route's shape. */
bool dask_parse_datagrams(const char *body, size_t len, struct dask_cursor *out,
			  dask_payload_fn each, void *ctx);

#endif
