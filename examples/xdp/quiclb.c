/* A QUIC load balancer on the connection ID (Table 2 of the
 * throughput-guarantee paper, after the QUIC-LB Internet draft): the
 * destination connection ID of a QUIC packet to port 443 carries the
 * server ID, obscured by a four-round Feistel network keyed per
 * configuration. The balancer decodes it, looks the server up in an array
 * map and rewrites the packet's destination address towards it.
 *
 * quiclb.o handles IPv4; quiclb6.o (QUICLB_IPV6) handles IPv6, walking up
 * to four extension headers before UDP. */
#include "common.h"

#define CID_LEN 8
#define SERVERS 256

struct server {
	__u32 addr[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SERVERS);
	__type(key, __u32);
	__type(value, struct server);
} servers SEC(".maps");

static __always_inline __u32 round_fn(__u32 half, __u32 key)
{
	__u32 h = (half ^ key) * 0x9e3779b1;
	return h ^ (h >> 15);
}

/* The server ID of a connection ID: its first byte says the configuration,
 * the next eight bytes are the encrypted server ID and nonce. */
static __always_inline __u32 decode(__u8 *cid)
{
	__u32 l = (__u32)cid[1] << 24 | (__u32)cid[2] << 16 | (__u32)cid[3] << 8 | cid[4];
	__u32 r = (__u32)cid[5] << 24 | (__u32)cid[6] << 16 | (__u32)cid[7] << 8 | cid[8];
	__u32 keys[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
#pragma unroll
	for (int i = 0; i < 4; i++) {
		__u32 t = l ^ round_fn(r, keys[i]);
		l = r;
		r = t;
	}
	return l >> 24;
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
	if ((void *)(quic + 1 + CID_LEN + 1) > data_end)
		return XDP_PASS;
	if (udp->dest != bpf_htons(443))
		return XDP_PASS;
	/* Long headers carry the ID after version and length; short headers
	 * right after the first byte. */
	__u8 *cid = quic;
	if (quic[0] & 0x80) {
		cid = quic + 5;
		if ((void *)(cid + 1 + CID_LEN + 1) > data_end)
			return XDP_PASS;
		if (cid[0] != CID_LEN + 1)
			return XDP_DROP;
	}
	if ((cid[1] >> 6) == 3)
		return XDP_PASS; /* unroutable configuration: the local host */
	__u32 id = decode(cid);
	struct server *s = bpf_map_lookup_elem(&servers, &id);
	if (!s)
		return XDP_DROP;
#ifndef QUICLB_IPV6
	dst[0] = s->addr[0];
#else
	dst[0] = s->addr[0];
	dst[1] = s->addr[1];
	dst[2] = s->addr[2];
	dst[3] = s->addr[3];
#endif
	udp->check = 0;
	return XDP_TX;
}
