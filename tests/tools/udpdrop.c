/* An LD_PRELOAD shim that drops a process's UDP datagrams to one port, as a
 * firewall's DROP rule between a batch node and a login node does, for
 * tests/integration/test_dask_path.py: send(), sendto() and sendmsg() on a
 * datagram socket whose destination (the address given, else the connected
 * peer) has the port written in the file UDPDROP_FILE report success and
 * send nothing. No file, or no number in it: everything goes out. The file
 * is read at each datagram (the test rewrites it between runs; the
 * datagrams here are few). Other sockets and ports are left alone. */
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);

static int dropped_port(void)
{
	const char *path = getenv("UDPDROP_FILE");
	FILE *f = path ? fopen(path, "r") : NULL;
	int port = 0;
	if (f) {
		if (fscanf(f, "%d", &port) != 1)
			port = 0;
		fclose(f);
	}
	return port;
}

static int port_of(const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa && sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return -1;
}

/* Is this datagram one the "firewall" drops? */
static int dropped(int fd, const struct sockaddr *to)
{
	int type = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_DGRAM)
		return 0;
	struct sockaddr_storage peer;
	if (!to) {
		socklen_t plen = sizeof(peer);
		if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0)
			return 0;
		to = (const struct sockaddr *)&peer;
	}
	int port = dropped_port();
	return port > 0 && port_of(to) == port;
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	if (dropped(fd, to))
		return (ssize_t)n;
	return ((sendto_fn)dlsym(RTLD_NEXT, "sendto"))(fd, buf, n, flags, to, tolen);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	if (dropped(fd, NULL))
		return (ssize_t)n;
	return ((send_fn)dlsym(RTLD_NEXT, "send"))(fd, buf, n, flags);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (dropped(fd, (const struct sockaddr *)msg->msg_name)) {
		size_t n = 0;
		for (size_t i = 0; i < msg->msg_iovlen; i++)
			n += msg->msg_iov[i].iov_len;
		return (ssize_t)n;
	}
	return ((sendmsg_fn)dlsym(RTLD_NEXT, "sendmsg"))(fd, msg, flags);
}
