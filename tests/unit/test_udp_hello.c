/* Hellos and their acks (docs/protocol.md, "Hello and acknowledgement"):
 * through a real listener on loopback, answered from its socket to the
 * hello's source. */
#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "datagram_util.h"
#include "roastop/udp.h"

#define NONCE "0123456789abcdef0123456789abcdef"
#define HELLO \
	"{\"type\":\"hello\",\"nonce\":\"%s\",\"host\":\"h\",\"pid\":7,\"instance\":3," \
	"\"sent\":1767225600.%d}"

static struct auth_key KEY;
static int applied;

static void deliver(void *ctx, const struct event *ev)
{
	(void)ctx;
	(void)ev;
	applied++;
}

static int setup(void **state)
{
	(void)state;
	applied = 0;
	memset(&KEY, 0, sizeof(KEY));
	for (int i = 0; i < AUTH_KEY_LEN; i++)
		KEY.key[i] = (uint8_t)(i * 5 + 3);
	return 0;
}

struct peer {
	int fd;
	struct sockaddr_in addr; /* the peer's own, as the listener sees it */
};

static struct peer peer_open(void)
{
	struct peer p = { socket(AF_INET, SOCK_DGRAM, 0), { 0 } };
	assert_true(p.fd >= 0);
	p.addr.sin_family = AF_INET;
	p.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(p.fd, (struct sockaddr *)&p.addr, sizeof(p.addr)), 0);
	socklen_t len = sizeof(p.addr);
	assert_int_equal(getsockname(p.fd, (struct sockaddr *)&p.addr, &len), 0);
	return p;
}

/* A hello framed under k (NULL: untagged), processed as from p. */
static size_t hello(struct udp *u, const struct auth_key *k, const struct peer *p,
		    const char *nonce, int seq, double now)
{
	char json[512];
	snprintf(json, sizeof(json), HELLO, nonce, seq);
	struct strbuf dg;
	strbuf_init(&dg);
	assert_true(dg_datagram(k, json, &dg));
	udp_process_from(u, dg.data, dg.len, now, (const struct sockaddr *)&p->addr,
			 sizeof(p->addr), deliver, NULL);
	size_t n = dg.len;
	strbuf_free(&dg);
	return n;
}

/* An ack's body: kind 8, then the nonce under id 71. */
#define ACK_BODY "\x08\x47\x20\x00" NONCE
#define ACK_BODY_LEN (4 + sizeof(NONCE) - 1)

/* The next datagram waiting for p within a few seconds, or "" (length 0). */
static ssize_t ack_read(const struct peer *p, char *out, size_t size, int wait_ms)
{
	struct pollfd pf = { p->fd, POLLIN, 0 };
	if (poll(&pf, 1, wait_ms) != 1)
		return 0;
	ssize_t n = recv(p->fd, out, size - 1, MSG_DONTWAIT);
	out[n > 0 ? n : 0] = '\0';
	return n;
}

static struct udp *listener(const struct auth_key *k)
{
	char err[256];
	struct udp *u = udp_open("127.0.0.1", 0, k, 0, err, sizeof(err));
	assert_non_null(u);
	return u;
}

static void ack_binds_the_nonce_under_the_key(void **state)
{
	(void)state;
	struct udp *u = listener(&KEY);
	struct peer p = peer_open();
	size_t sent = hello(u, &KEY, &p, NONCE, 0, 1.0);
	char ack[1024];
	ssize_t n = ack_read(&p, ack, sizeof(ack), 5000);
	assert_true(n > 0 && (size_t)n <= sent); /* never larger than the hello */
	assert_int_equal(n, 5 + AUTH_TAG_LEN + ACK_BODY_LEN);
	assert_memory_equal(ack, "RTP2\x01", 5);
	assert_memory_equal(ack + 5 + AUTH_TAG_LEN, ACK_BODY, ACK_BODY_LEN);
	uint8_t tag[AUTH_TAG_LEN];
	auth_tag_raw(&KEY, ACK_BODY, ACK_BODY_LEN, tag);
	assert_memory_equal(ack + 5, tag, AUTH_TAG_LEN);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(st.hellos, 1);
	assert_int_equal(st.acks_sent, 1);
	assert_int_equal(st.applied, 0); /* not an event: no run sees it */
	assert_int_equal(applied, 0);
	assert_int_equal(st.senders, 0); /* outside the sequence: no sender's window */
	close(p.fd);
	udp_close(u);
}

static void only_the_right_key_gets_an_ack(void **state)
{
	(void)state;
	struct udp *u = listener(&KEY);
	struct peer p = peer_open();
	struct auth_key other = KEY;
	other.key[0] ^= 1;
	hello(u, &other, &p, NONCE, 0, 1.0);
	hello(u, NULL, &p, NONCE, 1, 1.0);
	hello(u, &KEY, &p, NONCE, 2, 1.0);
	char ack[1024];
	assert_true(ack_read(&p, ack, sizeof(ack), 5000) > 0);
	assert_int_equal(ack_read(&p, ack, sizeof(ack), 200), 0);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(st.rejected[UDP_BAD_TAG], 1);
	assert_int_equal(st.rejected[UDP_NO_TAG], 1);
	assert_int_equal(st.hellos, 1);
	assert_int_equal(st.acks_sent, 1);
	close(p.fd);
	udp_close(u);
}

static void bad_nonces_are_rejected(void **state)
{
	(void)state;
	struct udp *u = udp_new(NULL);
	struct peer p = peer_open();
	const char *bad[] = { "", "0123", "0123456789ABCDEF0123", "0123456789abcdeg" };
	for (int i = 0; i < 4; i++)
		hello(u, NULL, &p, bad[i], i, 1.0);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(st.hellos, 0);
	assert_int_equal(st.json.by_reason[DEC_MISSING_FIELD], 4);
	close(p.fd);
	udp_close(u);
}

static void acks_are_rate_limited(void **state)
{
	(void)state;
	struct udp *u = udp_new(NULL); /* no socket: each allowed ack fails to send */
	struct peer p = peer_open();
	int n = (int)UDP_ACK_BURST + 10;
	for (int i = 0; i < n; i++)
		hello(u, NULL, &p, NONCE, i, 5.0);
	struct udp_stats st;
	udp_get_stats(u, &st);
	assert_int_equal(st.hellos, n);
	assert_int_equal(st.acks_refused, 10);
	assert_int_equal(st.acks_failed, (int)UDP_ACK_BURST);
	hello(u, NULL, &p, NONCE, n, 5.0 + 1 / UDP_ACK_RATE * 1.5); /* a token again */
	hello(u, NULL, &p, NONCE, n + 1, 5.0 + 1 / UDP_ACK_RATE * 1.5);
	udp_get_stats(u, &st);
	assert_int_equal(st.acks_failed, (int)UDP_ACK_BURST + 1);
	assert_int_equal(st.acks_refused, 11);
	close(p.fd);
	udp_close(u);
}

static void untagged_ack_without_a_key(void **state)
{
	(void)state;
	struct udp *u = listener(NULL);
	struct peer p = peer_open();
	hello(u, NULL, &p, NONCE, 0, 1.0);
	char ack[1024];
	assert_int_equal(ack_read(&p, ack, sizeof(ack), 5000), 5 + ACK_BODY_LEN);
	assert_memory_equal(ack, "RTP2\x00" ACK_BODY, 5 + ACK_BODY_LEN);
	close(p.fd);
	udp_close(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(ack_binds_the_nonce_under_the_key, setup),
		cmocka_unit_test_setup(only_the_right_key_gets_an_ack, setup),
		cmocka_unit_test_setup(bad_nonces_are_rejected, setup),
		cmocka_unit_test_setup(acks_are_rate_limited, setup),
		cmocka_unit_test_setup(untagged_ack_without_a_key, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
