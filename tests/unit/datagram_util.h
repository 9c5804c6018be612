/* Datagrams for the listener's tests, written as a JSON object for the
 * reader ({"type":"chunk","host":"h","pid":1,"seq":0,...}) and sent as the
 * emitter sends them: the binary body of docs/protocol.md, each member
 * under the id the codec's table gives its name, framed "RTP2", tagged
 * with the raw HMAC-SHA256 under a key (untagged without one). */
#ifndef ROASTOP_TEST_DATAGRAM_UTIL_H
#define ROASTOP_TEST_DATAGRAM_UTIL_H

#include <cjson/cJSON.h>
#include <string.h>

#include "roastop/auth.h"
#include "roastop/event_datagram.h"
#include "roastop/event_field.h"
#include "roastop/strbuf.h"

static int dg_kind(const char *type)
{
	static const char *const names[] = { "",	"chunk",  "chunk_start", "heartbeat", "run_start",
					     "run_end", "report", "hello",	 "ack" };
	for (int k = 1; k < (int)(sizeof(names) / sizeof(names[0])); k++)
		if (strcmp(names[k], type) == 0)
			return k;
	return 0;
}

static void dg_u16(struct strbuf *sb, size_t n)
{
	char b[2] = { (char)(n & 0xff), (char)(n >> 8) };
	strbuf_append(sb, b, 2);
}

static void dg_str(struct strbuf *sb, const char *s)
{
	dg_u16(sb, strlen(s));
	strbuf_append(sb, s, strlen(s));
}

static void dg_num(struct strbuf *sb, double x)
{
	strbuf_append(sb, (const char *)&x, 8); /* little-endian hosts only */
}

static bool dg_value(struct strbuf *sb, const struct event_field *f, const cJSON *v);

/* file_metadata: its count, then (id, value) per member. */
static bool dg_meta(struct strbuf *sb, const cJSON *v)
{
	char n = (char)cJSON_GetArraySize(v);
	strbuf_append(sb, &n, 1);
	for (const cJSON *m = v->child; m; m = m->next) {
		const struct event_field *f = NULL;
		unsigned id = 1;
		for (; id < 16; id++)
			if ((f = event_datagram_meta_field(id)) && strcmp(f->name, m->string) == 0)
				break;
		if (id == 16)
			return false;
		char b = (char)id;
		strbuf_append(sb, &b, 1);
		if (!dg_value(sb, f, m))
			return false;
	}
	return true;
}

static bool dg_value(struct strbuf *sb, const struct event_field *f, const cJSON *v)
{
	switch (f->kind) {
	case FK_NUM:
	case FK_INT: dg_num(sb, v->valuedouble); return cJSON_IsNumber(v);
	case FK_STR: dg_str(sb, cJSON_IsString(v) ? v->valuestring : ""); return cJSON_IsString(v);
	case FK_STRLIST:
		dg_u16(sb, (size_t)cJSON_GetArraySize(v));
		for (const cJSON *m = v->child; m; m = m->next)
			dg_str(sb, cJSON_IsString(m) ? m->valuestring : "");
		return cJSON_IsArray(v);
	case FK_KV:
		dg_u16(sb, (size_t)cJSON_GetArraySize(v));
		for (const cJSON *m = v->child; m; m = m->next) {
			dg_str(sb, m->string);
			dg_num(sb, m->valuedouble);
		}
		return cJSON_IsObject(v);
	case FK_FILEMETA: return cJSON_IsObject(v) && dg_meta(sb, v);
	default: return false;
	}
}

/* The body of the JSON object text: false when a member has no id in the
 * kind's table or a value of another type than its field's. */
static bool dg_body(const char *json, struct strbuf *out)
{
	cJSON *o = cJSON_Parse(json);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
	int kind = cJSON_IsString(type) ? dg_kind(type->valuestring) : 0;
	char k = (char)kind;
	bool ok = kind != 0;
	strbuf_append(out, &k, 1);
	for (const cJSON *m = o ? o->child : NULL; ok && m; m = m->next) {
		if (strcmp(m->string, "type") == 0 || cJSON_IsNull(m))
			continue;
		unsigned id = 1;
		const struct event_field *f = NULL;
		for (; id < 128; id++)
			if ((f = event_datagram_field(kind, id)) && strcmp(f->name, m->string) == 0)
				break;
		char b = (char)id;
		strbuf_append(out, &b, 1);
		ok = id < 128 && dg_value(out, f, m);
	}
	cJSON_Delete(o);
	return ok;
}

/* "RTP2", the flags and the tag (key NULL: untagged), then body. */
static void dg_frame(const struct auth_key *key, const char *body, size_t len, struct strbuf *out)
{
	strbuf_append(out, "RTP2", 4);
	char flags = key ? 1 : 0;
	strbuf_append(out, &flags, 1);
	if (key) {
		uint8_t tag[AUTH_TAG_LEN];
		auth_tag_raw(key, body, len, tag);
		strbuf_append(out, (const char *)tag, sizeof(tag));
	}
	strbuf_append(out, body, len);
}

/* The framed datagram of a JSON object text (dg_body must take it). */
static bool dg_datagram(const struct auth_key *key, const char *json, struct strbuf *out)
{
	struct strbuf body;
	strbuf_init(&body);
	bool ok = dg_body(json, &body);
	dg_frame(key, body.data, body.len, out);
	strbuf_free(&body);
	return ok;
}

#endif
