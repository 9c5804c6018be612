/* udp_flood: sends N signed chunk datagrams to roastop as fast as loopback
 * takes them (sendmmsg, prebuilt), then a short paced tail so that loss in
 * the flood shows as sequence gaps. Prints {"sent": N, "seconds": s} on
 * stdout. For the fault tests; not part of roastop.
 *
 *   udp_flood HOST:PORT COUNT [KEYFILE|-] */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "roastop/auth.h"
#include "roastop/clock.h"
#include "roastop/event_datagram.h"

#define SLOT 640
#define TAIL 50

/* One chunk datagram: its body from a recording's line (read as roastop
 * reads one), framed and tagged as the emitter frames it. */
static size_t build(char *out, const struct auth_key *k, unsigned long long seq)
{
	char json[512];
	int n = snprintf(json, sizeof(json),
			 "{\"type\":\"chunk\",\"t\":1,\"run_id\":\"flood\",\"host\":\"flood\","
			 "\"pid\":%d,\"seq\":%llu,\"duration\":0.25,\"num_events\":1000,"
			 "\"dataset\":\"ds\",\"file\":\"f%llu.root\",\"entry_start\":0,"
			 "\"entry_stop\":1000}",
			 (int)getpid(), seq, seq % 97); /* one sender per process, as emitters are */
	struct event ev;
	struct strbuf body;
	event_init(&ev);
	strbuf_init(&body);
	if (event_decode_json(json, (size_t)n, &ev) != DEC_OK ||
	    event_datagram_encode(&ev, NULL, &body) != 0 ||
	    5 + AUTH_TAG_LEN + body.len > SLOT)
		exit(1);
	size_t header = k ? 5 + AUTH_TAG_LEN : 5;
	memcpy(out, k ? "RTP2\x01" : "RTP2\x00", 5);
	if (k)
		auth_tag_raw(k, body.data, body.len, (uint8_t *)out + 5);
	memcpy(out + header, body.data, body.len);
	size_t len = header + body.len;
	strbuf_free(&body);
	event_free(&ev);
	return len;
}

static void send_batch(int fd, const struct sockaddr_in *sa, char *bufs, const size_t *lens,
		       size_t first, size_t n)
{
	struct mmsghdr m[64];
	struct iovec iov[64];
	for (size_t i = 0; i < n; i++) {
		iov[i] = (struct iovec){ bufs + (first + i) * SLOT, lens[first + i] };
		m[i].msg_hdr = (struct msghdr){ .msg_name = (void *)sa, .msg_namelen = sizeof(*sa),
						.msg_iov = &iov[i], .msg_iovlen = 1 };
	}
	size_t done = 0;
	while (done < n) { /* loopback refuses nothing but may say EAGAIN */
		int k = sendmmsg(fd, m + done, (unsigned)(n - done), 0);
		if (k > 0)
			done += (size_t)k;
	}
}

int main(int argc, char **argv)
{
	char host[64];
	int port;
	if (argc < 3 || sscanf(argv[1], "%63[^:]:%d", host, &port) != 2) {
		fprintf(stderr, "usage: udp_flood HOST:PORT COUNT [KEYFILE|-]\n");
		return 2;
	}
	size_t count = strtoull(argv[2], NULL, 10), total = count + TAIL;
	struct auth_key key, *k = NULL;
	char err[256];
	if (argc > 3 && strcmp(argv[3], "-") != 0) {
		if (auth_key_setup(&key, argv[3], false, err, sizeof(err)) != 0) {
			fprintf(stderr, "udp_flood: %s\n", err);
			return 1;
		}
		k = &key;
	}
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, host, &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	char *bufs = malloc(total * SLOT);
	size_t *lens = malloc(total * sizeof(*lens));
	if (fd < 0 || !bufs || !lens) {
		free(bufs);
		free(lens);
		return 1;
	}
	for (size_t i = 0; i < total; i++)
		lens[i] = build(bufs + i * SLOT, k, i);
	double t0 = clock_mono();
	for (size_t i = 0; i < count; i += 64)
		send_batch(fd, &sa, bufs, lens, i, count - i < 64 ? count - i : 64);
	double flood = clock_mono() - t0;
	for (size_t i = count; i < total; i++) { /* the tail, paced: it gets through */
		usleep(2000);
		send_batch(fd, &sa, bufs, lens, i, 1);
	}
	printf("{\"sent\": %zu, \"flood_seconds\": %.6f, \"flood_rate\": %.0f}\n", total, flood,
	       (double)count / flood);
	free(bufs);
	free(lens);
	close(fd);
	return 0;
}
