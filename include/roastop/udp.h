/* The UDP source (docs/protocol.md): framing, HMAC check, the event
 * decoder, per-sender sequence tracking (duplicates, order, loss), split
 * report reassembly. Every datagram is applied once or counted by reason. */
#ifndef ROASTOP_UDP_H
#define ROASTOP_UDP_H

#include "roastop/auth.h"
#include "roastop/event.h"
#include "roastop/event_datagram.h"
#include "roastop/source.h"

#include <sys/socket.h>

#define UDP_MAX_DATAGRAM 65507
#define UDP_WINDOW 1024 /* sequence numbers remembered per sender */
/* Senders (host, pid, instance) tracked, ~250 bytes each; a new sender
 * past this many is rejected (senders_full): without a window its replay
 * would pass, and evicting a sender would forget what it sent. */
#define UDP_MAX_SENDERS 100000
/* A sequence number this far above the sender's highest is rejected
 * (seq_jump) until a second within UDP_WINDOW confirms it (docs/protocol.md). */
#define UDP_SEQ_JUMP_MAX (1ull << 20)
#define UDP_MAX_PENDING_REPORTS 8
#define UDP_DRAIN_MAX 2048 /* datagrams one udp_drain reads at most */
/* After a drain of fewer than UDP_NAP_BELOW datagrams the socket is left
 * unpolled for UDP_NAP (a wake-up costs more than a datagram), or less when
 * the granted receive buffer (capped by net.core.rmem_max) would not hold
 * UDP_NAP_BURST datagrams a second of 2 KiB each for that long. */
#define UDP_NAP_BELOW 64
#define UDP_NAP 0.01
#define UDP_NAP_BURST 100000.0
/* Hellos' acks (docs/protocol.md): a token bucket of UDP_ACK_BURST refilled
 * at UDP_ACK_RATE a second; a hello beyond it is not answered. */
#define UDP_ACK_RATE 100.0
#define UDP_ACK_BURST 100.0

enum udp_reason {
	UDP_BAD_MAGIC = 0,
	UDP_NO_TAG,
	UDP_BAD_TAG,
	UDP_DUPLICATE,
	UDP_STALE,
	UDP_TOO_LARGE,
	UDP_NO_SENDER,
	UDP_SENDERS_FULL, /* a new sender past UDP_MAX_SENDERS */
	UDP_SEQ_JUMP, /* more than UDP_SEQ_JUMP_MAX above the sender's highest */
	UDP_VERSION, /* "RTP1 ": an emitter older than this roastop */
	UDP__COUNT
};

/* The listener's socket, or a worker's Dask connection (datagrams.json). */
enum udp_path { UDP_PATH_UDP = 0, UDP_PATH_DASK, UDP_PATH__COUNT };

struct udp_stats {
	uint64_t datagrams; /* received, good or bad */
	uint64_t applied; /* events delivered (a split report counts once) */
	uint64_t bytes;
	uint64_t rejected[UDP__COUNT];
	struct reject_counts json; /* decoder rejections by reason */
	uint64_t out_of_order; /* applied, but after a later sequence number */
	uint64_t missing; /* sequence numbers never received, over all senders */
	uint64_t kernel_drops; /* dropped by the kernel, buffer full (SO_MEMINFO) */
	uint64_t senders;
	uint64_t reports_incomplete; /* evicted before every part arrived */
	/* hellos that passed framing and tag; their acks sent, refused (rate
	 * or size) and failed (sendto, or no address to answer) */
	uint64_t hellos, acks_sent, acks_refused, acks_failed;
	/* senders by the path of their latest accepted datagram */
	uint64_t senders_by_path[UDP_PATH__COUNT];
	uint64_t datagrams_by_path[UDP_PATH__COUNT];
};

struct udp;
/* A listener bound to host:port (0: any). key NULL accepts untagged
 * datagrams. rcvbuf 0 = 8 MiB. NULL with err and errno when it cannot. */
struct udp *udp_open(const char *host, int port, const struct auth_key *key, int rcvbuf,
		     char *err, size_t errsz);
/* The same state without a socket: for udp_process in tests and fuzzing. */
struct udp *udp_new(const struct auth_key *key);
int udp_fd(const struct udp *u);
/* Seconds to leave the socket unpolled after a drain (UDP_NAP_BELOW). */
double udp_drain_nap(const struct udp *u, int drained);
/* "HOST:PORT" actually bound, for ROASTOP_ADDR. */
const char *udp_address(const struct udp *u);
/* Reads what is queued, at most UDP_DRAIN_MAX: datagrams read, -1 on error. */
int udp_drain(struct udp *u, double now, event_deliver_fn fn, void *ctx);
/* One datagram through framing, auth, decoding and sequencing. A hello is
 * answered to src; with src NULL (or no socket) its ack is counted failed. */
void udp_process_from(struct udp *u, const char *buf, size_t len, double now,
		      const struct sockaddr *src, socklen_t srclen, event_deliver_fn fn, void *ctx);
/* udp_process_from for a datagram that came by another path. */
void udp_process_path(struct udp *u, const char *buf, size_t len, double now,
		      enum udp_path path, event_deliver_fn fn, void *ctx);
/* udp_process_from without a source address. */
void udp_process(struct udp *u, const char *buf, size_t len, double now, event_deliver_fn fn,
		 void *ctx);
void udp_get_stats(const struct udp *u, struct udp_stats *out);
/* The same as a source's statistics: "listen" and the address, the
 * counters, and in "rejected" the datagrams' reasons, then the decoder's
 * in their order (openmetrics.c tells them apart so), then "total". */
void udp_source_stats(const struct udp *u, struct source_stats *out);
extern const struct source_field udp_source_fields[];
void udp_stats_to_source(const struct udp_stats *st, const char *address,
			 struct source_stats *out);
uint64_t udp_rejected_total(const struct udp_stats *st);
const char *udp_reason_name(enum udp_reason r);
void udp_close(struct udp *u);

#endif
