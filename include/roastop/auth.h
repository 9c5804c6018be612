/* The session key that signs UDP datagrams (docs/protocol.md): made at
 * random or read from a key file only the user can read; tags are
 * HMAC-SHA256, compared in constant time. */
#ifndef ROASTOP_AUTH_H
#define ROASTOP_AUTH_H

#include "roastop/common.h"

#define AUTH_KEY_LEN 32
#define AUTH_TAG_LEN 32 /* raw bytes */
#define AUTH_PATH_MAX 512

struct auth_key {
	uint8_t key[AUTH_KEY_LEN];
	char hex[2 * AUTH_KEY_LEN + 1];
	char path[AUTH_PATH_MAX]; /* where it is kept */
	bool session; /* a file of this session's own, to remove at exit */
	char note[AUTH_PATH_MAX]; /* why the per-user key is not used; "" when it is */
};

/* HMAC-SHA256 with the key's inner and outer states computed once. */
struct auth_mac;
struct auth_mac *auth_mac_new(const struct auth_key *k);
void auth_mac_free(struct auth_mac *m);
bool auth_mac_ok_raw(struct auth_mac *m, const char *body, size_t len,
		     const uint8_t tag[AUTH_TAG_LEN]);

/* path's key (refused when others can read it, not ours, not a regular
 * file or a link), or a new one made 0600 there. path NULL: the per-user
 * key file (docs/protocol.md), else a key for this session only (note says
 * why). renew: a fresh key replaces the file. A new file appears whole;
 * when two roastops make it at once, both use the one made first. */
int auth_key_setup(struct auth_key *k, const char *path, bool renew, char *err, size_t errsz);
void auth_tag_raw(const struct auth_key *k, const char *body, size_t len,
		  uint8_t out[AUTH_TAG_LEN]);

#endif
