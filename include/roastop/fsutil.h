/* Small file-system helpers shared by the writers. */
#ifndef ROASTOP_FSUTIL_H
#define ROASTOP_FSUTIL_H

#include <stddef.h>

/* write(2) until done, retrying EINTR; 0, or -1 with errno. */
int fsutil_write_all(int fd, const char *p, size_t n);

/* A fresh temporary ".NAME.<16 random hex digits>.tmp" in the directory
 * dfd, mode 0644, opened O_EXCL|O_NOFOLLOW: never a planted file or link.
 * Its name goes to tmp; the descriptor, or -1 with errno. */
int fsutil_open_temp(int dfd, const char *name, char *tmp, size_t size);

/* Replaces path with text, mode 0600, whole (a temporary renamed over
 * it). 0, or -1 with errno. */
int fsutil_write_private(const char *path, const char *text);

#endif
