/* The collector's route's datagrams (docs/protocol.md, "The Dask path"):
 * GET roastop/v1/datagrams.json?since=<cursor> after each tasks.json. A
 * worker process that cannot reach roastop by UDP hands its datagrams,
 * byte for byte, to its own Dask connection (Worker.log_event); the
 * route's scheduler plugin keeps them in a bounded buffer, and each
 * roastop reads them with a cursor of its own, as tasks.json's records.
 * Each one goes to the source with senders (source_env.datagram): the
 * listener's engine checks its tag, its sender and its sequence number as
 * it checks its own datagrams, so a gap is a loss on either path and a
 * datagram is never applied twice. */
#include "daskpriv.h"

#include <string.h>

#define DATAGRAMS_RETRY 5.0 /* seconds before asking again a route without them */

/* One payload (dask_parse_datagrams): to the source with senders, which
 * counts it (its datagrams by path); here only what none takes. */
static void datagrams_one(void *ctx, int port, const char *text)
{
	struct dask *d = ctx;
	long n = text ? dask_base64_decode(text, strlen(text), d->dg.buf, sizeof(d->dg.buf)) : -1;
	if (n < 0)
		d->dg.rejected++;
	else if (!d->datagram(d->ctx, (const char *)d->dg.buf, (size_t)n, port, d->now))
		d->dg.elsewhere++;
}

enum answer dask_on_datagrams(struct dask *d, long code, const struct xfer *x)
{
	struct dask_cursor at;
	if (code == 200 && dask_parse_datagrams(x->body.data, x->body.len, &at, datagrams_one, d)) {
		d->dg.at = at;
		d->dg.lost += at.lost;
		d->dg.capped += at.more;
		d->dg.answers++;
		return ANS_DID;
	}
	/* 404: a route of an older collector, asked again later; any other
	 * answer is refused, the cursor staying */
	if (code == 404)
		d->dg.retry_at = d->now + DATAGRAMS_RETRY;
	else
		d->dg.answers_rejected++;
	d->dg.at.more = false;
	return ANS_FAILED;
}

void dask_datagrams_stats(const struct dask *d, struct source_stats *out)
{
	source_count(out, "datagrams", "elsewhere", d->dg.elsewhere);
	source_count(out, "datagrams", "lost", d->dg.lost);
	source_count(out, "datagrams", "capped", d->dg.capped);
	source_count(out, "datagrams", "rejected", d->dg.rejected);
	source_count(out, "datagrams", "answers", d->dg.answers);
	source_count(out, "datagrams", "answers_rejected", d->dg.answers_rejected);
}
