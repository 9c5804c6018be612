/* The route's answers read with a cursor: tasks.json (each startstop as
 * the EV_TASK event /eventstream's message would have made) and
 * datagrams.json; one reading of the cursor and counts for both. */
#include "roastop/dask_json.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "roastop/taskstream.h"

struct tasks_ctx {
	double now, sched_now;
	struct event *ev;
	event_deliver_fn deliver;
	void *ctx;
	struct dask_tasks_answer *out;
};

/* One startstop of a row ([key, worker, status, action, start, stop, ...]:
 * three items a startstop). Stamped now less how long before the answer
 * the scheduler's clock says it stopped. */
static void tasks_one(struct tasks_ctx *c, const cJSON *row, const cJSON *ss)
{
	struct event *ev = c->ev;
	event_reset(ev);
	const cJSON *key = cJSON_GetArrayItem(row, 0);
	const struct taskstream_fields f = {
		.key = key, .worker = key ? key->next : NULL,
		.status = key && key->next ? key->next->next : NULL,
		.action = ss, .start = ss->next, .stop = ss->next ? ss->next->next : NULL,
	};
	if (taskstream_task(ev, &f) != TSP_TASK) {
		c->out->rejected++;
		return;
	}
	double lag = c->sched_now - ev->u.task.stop.value;
	ev->t = c->now - (lag > 0 && lag < 3600 ? lag : 0);
	c->out->tasks++;
	c->deliver(c->ctx, ev);
}

static void tasks_rows(struct tasks_ctx *c, const cJSON *rows)
{
	const cJSON *row;
	cJSON_ArrayForEach(row, rows)
	{
		int n = cJSON_IsArray(row) ? cJSON_GetArraySize(row) : 0;
		if (n < 6 || (n - 3) % 3 != 0) {
			c->out->rejected++;
			continue;
		}
		for (const cJSON *ss = cJSON_GetArrayItem(row, 3); ss; ss = ss->next->next->next)
			tasks_one(c, row, ss);
	}
}

static bool cursor_count(const cJSON *o, const char *name, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	*out = cJSON_IsNumber(v) ? v->valuedouble : -1;
	return *out >= 0 && *out < 9e15;
}

/* The answer's cursor and counts, and its array named list; NULL (out
 * untouched) when it is not the route's shape. */
static const cJSON *cursor_head(const cJSON *o, const char *list, struct dask_cursor *out)
{
	const cJSON *stream = cJSON_GetObjectItemCaseSensitive(o, "stream");
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(o, list);
	double next, lost, left;
	if (!cJSON_IsObject(o) || !cJSON_IsString(stream) || strlen(stream->valuestring) > 64 ||
	    strspn(stream->valuestring, "0123456789abcdef-") != strlen(stream->valuestring) ||
	    !cursor_count(o, "next", &next) || !cursor_count(o, "lost", &lost) ||
	    !cursor_count(o, "left", &left) || !cJSON_IsArray(items))
		return NULL;
	snprintf(out->since, sizeof(out->since), "%s.%.0f", stream->valuestring, next);
	out->lost = (uint64_t)lost;
	out->more = left > 0;
	return items;
}

bool dask_parse_tasks(const char *body, size_t len, double now, struct event *ev,
		      event_deliver_fn deliver, void *ctx, struct dask_tasks_answer *out)
{
	*out = (struct dask_tasks_answer){ 0 };
	cJSON *o = cJSON_ParseWithLength(body, len);
	struct tasks_ctx c = { .now = now, .ev = ev, .deliver = deliver, .ctx = ctx, .out = out };
	const cJSON *rows = cursor_count(o, "time", &c.sched_now) ? cursor_head(o, "tasks", &out->at)
								   : NULL;
	if (rows)
		tasks_rows(&c, rows);
	cJSON_Delete(o);
	return rows != NULL;
}

bool dask_parse_datagrams(const char *body, size_t len, struct dask_cursor *out,
			  dask_payload_fn each, void *ctx)
{
	*out = (struct dask_cursor){ 0 };
	cJSON *o = cJSON_ParseWithLength(body, len);
	const cJSON *items = cursor_head(o, "datagrams", out), *item;
	cJSON_ArrayForEach(item, items)
	{
		const cJSON *port = cJSON_IsArray(item) && cJSON_GetArraySize(item) == 2
					    ? cJSON_GetArrayItem(item, 0)
					    : NULL;
		const cJSON *b64 = port ? port->next : NULL;
		bool shaped = cJSON_IsString(b64) && cJSON_IsNumber(port) &&
			      port->valuedouble >= 1 && port->valuedouble <= 65535;
		each(ctx, shaped ? port->valueint : 0, shaped ? b64->valuestring : NULL);
	}
	cJSON_Delete(o);
	return items != NULL;
}
