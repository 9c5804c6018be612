/* The collector's route's datagrams (docs/protocol.md, "The Dask path"):
 * datagrams.json?since=<cursor> after each tasks.json, the datagrams
 * workers that cannot reach roastop by UDP handed to their Dask
 * connection. Each goes to the source with senders, whose engine checks it
 * as its own: a gap is a loss on either path, and nothing applies twice. */
#include "daskpriv.h"

#include <string.h>

#define DATAGRAMS_RETRY 5.0 /* seconds before asking again a route without them */

/* One payload: counted here only when no source takes it. */
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
	if (code == 200 && dask_parse_datagrams(x->body.buf.data, x->body.buf.len, &at, datagrams_one, d)) {
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
