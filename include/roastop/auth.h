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

/* HMAC-SHA256 with the key's inner and outer hash states computed once:
 * a tag then costs two digest-context copies instead of a full HMAC set-up. */
struct auth_mac;
struct auth_mac *auth_mac_new(const struct auth_key *k);
void auth_mac_free(struct auth_mac *m);
/* Is tag the HMAC-SHA256 of body under the key? */
bool auth_mac_ok_raw(struct auth_mac *m, const char *body, size_t len,
		     const uint8_t tag[AUTH_TAG_LEN]);

/* path given: read it (refused when group/world-accessible, not ours, not a
 * regular file or a symbolic link), or create it 0600 with a new key when
 * missing. path NULL: the same with the per-user key file,
 * $XDG_CONFIG_HOME/roastop/key or ~/.config/roastop/key; when there is no
 * HOME or it cannot be written, a key for this session only (session set,
 * note says why) in $XDG_RUNTIME_DIR/roastop, ~/.cache/roastop or
 * /tmp/roastop-UID. renew: a fresh key replaces the file (atomically). A new
 * file appears whole or not at all; when two roastops make it at once, both
 * use the one made first. */
int auth_key_setup(struct auth_key *k, const char *path, bool renew, char *err, size_t errsz);
/* Writes the raw tag of body into out. */
void auth_tag_raw(const struct auth_key *k, const char *body, size_t len,
		  uint8_t out[AUTH_TAG_LEN]);

#endif
