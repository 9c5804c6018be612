#include "roastop/auth.h"
#include "roastop/strutil.h"

/* auth_mac copies SHA-256 states per datagram: a struct copy with the
 * deprecated SHA256_CTX, where OpenSSL 3's EVP_MD_CTX_copy_ex allocates
 * each time (a third of the HMAC's cost on a 700-byte datagram). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/fsutil.h"

static void to_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* strutil_hexval as a table: value + 1, 0 for a byte that is no hex digit */
static uint8_t nibble_table[256];
static pthread_once_t nibble_once = PTHREAD_ONCE_INIT;

static void nibble_fill(void)
{
	for (int c = 0; c < 256; c++)
		nibble_table[c] = (uint8_t)(strutil_hexval((char)c) + 1);
}

static bool from_hex(const char *s, uint8_t *out, size_t n)
{
	pthread_once(&nibble_once, nibble_fill);
	for (size_t i = 0; i < n; i++) {
		/* stops at the first non-hex byte: a short string's NUL ends it */
		unsigned hi = nibble_table[(unsigned char)s[2 * i]];
		unsigned lo = hi ? nibble_table[(unsigned char)s[2 * i + 1]] : 0;
		if (!lo)
			return false;
		out[i] = (uint8_t)((hi - 1) << 4 | (lo - 1));
	}
	return true;
}

static int key_generate(struct auth_key *k, char *err, size_t errsz)
{
	if (RAND_bytes(k->key, AUTH_KEY_LEN) != 1) {
		snprintf(err, errsz, "cannot make a random key (OpenSSL RAND_bytes failed)");
		return -1;
	}
	to_hex(k->key, AUTH_KEY_LEN, k->hex);
	return 0;
}

/* A fresh temporary beside path holding the key: 0600 from its creation
 * (a descriptor opened while the mode was wider would keep its access after
 * a chmod), O_EXCL and O_NOFOLLOW under a random name, so nothing planted
 * there is used; synced, so a rename never publishes an empty key. */
static int key_temp(const struct auth_key *k, const char *path, char *tmp, size_t size,
		    char *err, size_t errsz)
{
	uint8_t r[8];
	char rhex[2 * sizeof(r) + 1], line[2 * AUTH_KEY_LEN + 2];
	if (RAND_bytes(r, sizeof(r)) != 1) {
		snprintf(err, errsz, "cannot make a random name (OpenSSL RAND_bytes failed)");
		return -1;
	}
	to_hex(r, sizeof(r), rhex);
	if (snprintf(tmp, size, "%s.%s.tmp", path, rhex) >= (int)size) {
		snprintf(err, errsz, "key file path %s is too long", path);
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errsz, "cannot create key file %s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(line, sizeof(line), "%s\n", k->hex);
	int rc = fsutil_write_all(fd, line, strlen(line));
	if (rc == 0)
		rc = fsync(fd);
	int e = errno;
	OPENSSL_cleanse(line, sizeof(line));
	if (close(fd) != 0 || rc != 0) {
		snprintf(err, errsz, "cannot write key file %s: %s", path,
			 strerror(rc ? e : errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The key appears under path only once written whole: link(2) for a new
 * file, which fails with EEXIST when another roastop made one meanwhile
 * (1: read theirs), or rename(2) over the old one. */
static int key_publish(struct auth_key *k, const char *path, bool replace, char *err,
		       size_t errsz)
{
	char tmp[AUTH_PATH_MAX + 32];
	if (key_temp(k, path, tmp, sizeof(tmp), err, errsz) != 0)
		return -1;
	int rc = replace ? rename(tmp, path) : link(tmp, path);
	int e = errno;
	if (rc != 0 || !replace)
		unlink(tmp);
	if (rc != 0 && !replace && e == EEXIST)
		return 1;
	if (rc != 0) {
		snprintf(err, errsz, "cannot %s key file %s: %s", replace ? "replace" : "create",
			 path, strerror(e));
		return -1;
	}
	snprintf(k->path, sizeof(k->path), "%s", path);
	return 0;
}

/* The one rule for a key, here and for the emitter's ROASTOP_KEY: exactly
 * 64 hex digits, optionally followed by one newline ("\n" or "\r\n"). */
static bool key_parse(const char *buf, size_t n, uint8_t key[AUTH_KEY_LEN])
{
	const size_t hex = 2 * AUTH_KEY_LEN;
	if (n < hex || !from_hex(buf, key, AUTH_KEY_LEN))
		return false;
	const char *rest = buf + hex;
	n -= hex;
	return n == 0 || (n == 1 && rest[0] == '\n') ||
	       (n == 2 && rest[0] == '\r' && rest[1] == '\n');
}

/* A regular file of ours that nobody else can read: a FIFO would block
 * the read (or feed anything), a device is no key. */
static int key_check(const struct stat *st, const char *path, char *err, size_t errsz)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errsz, "key file %s is not a regular file (a FIFO, device or "
				     "directory cannot hold a key)", path);
		return -1;
	}
	if ((st->st_mode & 077) || st->st_uid != geteuid()) {
		snprintf(err, errsz, "key file %s is readable by others or not yours; "
				     "chmod 600 it", path);
		return -1;
	}
	return 0;
}

/* Up to size bytes, to the end of the file. */
static ssize_t read_upto(int fd, char *buf, size_t size)
{
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* fd: the key file, opened O_NONBLOCK | O_NOFOLLOW; closed here. */
static int key_read(struct auth_key *k, int fd, const char *path, char *err, size_t errsz)
{
	struct stat st;
	char buf[2 * AUTH_KEY_LEN + 3]; /* one byte more than a key and "\r\n" */
	ssize_t n = -1;
	int rc = -1;
	if (fstat(fd, &st) != 0)
		snprintf(err, errsz, "cannot read key file %s: %s", path, strerror(errno));
	else if (key_check(&st, path, err, errsz) == 0 && (n = read_upto(fd, buf, sizeof(buf))) < 0)
		snprintf(err, errsz, "cannot read key file %s: %s", path, strerror(errno));
	else if (n >= 0 && !key_parse(buf, (size_t)n, k->key))
		snprintf(err, errsz, "key file %s must hold exactly 64 hex digits, optionally "
				     "followed by one newline, and nothing else", path);
	else if (n >= 0)
		rc = 0;
	close(fd);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (rc != 0)
		return -1;
	to_hex(k->key, AUTH_KEY_LEN, k->hex);
	snprintf(k->path, sizeof(k->path), "%s", path);
	return 0;
}

/* An existing key file: lstat before it is opened (opening a device can do
 * things), then fstat in key_read. 1 when there is no file (make one). */
static int key_open(struct auth_key *k, const char *path, char *err, size_t errsz)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errsz, "cannot open key file %s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errsz, "key file %s is a symbolic link: not followed", path);
		return -1;
	}
	if (key_check(&st, path, err, errsz) != 0)
		return -1;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsz, "cannot open key file %s: %s", path, strerror(errno));
		return -1;
	}
	return key_read(k, fd, path, err, errsz);
}

/* path's key, or a new one written there (or another roastop's, made
 * first). -2 when a new key cannot be written, -1 when the file is refused. */
static int key_load_or_make(struct auth_key *k, const char *path, char *err, size_t errsz)
{
	int rc = key_open(k, path, err, errsz);
	if (rc != 1)
		return rc;
	if (key_generate(k, err, errsz) != 0)
		return -1;
	rc = key_publish(k, path, false, err, errsz);
	if (rc == -1)
		return -2;
	if (rc == 1)
		rc = key_open(k, path, err, errsz);
	if (rc == 1)
		snprintf(err, errsz, "key file %s appeared and vanished while being made", path);
	return rc == 0 ? 0 : -1;
}

/* --new-key: a fresh key renamed over a regular file of ours, whatever its
 * mode (a key others could read is what a rotation replaces). */
static int key_renew(struct auth_key *k, const char *path, char *err, size_t errsz)
{
	struct stat st;
	if (lstat(path, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		snprintf(err, errsz, "key file %s is not a regular file of yours: not replaced",
			 path);
		return -1;
	}
	if (key_generate(k, err, errsz) != 0)
		return -1;
	return key_publish(k, path, true, err, errsz);
}

/* dir made 0700 when missing; it must then be a directory of ours that
 * nobody else can write (or, with private, read). A link to one is fine:
 * planting it takes write access to its parent, which is ours. */
static int key_dir_ok(const char *dir, bool private)
{
	struct stat st;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	if (stat(dir, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (private ? 077 : 022))) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* $XDG_CONFIG_HOME/roastop/key (absolute only, as the XDG spec asks), else
 * ~/.config/roastop/key. -2 with why in err when there is no such place. */
static int key_config_file(char *file, size_t size, char *err, size_t errsz)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char base[AUTH_PATH_MAX], dir[AUTH_PATH_MAX];
	int n = 0;
	if (xdg && xdg[0] == '/')
		n = snprintf(base, sizeof(base), "%s", xdg);
	else if (home && home[0])
		n = snprintf(base, sizeof(base), "%s/.config", home);
	else {
		snprintf(err, errsz, "HOME is not set, nor XDG_CONFIG_HOME");
		return -2;
	}
	if (n >= (int)sizeof(base) ||
	    snprintf(dir, sizeof(dir), "%s/roastop", base) >= (int)sizeof(dir) ||
	    snprintf(file, size, "%s/key", dir) >= (int)size) {
		snprintf(err, errsz, "the config directory's path is too long");
		return -2;
	}
	if ((mkdir(base, 0700) != 0 && errno != EEXIST) || key_dir_ok(dir, false) != 0) {
		snprintf(err, errsz, "%s: %s", errno == EPERM ? dir : base,
			 errno == EPERM ? "not a directory of yours that only you can write"
					: strerror(errno));
		return -2;
	}
	return 0;
}

/* $XDG_RUNTIME_DIR/roastop, else ~/.cache/roastop, else /tmp/roastop-UID:
 * the first that is (or can be made) private. */
static int key_session_dir(char *dir, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	if (xdg && *xdg && snprintf(dir, size, "%s/roastop", xdg) < (int)size &&
	    key_dir_ok(dir, true) == 0)
		return 0;
	if (home && *home) {
		char cache[480];
		snprintf(cache, sizeof(cache), "%s/.cache", home);
		mkdir(cache, 0700);
		if (snprintf(dir, size, "%s/roastop", cache) < (int)size &&
		    key_dir_ok(dir, true) == 0)
			return 0;
	}
	snprintf(dir, size, "/tmp/roastop-%u", (unsigned)geteuid());
	return key_dir_ok(dir, true);
}

static int key_session(struct auth_key *k, char *err, size_t errsz)
{
	char dir[AUTH_PATH_MAX - 32], file[AUTH_PATH_MAX];
	if (key_session_dir(dir, sizeof(dir)) != 0) {
		snprintf(err, errsz, "no private directory for the session key (%s): %s", dir,
			 strerror(errno));
		return -1;
	}
	snprintf(file, sizeof(file), "%s/session-%ld.key", dir, (long)getpid());
	unlink(file); /* a stale key of a dead roastop with our pid */
	if (key_generate(k, err, errsz) != 0 || key_publish(k, file, false, err, errsz) != 0)
		return -1;
	k->session = true;
	return 0;
}

int auth_key_setup(struct auth_key *k, const char *path, bool renew, char *err, size_t errsz)
{
	memset(k, 0, sizeof(*k));
	if (path && renew)
		return key_renew(k, path, err, errsz);
	if (path)
		return key_load_or_make(k, path, err, errsz) == 0 ? 0 : -1;
	char file[AUTH_PATH_MAX];
	int rc = key_config_file(file, sizeof(file), err, errsz);
	if (rc == 0)
		rc = renew ? key_renew(k, file, err, errsz) : key_load_or_make(k, file, err, errsz);
	if (rc != -2)
		return rc;
	snprintf(k->note, sizeof(k->note), "no key kept across sessions (%s): this one is "
		 "for this session only", err);
	return key_session(k, err, errsz);
}

void auth_tag_raw(const struct auth_key *k, const char *body, size_t len,
		  uint8_t out[AUTH_TAG_LEN])
{
	unsigned int n = 0;
	HMAC(EVP_sha256(), k->key, AUTH_KEY_LEN, (const uint8_t *)body, len, out, &n);
}

/* Constant time: every byte is compared whatever the first difference. A
 * word at a time, where CRYPTO_memcmp goes byte by byte. */
static bool tag_equal(const uint8_t a[AUTH_TAG_LEN], const uint8_t b[AUTH_TAG_LEN])
{
	uint64_t diff = 0, x, y;
	for (size_t i = 0; i < AUTH_TAG_LEN; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		diff |= x ^ y;
	}
	return diff == 0;
}

struct auth_mac {
	SHA256_CTX inner, outer; /* after the padded key's block */
};

void auth_mac_free(struct auth_mac *m)
{
	if (m)
		OPENSSL_cleanse(m, sizeof(*m));
	free(m);
}

/* RFC 2104: H((K ^ opad) || H((K ^ ipad) || m)), K padded to the block. */
struct auth_mac *auth_mac_new(const struct auth_key *k)
{
	struct auth_mac *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	uint8_t ipad[64], opad[64];
	memset(ipad, 0x36, sizeof(ipad));
	memset(opad, 0x5c, sizeof(opad));
	for (size_t i = 0; i < AUTH_KEY_LEN; i++) {
		ipad[i] ^= k->key[i];
		opad[i] ^= k->key[i];
	}
	bool ok = SHA256_Init(&m->inner) == 1 && SHA256_Update(&m->inner, ipad, sizeof(ipad)) == 1 &&
		  SHA256_Init(&m->outer) == 1 && SHA256_Update(&m->outer, opad, sizeof(opad)) == 1;
	OPENSSL_cleanse(ipad, sizeof(ipad));
	OPENSSL_cleanse(opad, sizeof(opad));
	if (!ok) {
		auth_mac_free(m);
		return NULL;
	}
	return m;
}

bool auth_mac_ok_raw(struct auth_mac *m, const char *body, size_t len,
		     const uint8_t tag[AUTH_TAG_LEN])
{
	uint8_t inner[32], mac[32];
	SHA256_CTX work = m->inner;
	if (SHA256_Update(&work, body, len) != 1 || SHA256_Final(inner, &work) != 1)
		return false;
	work = m->outer;
	bool done = SHA256_Update(&work, inner, sizeof(inner)) == 1 && SHA256_Final(mac, &work) == 1;
	OPENSSL_cleanse(&work, sizeof(work)); /* keyed state: not left on the stack */
	return done && tag_equal(mac, tag);
}
