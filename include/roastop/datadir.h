/* The files roastop ships beside its program (the themes, the manual, the
 * demo recording), found relative to the running executable in each layout
 * it is installed in: the source tree (build/roastop), `make install`
 * (PREFIX/bin/roastop) and the wheel (site-packages/roastop.scripts/roastop,
 * the program auditwheel moved there, with the files in the package). */
#ifndef ROASTOP_DATADIR_H
#define ROASTOP_DATADIR_H

#include <stddef.h>

enum datadir_file {
	DATADIR_THEMES, /* a directory of *.theme files */
	DATADIR_MANUAL, /* roastop.1 */
	DATADIR_DEMO, /* the demo recording (JSON lines) */
};

/* The path of the file or directory f beside the executable exe (NULL: this
 * process's own, /proc/self/exe), resolved to its canonical form, into out:
 * 0, or -1 when no layout has it or the path would not fit n bytes. */
int datadir_find(enum datadir_file f, const char *exe, char *out, size_t n);

#endif
