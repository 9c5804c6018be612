/* The session key that signs UDP datagrams (docs/protocol.md): made at
 * random or read from a key file only the user can read; tags are
 * HMAC-SHA256, compared in constant time. */
#ifndef ROASTOP_AUTH_H
#define ROASTOP_AUTH_H

#include "roastop/common.h"

#define AUTH_KEY_LEN 32
#define AUTH_TAG_HEX 64
#define AUTH_TAG_LEN 32 /* raw bytes (protocol version 2) */

struct auth_key {
	uint8_t key[AUTH_KEY_LEN];
	char hex[2 * AUTH_KEY_LEN + 1];
	char path[512]; /* where it is kept */
};

/* HMAC-SHA256 with the key's inner and outer hash states computed once:
 * a tag then costs two digest-context copies instead of a full HMAC set-up. */
struct auth_mac;
struct auth_mac *auth_mac_new(const struct auth_key *k);
void auth_mac_free(struct auth_mac *m);
bool auth_mac_ok(struct auth_mac *m, const char *body, size_t len, const char *hex_tag);
/* The same check against a raw 32-byte tag. */
bool auth_mac_ok_raw(struct auth_mac *m, const char *body, size_t len,
		     const uint8_t tag[AUTH_TAG_LEN]);

/* path given: read it (refused when group/world-accessible or not ours),
 * or create it 0600 with a new key when missing. path NULL: a new key kept
 * in $XDG_RUNTIME_DIR/roastop (or ~/.cache/roastop), private directory. */
int auth_key_setup(struct auth_key *k, const char *path, char *err, size_t errsz);
/* Is hex_tag (AUTH_TAG_HEX hex digits) the HMAC-SHA256 of body under key? */
bool auth_tag_ok(const struct auth_key *k, const char *body, size_t len, const char *hex_tag);
/* Writes the raw tag of body (protocol version 2) into out. */
void auth_tag_raw(const struct auth_key *k, const char *body, size_t len,
		  uint8_t out[AUTH_TAG_LEN]);
/* Writes the lowercase hex tag of body into out (AUTH_TAG_HEX + 1 bytes). */
void auth_tag_hex(const struct auth_key *k, const char *body, size_t len, char *out);

#endif
