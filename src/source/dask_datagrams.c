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

#include "roastop/clock.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#define DATAGRAMS_RETRY 5.0 /* seconds before asking again a route without them */

/* ?since=<cursor>, as tasks.json's; before the first answer, ?within=
 * the seconds since roastop opened: what workers logged before its first
 * poll counts, an earlier session's does not (durations on either side:
 * no clock is compared with another host's). */
bool dask_datagrams_query(const struct dask *d, char *url, size_t size)
{
	size_t n = strlen(url);
	int w = d->dg.since[0]
			? snprintf(url + n, size - n, "?since=%s", d->dg.since)
			: snprintf(url + n, size - n, "?within=%.3f", clock_mono() - d->dg.opened);
	return w >= 0 && (size_t)w < size - n;
}

/* After tasks.json: datagrams.json when the route offers it and a source
 * takes datagrams, else the round's end. */
void dask_datagrams_next(struct dask *d)
{
	if (d->datagram && d->now >= d->dg.retry_at)
		dask_sched_start(d, R_DATAGRAMS);
	else
		dask_round_end(d, true);
}

/* The route went away: its cursor with it. */
void dask_datagrams_gone(struct dask *d)
{
	d->dg.since[0] = '\0';
	d->dg.more = false;
}

static bool b64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

/* Only the alphabet before the padding (EVP_DecodeBlock would skip
 * whitespace), and the last group as the encoder writes it (unused bits
 * zero): one text per datagram. */
long dask_datagram_decode(const char *text, size_t len, unsigned char *out, size_t cap)
{
	if (!len || len % 4 || len / 4 * 3 > cap || len > INT_MAX)
		return -1;
	size_t pad = (text[len - 1] == '=') + (text[len - 2] == '=');
	for (size_t i = 0; i < len - pad; i++)
		if (!b64_char(text[i]))
			return -1;
	int n = EVP_DecodeBlock(out, (const unsigned char *)text, (int)len);
	if (n < 0 || (size_t)n < pad)
		return -1;
	size_t got = (size_t)n - pad;
	unsigned char last[8];
	int m = EVP_EncodeBlock(last, out + (len / 4 - 1) * 3, (int)(3 - pad));
	return m == 4 && memcmp(last, text + len - 4, 4) == 0 ? (long)got : -1;
}

/* One payload, [port, base64]: the port the sender addressed (its
 * ROASTOP_ADDR's), and the datagram (dask_datagram_decode). */
static void datagrams_one(struct dask *d, const cJSON *item)
{
	const cJSON *port = cJSON_IsArray(item) && cJSON_GetArraySize(item) == 2
				    ? cJSON_GetArrayItem(item, 0)
				    : NULL;
	const cJSON *b64 = port ? port->next : NULL;
	const char *text = cJSON_IsString(b64) && cJSON_IsNumber(port) &&
					   port->valuedouble >= 1 && port->valuedouble <= 65535
				   ? b64->valuestring
				   : NULL;
	long n = text ? dask_datagram_decode(text, strlen(text), d->dg.buf, sizeof(d->dg.buf)) : -1;
	if (n < 0) {
		d->dg.rejected++;
		return;
	}
	if (d->datagram(d->ctx, (const char *)d->dg.buf, (size_t)n, port->valueint, d->now))
		d->dg.datagrams++;
	else
		d->dg.elsewhere++;
}

static bool datagrams_count(const cJSON *o, const char *name, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	*out = cJSON_IsNumber(v) ? v->valuedouble : -1;
	return *out >= 0 && *out < 9e15;
}

/* The answer's cursor and counts; false when it is not the route's shape. */
static bool datagrams_head(struct dask *d, const cJSON *o)
{
	const cJSON *stream = cJSON_GetObjectItemCaseSensitive(o, "stream");
	double next, lost, left;
	if (!cJSON_IsString(stream) || strlen(stream->valuestring) > 64 ||
	    strspn(stream->valuestring, "0123456789abcdef-") != strlen(stream->valuestring) ||
	    !datagrams_count(o, "next", &next) || !datagrams_count(o, "lost", &lost) ||
	    !datagrams_count(o, "left", &left) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "datagrams")))
		return false;
	snprintf(d->dg.since, sizeof(d->dg.since), "%s.%.0f", stream->valuestring, next);
	d->dg.lost += (uint64_t)lost;
	d->dg.more = left > 0;
	d->dg.capped += left > 0;
	d->dg.answers++;
	return true;
}

void dask_on_datagrams(struct dask *d, long code, const struct xfer *x)
{
	cJSON *o = code == 200 ? cJSON_ParseWithLength(x->body.data, x->body.len) : NULL;
	if (cJSON_IsObject(o) && datagrams_head(d, o)) {
		const cJSON *item;
		cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(o, "datagrams"))
			datagrams_one(d, item);
	} else {
		/* 404: a route of an older collector, asked again later; any
		 * other answer is refused, the cursor staying */
		if (code == 404)
			d->dg.retry_at = d->now + DATAGRAMS_RETRY;
		else
			d->dg.answers_rejected++;
		d->dg.more = false;
	}
	cJSON_Delete(o);
	dask_round_end(d, true);
}

void dask_datagrams_stats(const struct dask *d, struct source_stats *out)
{
	source_count(out, "datagrams", "received", d->dg.datagrams);
	source_count(out, "datagrams", "elsewhere", d->dg.elsewhere);
	source_count(out, "datagrams", "lost", d->dg.lost);
	source_count(out, "datagrams", "capped", d->dg.capped);
	source_count(out, "datagrams", "rejected", d->dg.rejected);
	source_count(out, "datagrams", "answers", d->dg.answers);
	source_count(out, "datagrams", "answers_rejected", d->dg.answers_rejected);
}
