#include "roastop/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int fsutil_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 64 unpredictable bits. getrandom fails only before the kernel's pool is
 * seeded (early boot) or on kernels older than 3.17: then the clock's
 * nanoseconds and the pid, mixed (splitmix64), which still differ from
 * any name a previous run of roastop could have left or another user
 * guessed from the pid alone. */
static uint64_t random_bits(void)
{
	uint64_t r;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 48);
	r += 0x9e3779b97f4a7c15u;
	r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9u;
	r = (r ^ (r >> 27)) * 0x94d049bb133111ebu;
	return r ^ (r >> 31);
}

int fsutil_open_temp(int dfd, const char *name, char *tmp, size_t size)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		int n = snprintf(tmp, size, ".%s.%016llx.tmp", name,
				 (unsigned long long)random_bits());
		if (n < 0 || (size_t)n >= size) {
			errno = ENAMETOOLONG;
			return -1;
		}
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1; /* EEXIST sixteen times over: someone is planting faster than chance */
}

int fsutil_write_private(const char *path, const char *text)
{
	char dir[4096], tmp[4096 + 32];
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	if (dlen >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, dlen);
	snprintf(dir + dlen, sizeof(dir) - dlen, "%s", slash ? (dlen ? "" : "/") : ".");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	const char *name = slash ? slash + 1 : path;
	int fd = fsutil_open_temp(dfd, name, tmp, sizeof(tmp));
	int rc = fd < 0 || fchmod(fd, 0600) != 0 || fsutil_write_all(fd, text, strlen(text)) != 0
			 ? -1 : 0;
	int saved = errno;
	if (fd >= 0 && close(fd) != 0 && rc == 0) {
		rc = -1;
		saved = errno;
	}
	if (rc == 0 && renameat(dfd, tmp, dfd, name) != 0) {
		rc = -1;
		saved = errno;
	}
	if (rc != 0 && fd >= 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	errno = saved;
	return rc;
}
