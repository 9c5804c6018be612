#include "roastop/datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/common.h"

/* Each layout: where a file is, from the directory holding the executable. */
static const char *const layouts[][3] = {
	/* the source tree: <tree>/build/roastop */
	{ "../themes", "../roastop.1", "../examples/demo-recording.jsonl" },
	/* the wheel: <site-packages>/roastop.scripts/roastop */
	{ "../roastop/data/themes", "../roastop/data/roastop.1",
	  "../roastop/data/demo-recording.jsonl" },
	/* make install: <prefix>/bin/roastop */
	{ "../share/roastop/themes", "../share/man/man1/roastop.1",
	  "../share/roastop/demo-recording.jsonl" },
};

/* The directory of exe (or of this process's executable) into dir. */
static int datadir_exe_dir(const char *exe, char *dir, size_t n)
{
	if (exe) {
		if (snprintf(dir, n, "%s", exe) >= (int)n)
			return -1;
	} else {
		ssize_t len = readlink("/proc/self/exe", dir, n - 1);
		if (len <= 0 || (size_t)len >= n - 1)
			return -1;
		dir[len] = '\0';
	}
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

int datadir_find(enum datadir_file f, const char *exe, char *out, size_t n)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], real[PATH_MAX];
	if ((unsigned)f > DATADIR_DEMO || datadir_exe_dir(exe, dir, sizeof(dir)) != 0)
		return -1;
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(layouts); i++) {
		struct stat st;
		if (snprintf(path, sizeof(path), "%s/%s", dir, layouts[i][f]) >= (int)sizeof(path))
			continue;
		if (stat(path, &st) != 0 || S_ISDIR(st.st_mode) != (f == DATADIR_THEMES))
			continue;
		if (!realpath(path, real) || snprintf(out, n, "%s", real) >= (int)n)
			return -1;
		return 0;
	}
	return -1;
}
