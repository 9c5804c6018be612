/* The files roastop ships beside its program, found relative to the
 * running executable in each layout it is installed in (datadir.c). */
#ifndef ROASTOP_DATADIR_H
#define ROASTOP_DATADIR_H

#include <stddef.h>

enum datadir_file {
	DATADIR_THEMES, /* a directory of *.theme files */
	DATADIR_MANUAL, /* roastop.1 */
	DATADIR_DEMO, /* the demo recording (JSON lines) */
};

/* The canonical path of f beside the executable exe (NULL: this process's)
 * into out: 0, or -1 when no layout has it or it does not fit n bytes. */
int datadir_find(enum datadir_file f, const char *exe, char *out, size_t n);

#endif
