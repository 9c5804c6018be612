#include "test_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "roastop/auth.h"

#define REFERENCE_TAG "e7bd533f37417b0383612203d757508678b1adc4cbdbfbff0289a6278f832bf5"

static void key_file_created_private_and_read_back(void **state)
{
	(void)state;
	char dir[] = "/tmp/roastop-auth-XXXXXX", path[128], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k", dir);
	struct auth_key a, b;
	assert_int_equal(auth_key_setup(&a, path, false, err, sizeof(err)), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(auth_key_setup(&b, path, false, err, sizeof(err)), 0);
	assert_memory_equal(a.key, b.key, AUTH_KEY_LEN);
	assert_int_equal(strlen(a.hex), 64);
	chmod(path, 0644);
	assert_int_equal(auth_key_setup(&b, path, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "readable by others"));
	unlink(path);
	rmdir(dir);
}

/* The tag in hex, to compare with a reference printed by Python. */
static void tag_hex(const struct auth_key *k, const char *body, size_t len, char out[65])
{
	uint8_t tag[AUTH_TAG_LEN];
	auth_tag_raw(k, body, len, tag);
	for (size_t i = 0; i < AUTH_TAG_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", tag[i]);
}

/* Our tag against an HMAC computed independently by Python's hmac module
 * for this 32-byte key. */
static void tag_matches_reference(void **state)
{
	(void)state;
	struct auth_key k;
	memset(&k, 0, sizeof(k));
	for (int i = 0; i < AUTH_KEY_LEN; i++)
		k.key[i] = (uint8_t)i;
	const char *body = "{\"type\":\"run_end\"}";
	char tag[65];
	tag_hex(&k, body, strlen(body), tag);
	/* python3 -c 'import hmac,hashlib; print(hmac.new(bytes(range(32)),
	 *   b"{\"type\":\"run_end\"}", hashlib.sha256).hexdigest())' */
	assert_string_equal(tag, REFERENCE_TAG);
}

/* The precomputed-state MAC agrees with OpenSSL's one-shot HMAC() for
 * every body length around the 64-byte block and padding boundaries, and
 * refuses any changed tag bit and a changed body byte. */
static void mac_agrees_with_one_shot_hmac(void **state)
{
	(void)state;
	struct auth_key k;
	memset(&k, 0, sizeof(k));
	for (int i = 0; i < AUTH_KEY_LEN; i++)
		k.key[i] = (uint8_t)(7 * i + 3);
	struct auth_mac *m = auth_mac_new(&k);
	assert_non_null(m);
	char body[300];
	uint8_t tag[AUTH_TAG_LEN];
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (char)('!' + i % 90);
	for (size_t len = 0; len <= sizeof(body); len++) {
		auth_tag_raw(&k, body, len, tag);
		assert_true(auth_mac_ok_raw(m, body, len, tag));
		if (len)
			assert_false(auth_mac_ok_raw(m, body, len - 1, tag));
	}
	auth_tag_raw(&k, body, 130, tag);
	for (size_t i = 0; i < AUTH_TAG_LEN * 8; i++) {
		tag[i / 8] ^= (uint8_t)(1u << (i % 8));
		assert_false(auth_mac_ok_raw(m, body, 130, tag));
		tag[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	assert_true(auth_mac_ok_raw(m, body, 130, tag));
	body[64] ^= 1;
	assert_false(auth_mac_ok_raw(m, body, 130, tag));
	auth_mac_free(m);
}

static int key_from(const char *dir, const char *text, size_t len, char *err, size_t errsz)
{
	char file[128];
	snprintf(file, sizeof(file), "%s/k", dir);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	struct auth_key k;
	int rc = auth_key_setup(&k, file, false, err, errsz);
	if (rc == 0)
		assert_int_equal(k.key[1], 0x23);
	unlink(file);
	return rc;
}

/* The one rule for a key file (and for the emitter's ROASTOP_KEY): exactly
 * 64 hex digits, optionally one "\n" or "\r\n", nothing else. */
static void key_file_rule(void **state)
{
	(void)state;
	char dir[] = "/tmp/roastop-auth-XXXXXX", err[256];
	assert_non_null(mkdtemp(dir));
	const char *hex = "0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789abcdef";
	const char *good[] = { "", "\n", "\r\n" };
	const char *bad[] = { "\n\n", "\njunk", " ", "\r", "0\n", "\n\0", "\r\n\n" };
	char text[200];
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		int n = snprintf(text, sizeof(text), "%s%s", hex, good[i]);
		assert_int_equal(key_from(dir, text, (size_t)n, err, sizeof(err)), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int n = snprintf(text, sizeof(text), "%s%s", hex, bad[i]);
		n += i == 5; /* the NUL byte after the newline */
		assert_int_equal(key_from(dir, text, (size_t)n, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "exactly 64 hex digits"));
	}
	assert_int_equal(key_from(dir, hex, 63, err, sizeof(err)), -1);
	assert_int_equal(key_from(dir, "\n", 1, err, sizeof(err)), -1);
	rmdir(dir);
}

/* A FIFO, a directory or a device is refused without being read (a FIFO
 * without a writer would block open and read); a symbolic link is not
 * followed, even to a good key. */
static void key_file_must_be_a_regular_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/roastop-auth-XXXXXX", file[128], link[128], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/fifo", dir);
	assert_int_equal(mkfifo(file, 0600), 0);
	struct auth_key k;
	assert_int_equal(auth_key_setup(&k, file, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(file);
	assert_int_equal(auth_key_setup(&k, dir, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(auth_key_setup(&k, "/dev/null", false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	snprintf(file, sizeof(file), "%s/k", dir);
	assert_int_equal(auth_key_setup(&k, file, false, err, sizeof(err)), 0); /* made */
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(auth_key_setup(&k, link, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	unlink(link);
	unlink(file);
	rmdir(dir);
}

/* A fresh HOME with no XDG_CONFIG_HOME: what a per-user key sees first. */
static void home_in(char *dir)
{
	assert_non_null(mkdtemp(dir));
	setenv("HOME", dir, 1);
	unsetenv("XDG_CONFIG_HOME");
}

static void mode_is(const char *path, mode_t mode)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, mode);
}

static void remove_tree(const char *dir)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* No key file named: ~/.config/roastop/key, the directories made 0700, the
 * file 0600; the next start reads the same key, and keeps it past exit. */
static void default_key_under_home_made_once_then_reused(void **state)
{
	(void)state;
	char home[] = "/tmp/roastop-home-XXXXXX", want[128], err[512];
	home_in(home);
	struct auth_key a, b;
	assert_int_equal(auth_key_setup(&a, NULL, false, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/.config/roastop/key", home);
	assert_string_equal(a.path, want);
	assert_false(a.session);
	assert_string_equal(a.note, "");
	mode_is(want, 0600);
	snprintf(want, sizeof(want), "%s/.config", home);
	mode_is(want, 0700);
	snprintf(want, sizeof(want), "%s/.config/roastop", home);
	mode_is(want, 0700);
	assert_int_equal(auth_key_setup(&b, NULL, false, err, sizeof(err)), 0);
	assert_string_equal(a.path, b.path);
	assert_memory_equal(a.key, b.key, AUTH_KEY_LEN);
	remove_tree(home);
}

/* An absolute XDG_CONFIG_HOME wins over HOME (made when missing); a
 * relative one is ignored, as the XDG spec asks. */
static void default_key_follows_xdg_config_home(void **state)
{
	(void)state;
	char home[] = "/tmp/roastop-home-XXXXXX", xdg[128], want[160], err[512];
	home_in(home);
	snprintf(xdg, sizeof(xdg), "%s/xdg", home);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	struct auth_key k;
	assert_int_equal(auth_key_setup(&k, NULL, false, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/roastop/key", xdg);
	assert_string_equal(k.path, want);
	mode_is(xdg, 0700);
	mode_is(want, 0600);
	setenv("XDG_CONFIG_HOME", "relative/dir", 1);
	assert_int_equal(auth_key_setup(&k, NULL, false, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/.config/roastop/key", home);
	assert_string_equal(k.path, want);
	unsetenv("XDG_CONFIG_HOME");
	remove_tree(home);
}

/* Eight starts at once with no key file yet: one key is made and every
 * start uses it (a key appears whole under its name, or not at all). */
static void first_starts_at_once_share_one_key(void **state)
{
	(void)state;
	enum { N = 8 };
	char home[] = "/tmp/roastop-home-XXXXXX", err[512];
	home_in(home);
	int fds[N][2];
	for (int i = 0; i < N; i++) {
		assert_int_equal(pipe(fds[i]), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct auth_key k;
			int rc = auth_key_setup(&k, NULL, false, err, sizeof(err));
			_exit(rc == 0 && !k.session && write(fds[i][1], k.hex, 64) == 64 ? 0 : 1);
		}
		close(fds[i][1]);
	}
	char first[65] = "", got[65];
	for (int i = 0; i < N; i++) {
		int status = 0;
		assert_true(wait(&status) > 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	for (int i = 0; i < N; i++) {
		assert_int_equal(read(fds[i][0], got, 64), 64);
		got[64] = '\0';
		close(fds[i][0]);
		if (!first[0])
			memcpy(first, got, sizeof(got));
		assert_string_equal(got, first);
	}
	remove_tree(home);
}

/* The default file is held to the --key-file rules: a group-readable file
 * and a symbolic link (even to a good key) are refused, not replaced. */
static void default_key_refused_when_unsafe(void **state)
{
	(void)state;
	char home[] = "/tmp/roastop-home-XXXXXX", other[128], err[512];
	home_in(home);
	struct auth_key k;
	assert_int_equal(auth_key_setup(&k, NULL, false, err, sizeof(err)), 0);
	char path[sizeof(k.path)];
	snprintf(path, sizeof(path), "%s", k.path);
	chmod(path, 0640);
	assert_int_equal(auth_key_setup(&k, NULL, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "readable by others"));
	mode_is(path, 0640);
	snprintf(other, sizeof(other), "%s/good.key", home);
	chmod(path, 0600);
	assert_int_equal(rename(path, other), 0);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(auth_key_setup(&k, NULL, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	remove_tree(home);
}

/* renew: a fresh key renamed over the file, 0600 even over a file others
 * could read; the next start reads the new one. A link is not replaced. */
static void new_key_replaces_the_file(void **state)
{
	(void)state;
	char home[] = "/tmp/roastop-home-XXXXXX", kf[128], err[512];
	home_in(home);
	struct auth_key a, b, c;
	assert_int_equal(auth_key_setup(&a, NULL, false, err, sizeof(err)), 0);
	chmod(a.path, 0644);
	assert_int_equal(auth_key_setup(&b, NULL, true, err, sizeof(err)), 0);
	assert_string_equal(a.path, b.path);
	assert_memory_not_equal(a.key, b.key, AUTH_KEY_LEN);
	mode_is(b.path, 0600);
	assert_int_equal(auth_key_setup(&c, NULL, false, err, sizeof(err)), 0);
	assert_memory_equal(b.key, c.key, AUTH_KEY_LEN);
	/* with a key file named, that file; made when missing */
	snprintf(kf, sizeof(kf), "%s/named.key", home);
	assert_int_equal(auth_key_setup(&a, kf, true, err, sizeof(err)), 0);
	assert_string_equal(a.path, kf);
	mode_is(kf, 0600);
	assert_int_equal(auth_key_setup(&b, kf, true, err, sizeof(err)), 0);
	assert_memory_not_equal(a.key, b.key, AUTH_KEY_LEN);
	assert_int_equal(auth_key_setup(&c, kf, false, err, sizeof(err)), 0);
	assert_memory_equal(b.key, c.key, AUTH_KEY_LEN);
	/* nothing left beside it: the temporaries were renamed or removed */
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s/.config/roastop' | wc -l) -eq 1", home);
	assert_int_equal(system(cmd), 0);
	unlink(kf);
	assert_int_equal(symlink(c.path, kf), 0);
	assert_int_equal(auth_key_setup(&a, kf, true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not replaced"));
	remove_tree(home);
}

/* No HOME (or one we cannot write): a key for this session only, with a
 * note saying why, never a failed start. */
static void no_home_falls_back_to_a_session_key(void **state)
{
	(void)state;
	char home[] = "/tmp/roastop-home-XXXXXX", run[160], err[512];
	home_in(home);
	snprintf(run, sizeof(run), "%s/run", home);
	assert_int_equal(mkdir(run, 0700), 0);
	setenv("XDG_RUNTIME_DIR", run, 1);
	unsetenv("HOME");
	struct auth_key k;
	assert_int_equal(auth_key_setup(&k, NULL, false, err, sizeof(err)), 0);
	assert_true(k.session);
	assert_non_null(strstr(k.note, "HOME is not set"));
	assert_null(strchr(k.note, '\n'));
	assert_non_null(strstr(k.path, "/run/roastop/session-"));
	mode_is(k.path, 0600);
	/* a HOME where ~/.config/roastop cannot be made (a file in the way:
	 * unwritable even for root, who writes through any mode) */
	setenv("HOME", home, 1);
	char cfg[160];
	snprintf(cfg, sizeof(cfg), "%s/.config", home);
	close(open(cfg, O_WRONLY | O_CREAT, 0600));
	assert_int_equal(auth_key_setup(&k, NULL, false, err, sizeof(err)), 0);
	assert_true(k.session);
	assert_non_null(strstr(k.note, "Not a directory"));
	assert_non_null(strstr(k.path, "/run/roastop/session-"));
	unsetenv("XDG_RUNTIME_DIR");
	remove_tree(home);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_file_created_private_and_read_back),
		cmocka_unit_test(tag_matches_reference),
		cmocka_unit_test(mac_agrees_with_one_shot_hmac),
		cmocka_unit_test(key_file_rule),
		cmocka_unit_test(key_file_must_be_a_regular_file),
		cmocka_unit_test(default_key_under_home_made_once_then_reused),
		cmocka_unit_test(default_key_follows_xdg_config_home),
		cmocka_unit_test(first_starts_at_once_share_one_key),
		cmocka_unit_test(default_key_refused_when_unsafe),
		cmocka_unit_test(new_key_replaces_the_file),
		cmocka_unit_test(no_home_falls_back_to_a_session_key),
	};
	return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
