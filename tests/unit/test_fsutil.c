#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/fsutil.h"

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0; /* ".x.tmp" counts */
	if (d)
		closedir(d);
	return n;
}

static void read_back(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* The emitter's line file: mode 0600 whatever the umask, replaced whole
 * (a wider-open file before is 0600 after), no temporary left behind; a
 * missing directory is an error with errno, and nothing is made. */
static void write_private_replaces_whole_at_0600(void **state)
{
	(void)state;
	char dir[] = "/tmp/roastop-fsutil-XXXXXX", path[64], buf[128];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/key.env", dir);
	FILE *old = fopen(path, "w");
	assert_non_null(old);
	fputs("an older and longer line, world-readable\n", old);
	fclose(old);
	chmod(path, 0644);
	mode_t um = umask(0);
	assert_int_equal(fsutil_write_private(path, "export A=1\n"), 0);
	umask(um);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	read_back(path, buf, sizeof(buf));
	assert_string_equal(buf, "export A=1\n");
	assert_int_equal(entries(dir), 1); /* no temporary left */
	char missing[96];
	snprintf(missing, sizeof(missing), "%s/no/such/dir/key.env", dir);
	assert_int_equal(fsutil_write_private(missing, "x\n"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(entries(dir), 1);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_private_replaces_whole_at_0600),
	};
	return cmocka_run_group_tests_name("fsutil", tests, NULL, NULL);
}
