/* Small file-system helpers shared by the writers. */
#ifndef ROASTOP_FSUTIL_H
#define ROASTOP_FSUTIL_H

#include <stddef.h>

/* write(2) until done, retrying EINTR; 0, or -1 with errno. */
int fsutil_write_all(int fd, const char *p, size_t n);

#endif
