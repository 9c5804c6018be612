/* The remembered listening port (portfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "roastop/fsutil.h"
#include "roastop/portfile.h"

#define PORTFILE_MAX 8 /* "65535\n" and a byte to tell a longer text */

int portfile_parse(const char *text, size_t len)
{
	if (len > 0 && text[len - 1] == '\n')
		len--;
	if (len == 0 || len > 5 || text[0] == '0')
		return 0;
	int port = 0;
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return 0;
		port = port * 10 + (text[i] - '0');
	}
	return port <= 65535 ? port : 0;
}

static int portfile_path(char *out, size_t size, const char *key_path)
{
	int n = snprintf(out, size, "%s%s", key_path, PORTFILE_SUFFIX);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int portfile_read(const char *key_path)
{
	char path[4096], text[PORTFILE_MAX];
	if (portfile_path(path, sizeof(path), key_path) != 0)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, text, sizeof(text));
	close(fd);
	return n > 0 ? portfile_parse(text, (size_t)n) : 0;
}

int portfile_write(const char *key_path, int port)
{
	char path[4096], line[16];
	if (portfile_path(path, sizeof(path), key_path) != 0)
		return -1;
	snprintf(line, sizeof(line), "%d\n", port);
	return fsutil_write_private(path, line);
}
