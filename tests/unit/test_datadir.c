#include "test_util.h"

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/datadir.h"

/* mkdir -p of root/rel's directories, then the file itself (or a directory). */
static void make_path(const char *root, const char *rel, bool dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if (dir) {
		assert_int_equal(mkdir(path, 0755), 0);
	} else {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fclose(f);
	}
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tree(const char *root)
{
	assert_int_equal(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void expect_found(enum datadir_file f, const char *exe, const char *root, const char *rel)
{
	char out[PATH_MAX], want[PATH_MAX], joined[PATH_MAX];
	snprintf(joined, sizeof(joined), "%s/%s", root, rel);
	assert_non_null(realpath(joined, want));
	assert_int_equal(datadir_find(f, exe, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

/* The wheel's layout: the program auditwheel moved into
 * site-packages/roastop.scripts finds the package's data beside it. */
static void finds_the_wheels_files(void **state)
{
	(void)state;
	char root[] = "/tmp/roastop-datadir-XXXXXX", exe[PATH_MAX], out[PATH_MAX];
	assert_non_null(mkdtemp(root));
	snprintf(exe, sizeof(exe), "%s/site/roastop.scripts/roastop", root);
	assert_int_equal(datadir_find(DATADIR_DEMO, exe, out, sizeof(out)), -1);
	make_path(root, "site/roastop.scripts/roastop", false);
	make_path(root, "site/roastop/data/themes", true);
	make_path(root, "site/roastop/data/roastop.1", false);
	make_path(root, "site/roastop/data/demo-recording.jsonl", false);
	expect_found(DATADIR_THEMES, exe, root, "site/roastop/data/themes");
	expect_found(DATADIR_MANUAL, exe, root, "site/roastop/data/roastop.1");
	expect_found(DATADIR_DEMO, exe, root, "site/roastop/data/demo-recording.jsonl");
	/* a path that does not fit is an error, not a truncated name */
	assert_int_equal(datadir_find(DATADIR_DEMO, exe, out, 8), -1);
	remove_tree(root);
}

/* make install's layout, and a themes "directory" that is a file is no
 * theme directory. */
static void finds_make_installs_files(void **state)
{
	(void)state;
	char root[] = "/tmp/roastop-datadir-XXXXXX", exe[PATH_MAX], out[PATH_MAX];
	assert_non_null(mkdtemp(root));
	snprintf(exe, sizeof(exe), "%s/bin/roastop", root);
	make_path(root, "bin/roastop", false);
	make_path(root, "share/man/man1/roastop.1", false);
	make_path(root, "share/roastop/themes", false);
	expect_found(DATADIR_MANUAL, exe, root, "share/man/man1/roastop.1");
	assert_int_equal(datadir_find(DATADIR_THEMES, exe, out, sizeof(out)), -1);
	assert_int_equal(datadir_find(DATADIR_DEMO, exe, out, sizeof(out)), -1);
	assert_int_equal(datadir_find(DATADIR_DEMO, "roastop", out, sizeof(out)), -1);
	remove_tree(root);
}

/* The source tree: this test runs as build/tests/test_datadir, so its
 * own executable is one directory deeper than build/roastop. */
static void finds_the_source_trees_files(void **state)
{
	(void)state;
	char cwd[PATH_MAX], exe[PATH_MAX + 32];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(exe, sizeof(exe), "%s/build/roastop", cwd);
	if (access("examples/demo-recording.jsonl", R_OK) != 0)
		skip();
	expect_found(DATADIR_DEMO, exe, cwd, "examples/demo-recording.jsonl");
	expect_found(DATADIR_THEMES, exe, cwd, "themes");
	expect_found(DATADIR_MANUAL, exe, cwd, "roastop.1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_the_wheels_files),
		cmocka_unit_test(finds_make_installs_files),
		cmocka_unit_test(finds_the_source_trees_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
