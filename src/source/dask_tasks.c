/* The collector's route's task records (docs/scheduler.md, "Task records"):
 * tasks.json?since=<cursor> after each state.json of a version-5 route,
 * read off distributed's TaskStreamPlugin buffer with a cursor of
 * roastop's own. While the route answers, the task stream source keeps
 * /eventstream closed (told by a "task_stream" status). */
#include "daskpriv.h"

#include <stdio.h>
#include <string.h>

/* A version-5 route or later: route.py writes the version first. */
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

/* Tells the task stream source where task records come from: connected,
 * the route; lost, /eventstream again. */
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
		.source = source_role_name(SOURCE_TASK_STREAM),
		.state = routed ? SRC_CONNECTED : SRC_LOST,
		.reason = routed ? "records from the scheduler's TaskStreamPlugin through the "
				   "roastop route; /eventstream not used"
				 : "the roastop route is gone: /eventstream",
		.gaps_timelines = { 0, true },
	};
	d->deliver(d->ctx, ev);
}

/* state.json did not answer as a route: the cursors go with it. */
void dask_tasks_gone(struct dask *d)
{
	d->tasks_at = (struct dask_cursor){ 0 };
	d->dg.at = (struct dask_cursor){ 0 };
	dask_tasks_tell(d, false);
}

enum answer dask_on_tasks(struct dask *d, long code, const struct xfer *x)
{
	struct dask_tasks_answer ans = { 0 };
	bool ok = code == 200 && dask_parse_tasks(x->body.buf.data, x->body.buf.len, d->now, &d->ev_task,
						   d->deliver, d->ctx, &ans);
	d->st.tasks += ans.tasks;
	d->st.tasks_rejected += ans.rejected;
	if (ok) {
		d->tasks_at = ans.at;
		d->st.tasks_lost += ans.at.lost;
		d->st.tasks_capped += ans.at.more;
		d->st.task_answers++;
		dask_tasks_tell(d, true);
	} else {
		d->st.tasks_rejected++; /* the cursor stays: asked again next round */
		d->tasks_at.more = false;
	}
	return ok ? ANS_DID : ANS_FAILED;
}
