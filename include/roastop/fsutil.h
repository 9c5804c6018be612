/* Small file-system helpers shared by the writers. */
#ifndef ROASTOP_FSUTIL_H
#define ROASTOP_FSUTIL_H

#include <stddef.h>

/* write(2) until done, retrying EINTR; 0, or -1 with errno. */
int fsutil_write_all(int fd, const char *p, size_t n);

/* Creates a fresh temporary beside name in the directory dfd, mode 0644
 * before the umask: ".NAME.<16 random hex digits>.tmp", opened
 * O_CREAT|O_EXCL|O_NOFOLLOW, so never an existing file or a planted link,
 * under a name nobody can plant in advance (64 bits from getrandom(2)).
 * Its name (relative to dfd) goes to tmp; the descriptor, or -1 with errno. */
int fsutil_open_temp(int dfd, const char *name, char *tmp, size_t size);

/* Replaces path with text, mode 0600 (it may name a key file): written to
 * a temporary beside it, then renamed over it, so it appears whole. 0, or
 * -1 with errno. */
int fsutil_write_private(const char *path, const char *text);

#endif
