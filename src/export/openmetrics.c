/* OpenMetrics text for GET /metrics (openmetrics.h). Every run number is
 * one of struct metrics, only scaled to the base unit (seconds, bytes,
 * ratios); names follow Prometheus' conventions (docs/metrics.md). */
#include "roastop/openmetrics.h"

#include <stdio.h>
#include <string.h>

#include "roastop/diagnosis.h"
#include "roastop/event_json.h"

/* One run number: its family, type, the metrics field and the factor to
 * the base unit. */
struct om_def {
	const char *name;
	bool counter;
	size_t off; /* of an optnum in struct metrics */
	double scale;
	const char *help;
};

#define M(f) offsetof(struct metrics, f)

static const struct om_def run_defs[] = {
	{ "roastop_chunks", true, M(num_chunks), 1, "Chunks processed by the run (successful and failed)." },
	{ "roastop_chunks_failed", false, M(num_failed_chunks), 1, "Chunks whose latest attempt raised." },
	{ "roastop_chunk_retries", true, M(chunk_retries), 1, "Failed attempts a later attempt of the same chunk followed." },
	{ "roastop_events", true, M(total_events), 1, "Events processed by the run." },
	{ "roastop_read_bytes", true, M(total_bytes_read), 1, "Bytes the chunks read." },
	{ "roastop_cpu_seconds", true, M(total_cpu_time), 1, "CPU time of the chunks." },
	{ "roastop_elapsed_seconds", false, M(elapsed_time_seconds), 1, "The run's wall time so far." },
	{ "roastop_chunks_per_second", false, M(chunks_per_second), 1, "Chunk rate over the run's window." },
	{ "roastop_events_per_second", false, M(event_rate_elapsed_khz), 1e3, "Event rate over the run's wall time." },
	{ "roastop_read_bytes_per_second", false, M(data_rate_mb_per_s), 1e6, "Read rate over the run's window." },
	{ "roastop_chunks_in_flight", false, M(inflight_running), 1, "Chunks started and not finished." },
	{ "roastop_chunks_straggling", false, M(inflight_stragglers), 1, "Chunks in flight past the straggler age." },
	{ "roastop_workers", false, M(workers_now), 1, "Dask workers in the latest scheduler sample." },
	{ "roastop_threads", false, M(total_threads_now), 1, "Worker threads in the latest scheduler sample." },
	{ "roastop_memory_used_bytes", false, M(memory_used_now_bytes), 1, "Workers' memory in use, summed." },
	{ "roastop_memory_limit_bytes", false, M(memory_limit_now_bytes), 1, "Workers' memory limits, summed." },
	{ "roastop_cpu_utilization_ratio", false, M(cpu_percent_now), 1e-2, "Mean worker CPU use per core (0 to 1)." },
	{ "roastop_tasks_executing", false, M(tasks_executing_now), 1, "Tasks executing in the latest scheduler sample." },
	{ "roastop_progress_ratio", false, M(progress_fraction), 1, "Done over total of the progress source (0 to 1)." },
	{ "roastop_eta_seconds", false, M(eta_seconds), 1, "Estimated seconds to the run's end." },
};

static void om_head(struct strbuf *o, const char *name, bool counter, const char *help)
{
	strbuf_appendf(o, "# TYPE %s %s\n# HELP %s %s\n", name, counter ? "counter" : "gauge", name,
		       help);
}

/* A label value: backslash, quote and newline escaped. */
static void om_label_value(struct strbuf *o, const char *v)
{
	strbuf_puts(o, "\"");
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			strbuf_append(o, "\\", 1);
		if (*v == '\n')
			strbuf_puts(o, "\\n");
		else
			strbuf_append(o, v, 1);
	}
	strbuf_puts(o, "\"");
}

/* name[_total]{labels} value; labels: NULL, or "k" = v pairs, up to two. */
static void om_sample(struct strbuf *o, const char *name, bool counter, const char *k1,
		      const char *v1, const char *k2, const char *v2, double v)
{
	strbuf_puts(o, name);
	if (counter)
		strbuf_puts(o, "_total");
	if (k1) {
		strbuf_appendf(o, "{%s=", k1);
		om_label_value(o, v1);
		if (k2) {
			strbuf_appendf(o, ",%s=", k2);
			om_label_value(o, v2);
		}
		strbuf_puts(o, "}");
	}
	strbuf_puts(o, " ");
	strbuf_json_number(o, v);
	strbuf_puts(o, "\n");
}

static void om_counter(struct strbuf *o, const char *name, const char *help, uint64_t v)
{
	om_head(o, name, true, help);
	om_sample(o, name, true, NULL, NULL, NULL, NULL, (double)v);
}

static void om_run(struct strbuf *o, const struct session_run *row, const struct metrics *m)
{
	const char *k = row ? "run_id" : NULL, *id = row ? row->run_id : NULL;
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(run_defs); i++) {
		const struct om_def *d = &run_defs[i];
		const optnum *v = (const optnum *)(const void *)((const char *)m + d->off);
		if (!v->valid) /* not measured: no sample, the family stays empty */
			continue;
		om_head(o, d->name, d->counter, d->help);
		om_sample(o, d->name, d->counter, k, id, NULL, NULL, v->value * d->scale);
	}
	if (!row)
		return;
	enum run_status st = row->run ? row->run->status : row->status;
	om_head(o, "roastop_run_status", false, "1 for the newest run's status, 0 for the others.");
	for (int s = 0; s < RUN_STATUS__COUNT; s++)
		om_sample(o, "roastop_run_status", false, "run_id", row->run_id, "status",
			  run_status_name((enum run_status)s), s == (int)st ? 1 : 0);
	om_head(o, "roastop_run_closed", false, "1 once the run has ended, settled and been written.");
	om_sample(o, "roastop_run_closed", false, "run_id", row->run_id, NULL, NULL, row->closed);
}

/* A typed counter (source.h) and the family it becomes. */
struct om_typed_def {
	size_t off; /* in struct source_typed */
	const char *family, *help;
};
#define OM_TYPED(field) offsetof(struct source_typed, field)

static uint64_t om_typed(const struct source_typed *t, const struct om_typed_def *d)
{
	uint64_t v;
	memcpy(&v, (const char *)t + d->off, sizeof(v));
	return v;
}

/* The listener's counters under roastop_NAME_...: which field becomes
 * which family. */
static const struct om_typed_def listener_defs[] = {
	{ OM_TYPED(datagrams), "datagrams", "Datagrams received, good or bad." },
	{ OM_TYPED(bytes), "received_bytes", "Bytes of the datagrams received." },
	{ OM_TYPED(applied), "events_applied", "Events the datagrams delivered." },
	{ OM_TYPED(missing), "datagrams_missing", "Sequence numbers never received." },
	{ OM_TYPED(kernel_drops), "datagrams_dropped", "Datagrams the kernel dropped (buffer full)." },
};

/* The group "rejected" holds the datagrams' reasons, then the decoder's
 * (one per decode error, in their order), then "total" (udp.h): the last
 * DEC__COUNT - 1 before "total" are the decoder's. */
static void om_listener_rejected(struct strbuf *o, const char *name, const struct source_stats *st)
{
	char fr[96], fd[96];
	snprintf(fr, sizeof(fr), "roastop_%s_datagrams_rejected", name);
	snprintf(fd, sizeof(fd), "roastop_%s_decode_rejected", name);
	size_t n = 0;
	for (size_t i = 0; i < st->n_counters; i++) {
		const struct source_counter *c = &st->counters[i];
		n += c->group && strcmp(c->group, "rejected") == 0 && strcmp(c->name, "total") != 0;
	}
	size_t n_decode = DEC__COUNT - 1, k = 0;
	om_head(o, fr, true, "Datagrams rejected by framing, key or sequence, by reason.");
	for (size_t i = 0; i < st->n_counters; i++) {
		const struct source_counter *c = &st->counters[i];
		if (!c->group || strcmp(c->group, "rejected") != 0 || strcmp(c->name, "total") == 0)
			continue;
		if (k++ + n_decode == n)
			om_head(o, fd, true, "Datagrams whose event could not be decoded, by reason.");
		om_sample(o, k + n_decode > n ? fd : fr, true, "reason", c->name, NULL, NULL,
			  (double)c->value);
	}
}

static void om_listener(struct strbuf *o, const char *name, const struct source_stats *st)
{
	char family[96];
	for (size_t d = 0; d < ROASTOP_ARRAY_LEN(listener_defs); d++) {
		snprintf(family, sizeof(family), "roastop_%s_%s", name, listener_defs[d].family);
		om_counter(o, family, listener_defs[d].help, om_typed(&st->typed, &listener_defs[d]));
	}
	om_listener_rejected(o, name, st);
}

/* The HTTP server's counters (serve_stats_counters): which becomes which
 * family; its group "rejected" holds the requests' reasons. */
static const struct {
	const char *counter, *family, *help;
} server_defs[] = {
	{ "connections", "roastop_http_connections", "HTTP connections accepted." },
	{ "requests", "roastop_http_requests", "HTTP requests that reached the routes." },
	{ "connections_without_request", "roastop_http_connections_without_request",
	  "HTTP connections closed before a request reached the routes." },
};

static void om_server(struct strbuf *o, const struct source_stats *st)
{
	for (size_t d = 0; d < ROASTOP_ARRAY_LEN(server_defs); d++)
		for (size_t i = 0; i < st->n_counters; i++)
			if (!st->counters[i].group &&
			    strcmp(st->counters[i].name, server_defs[d].counter) == 0)
				om_counter(o, server_defs[d].family, server_defs[d].help,
					   st->counters[i].value);
	const char *n = "roastop_http_requests_rejected";
	om_head(o, n, true, "HTTP requests answered with an error, by reason.");
	for (size_t i = 0; i < st->n_counters; i++) {
		const struct source_counter *c = &st->counters[i];
		if (c->group && strcmp(c->group, "rejected") == 0)
			om_sample(o, n, true, "reason", c->name, NULL, NULL, (double)c->value);
	}
}

/* The Dask poller's task records from the collector's route (its counters
 * as the session keeps them, docs/scheduler.md "Task records"): none
 * before the poller delivered its counters. */
static const struct om_typed_def task_record_defs[] = {
	{ OM_TYPED(tasks), "roastop_scheduler_task_records",
	  "Task startstops read from the collector's route." },
	{ OM_TYPED(tasks_lost), "roastop_scheduler_task_records_lost",
	  "Finished tasks the scheduler's TaskStreamPlugin buffer dropped before roastop read them." },
	{ OM_TYPED(tasks_capped), "roastop_scheduler_task_answers_capped",
	  "Route answers cut at their cap, the rest read at once after." },
	{ OM_TYPED(tasks_rejected), "roastop_scheduler_task_records_rejected",
	  "Task rows or answers from the route refused." },
};

static void om_task_records(struct strbuf *o, const struct session *ses)
{
	struct ev_counters c;
	struct source_typed t = { 0 };
	for (size_t i = 0; i < ses->counters.n && t.role != SOURCE_TASK_ROUTE; i++) {
		counters_view(&ses->counters, i, &c);
		source_typed_of(&c, &t);
	}
	for (size_t d = 0; t.role == SOURCE_TASK_ROUTE && d < ROASTOP_ARRAY_LEN(task_record_defs); d++)
		om_counter(o, task_record_defs[d].family, task_record_defs[d].help,
			   om_typed(&t, &task_record_defs[d]));
}

/* A gauge per finding id (docs/diagnosis.md): 1 while it holds for the
 * newest run, else 0; every id has its sample, so an alert can wait on one. */
static void om_findings(struct strbuf *o, const struct session_run *row,
			const struct findings *fs)
{
	const char *n = "roastop_finding";
	om_head(o, n, false, "1 while the finding holds for the newest run, else 0.");
	for (int id = 0; id < FIND__COUNT; id++) {
		bool holds = false;
		for (size_t i = 0; i < fs->n; i++)
			holds |= fs->f[i].id == (enum finding_id)id;
		om_sample(o, n, false, "run_id", row->run_id, "finding",
			  diagnosis_id_name((enum finding_id)id), holds);
	}
}

void openmetrics_write(const struct openmetrics_input *in, struct strbuf *out)
{
	if (in->m)
		om_run(out, in->row, in->m);
	if (in->findings && in->row && in->row->run)
		om_findings(out, in->row, in->findings);
	if (in->ses) {
		om_counter(out, "roastop_runs", "Runs seen by this roastop.", in->ses->runs_total);
		om_task_records(out, in->ses);
	}
	if (in->ticks)
		om_counter(out, "roastop_ticks", "Ticks: the rounds of snapshots of the open runs taken.",
			   *in->ticks);
	if (in->diagnoses)
		om_counter(out, "roastop_diagnoses",
			   "Evaluations of the diagnosis: one per tick per open run at most.",
			   *in->diagnoses);
	if (in->listener)
		om_listener(out, in->listener_name, in->listener);
	if (in->server)
		om_server(out, in->server);
	strbuf_puts(out, "# EOF\n");
}
