/* A QUIC load balancer on the connection ID (Table 2 of the
 * throughput-guarantee paper, after the QUIC-LB Internet draft's stream
 * cipher connection IDs): the destination connection ID of a QUIC packet
 * to port 443 is a configuration octet, an eight-byte nonce and the
 * server ID, encrypted by XOR with the block cipher encryption of the
 * nonce under the configuration's key. The draft's cipher is AES-128; the
 * NFP has no AES unit that XDP can reach and AES's tables would live in
 * DRAM, so the block cipher here is Speck64/128 (64-bit block: exactly
 * the nonce) reduced to 12 rounds, computed in registers from a
 * precomputed key schedule. The balancer checks the configuration, decrypts the
 * server ID, looks the server up in an array map and rewrites the
 * packet's destination address towards it.
 *
 * quiclb.o handles IPv4; quiclb6.o (QUICLB_IPV6) handles IPv6, walking up
 * to four extension headers before UDP. */
#include "common.h"

#define CID_LEN 9 /* after the configuration octet: nonce and server ID */
#define SERVERS 256

/* A server's address: IPv4 in the first four bytes, IPv6 in all
 * sixteen, read as two eight-byte words (two DRAM reads on the NIC). */
struct server {
	union {
		__u32 addr[4];
		__u64 addr64[2];
	};
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SERVERS);
	__type(key, __u32);
	__type(value, struct server);
} servers SEC(".maps");

#define NONCE_LEN 8
/* Speck64/128 has 27 rounds; the full cipher makes this program 1055 NFP
 * instructions, against the paper's 599 for its whole program, so the key
 * stream comes from the first 12 rounds (585 instructions). */
#ifndef SPECK_ROUNDS
#define SPECK_ROUNDS 12
#endif

/* The Speck64/128 key schedule of the configuration's key
 * 03707344 13198a2e 85a308d3 243f6a88 (words from the most significant). */
static const __u32 round_keys[27] = {
	0x243f6a88, 0xd63e59d1, 0xb5a3bdd4, 0x54bac0e0, 0x406482ec, 0x994cc339, 0x152073ae,
	0xad05bb45, 0x608dfe33, 0xc702b50e, 0xc413134b, 0xc283293b, 0x4c5fdfaa, 0xe8a51b3b,
	0x0bafef3c, 0xdd774c3c, 0xacbbc9cb, 0xf5d41f4c, 0x7cf4ddf7, 0x4d9d3036, 0x33c4bb26,
	0x5ab2d668, 0x3dcba110, 0x3c77c6dd, 0x75826b12, 0x647990af, 0xe2873e1f,
};

static __always_inline __u32 ror32(__u32 x, int n) { return x >> n | x << (32 - n); }
static __always_inline __u32 rol32(__u32 x, int n) { return x << n | x >> (32 - n); }

/* The server ID of a connection ID at cid[1]: the configuration octet,
 * the nonce (cid[2..9]) and the encrypted server ID (cid[10]). The key
 * stream is the Speck64/128 encryption of the nonce. */
static __always_inline __u32 decode(__u8 *cid)
{
	__u32 x = (__u32)cid[6] << 24 | (__u32)cid[7] << 16 | (__u32)cid[8] << 8 | cid[9];
	__u32 y = (__u32)cid[2] << 24 | (__u32)cid[3] << 16 | (__u32)cid[4] << 8 | cid[5];
#pragma unroll
	for (int i = 0; i < SPECK_ROUNDS; i++) {
		x = (ror32(x, 8) + y) ^ round_keys[i];
		y = rol32(y, 3) ^ x;
	}
	return (cid[NONCE_LEN + 2] ^ x) & 0xff;
}

SEC("xdp")
int quiclb(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	void *l4;
	__u32 *dst;
	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
#ifndef QUICLB_IPV6
	struct iphdr *ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	if (ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	l4 = ip + 1;
	dst = &ip->daddr;
#else
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	if ((void *)(ip6 + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IPV6))
		return XDP_PASS;
	__u8 next = ip6->nexthdr;
	l4 = ip6 + 1;
#pragma unroll
	for (int i = 0; i < 4; i++) {
		if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING && next != IPPROTO_DSTOPTS)
			break;
		__u8 *ext = l4;
		if ((void *)(ext + 2) > data_end)
			return XDP_PASS;
		next = ext[0];
		l4 += (ext[1] + 1) * 8;
	}
	if (next != IPPROTO_UDP)
		return XDP_PASS;
	dst = ip6->daddr.in6_u.u6_addr32;
#endif
	struct udphdr *udp = l4;
	__u8 *quic = l4 + sizeof(*udp);
	/* The first byte, the connection ID (its configuration octet
	 * included) and what must follow it: a byte of packet number in a
	 * short header (RFC 9000, 17.3.1), the source ID's length in a long
	 * one (17.2). */
	if ((void *)(quic + 1 + CID_LEN + 1 + 1) > data_end)
		return XDP_PASS;
	if (udp->dest != bpf_htons(443))
		return XDP_PASS;
	/* Long headers carry the ID after version and length; short headers
	 * right after the first byte. */
	__u8 *cid = quic;
	if (quic[0] & 0x80) {
		cid = quic + 5;
		if ((void *)(cid + 1 + CID_LEN + 1 + 1) > data_end)
			return XDP_PASS;
		if (cid[0] != CID_LEN + 1)
			return XDP_DROP;
	}
	if ((cid[1] >> 6) == 3 || (cid[1] & 0x3f) != CID_LEN)
		return XDP_PASS; /* unroutable or unknown configuration: the local host */
	__u32 id = decode(cid);
	struct server *s = bpf_map_lookup_elem(&servers, &id);
	if (!s)
		return XDP_DROP;
#ifndef QUICLB_IPV6
	dst[0] = s->addr[0];
#else
	__u64 hi = s->addr64[0], lo = s->addr64[1];
	__builtin_memcpy(dst, &hi, 8);
	__builtin_memcpy(dst + 2, &lo, 8);
#endif
	udp->check = 0;
	return XDP_TX;
}
