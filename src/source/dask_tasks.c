/* The collector's route's task records (docs/scheduler.md, "Task records"):
 * GET roastop/v1/tasks.json?since=<cursor> after each state.json of a
 * version-5 route. The route reads them out of distributed's
 * TaskStreamPlugin buffer, which the scheduler fills once per finished task
 * whoever reads it; each roastop holds its own cursor, so any number of
 * them (and the Bokeh dashboard) read one buffer and none takes anything
 * from another. Each startstop becomes the EV_TASK event /eventstream's
 * message would have made (taskstream_task builds both); while the route
 * answers, the task stream source keeps /eventstream closed (it is told by
 * a "task_stream" status). */
#include "daskpriv.h"

#include "roastop/taskstream.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#define TASKS_STATUS_SOURCE "task_stream"

/* A version-5 route or later: its body begins with its version (route.py
 * writes it first, before any other member). */
bool dask_tasks_offered(const char *body, size_t len)
{
	static const char head[] = "{\"roastop_route\":";
	size_t n = sizeof(head) - 1;
	if (len <= n + 1 || memcmp(body, head, n) != 0)
		return false;
	char c = body[n], after = body[n + 1];
	return (c >= '5' && c <= '9' && (after == ',' || after == '}')) ||
	       (c >= '1' && c <= '9' && after >= '0' && after <= '9');
}

/* ?since=<cursor>: the stream and index the route last answered (a
 * URL-safe token: hex, '-', '.', digits); none before the first answer. */
bool dask_tasks_query(const struct dask *d, char *url, size_t size)
{
	if (!d->tasks_since[0])
		return true;
	size_t n = strlen(url);
	return (size_t)snprintf(url + n, size - n, "?since=%s", d->tasks_since) < size - n;
}

/* Tells the task stream source where task records come from (its
 * on_event): connected, the route; lost, /eventstream again. */
void dask_tasks_tell(struct dask *d, bool routed)
{
	if (d->tasks_told == routed)
		return;
	d->tasks_told = routed;
	struct event *ev = &d->ev_status;
	event_reset(ev);
	ev->type = EV_STATUS;
	ev->t = d->now;
	ev->u.status = (struct ev_status){
		.source = TASKS_STATUS_SOURCE,
		.state = routed ? SRC_CONNECTED : SRC_LOST,
		.reason = routed ? "records from the scheduler's TaskStreamPlugin through the "
				   "roastop route; /eventstream not used"
				 : "the roastop route is gone: /eventstream",
		.gaps_timelines = { 0, true },
	};
	d->deliver(d->ctx, ev);
}

/* state.json did not answer as a route: the cursor goes with it. */
void dask_tasks_gone(struct dask *d)
{
	d->tasks_since[0] = '\0';
	d->tasks_more = false;
	dask_tasks_tell(d, false);
}

/* One startstop of a row ([key, worker, status, action, start, stop, ...]
 * from its 4th item, three a startstop). lag: how long before the answer
 * the scheduler's clock says it stopped: the event's time is roastop's
 * now less it, as if the stream had brought it then. */
static void tasks_one(struct dask *d, const cJSON *row, const cJSON *ss, double sched_now)
{
	struct event *ev = &d->ev_task;
	event_reset(ev);
	const cJSON *key = cJSON_GetArrayItem(row, 0);
	const struct taskstream_fields f = {
		.key = key, .worker = key ? key->next : NULL,
		.status = key && key->next ? key->next->next : NULL,
		.action = ss, .start = ss->next, .stop = ss->next ? ss->next->next : NULL,
	};
	if (taskstream_task(ev, &f) != TSP_TASK) {
		d->st.tasks_rejected++;
		return;
	}
	double lag = sched_now - ev->u.task.stop.value;
	ev->t = d->now - (lag > 0 && lag < 3600 ? lag : 0);
	d->st.tasks++;
	d->deliver(d->ctx, ev);
}

static void tasks_rows(struct dask *d, const cJSON *rows, double sched_now)
{
	const cJSON *row;
	cJSON_ArrayForEach(row, rows)
	{
		int n = cJSON_GetArraySize(row);
		if (!cJSON_IsArray(row) || n < 6 || (n - 3) % 3 != 0) {
			d->st.tasks_rejected++;
			continue;
		}
		for (const cJSON *ss = cJSON_GetArrayItem(row, 3); ss; ss = ss->next->next->next)
			tasks_one(d, row, ss, sched_now);
	}
}

static bool tasks_count(const cJSON *o, const char *name, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	*out = cJSON_IsNumber(v) ? v->valuedouble : -1;
	return *out >= 0 && *out < 9e15;
}

/* The answer's cursor and counts; false when it is not the route's shape. */
static bool tasks_head(struct dask *d, const cJSON *o, double *sched_now)
{
	const cJSON *stream = cJSON_GetObjectItemCaseSensitive(o, "stream");
	double next, lost, left;
	if (!cJSON_IsString(stream) || strlen(stream->valuestring) > 64 ||
	    strspn(stream->valuestring, "0123456789abcdef-") != strlen(stream->valuestring) ||
	    !tasks_count(o, "next", &next) || !tasks_count(o, "lost", &lost) ||
	    !tasks_count(o, "left", &left) || !tasks_count(o, "time", sched_now) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "tasks")))
		return false;
	snprintf(d->tasks_since, sizeof(d->tasks_since), "%s.%.0f", stream->valuestring, next);
	d->st.tasks_lost += (uint64_t)lost;
	d->tasks_more = left > 0;
	d->st.tasks_capped += left > 0;
	d->st.task_answers++;
	return true;
}

void dask_on_tasks(struct dask *d, long code, const struct xfer *x)
{
	cJSON *o = code == 200 ? cJSON_ParseWithLength(x->body.data, x->body.len) : NULL;
	double sched_now;
	if (cJSON_IsObject(o) && tasks_head(d, o, &sched_now)) {
		dask_tasks_tell(d, true);
		tasks_rows(d, cJSON_GetObjectItemCaseSensitive(o, "tasks"), sched_now);
	} else {
		d->st.tasks_rejected++; /* the cursor stays: asked again next round */
		d->tasks_more = false;
	}
	cJSON_Delete(o);
	dask_round_end(d, true);
}
