/* A QUIC load balancer behind IPv6 extension headers (the QUIC LB (IPv6)
 * program of the throughput-guarantee paper, Table 2 and 3, with the
 * deeper header chains RFC 8200 allows): up to eight extension headers
 * (hop-by-hop and destination options, routing, fragment, authentication)
 * before UDP. Each kind has its own length rule: options and routing
 * headers count 8-byte units after the first eight bytes, the fragment
 * header is always eight bytes and the authentication header counts
 * 4-byte units after the first eight. Routing headers of type 4 (segment
 * routing) are counted, fragments other than the first are passed. The
 * destination connection ID of a QUIC short header to port 443 carries the
 * server ID in clear in its first byte; the server is looked up in an
 * array map and the destination address rewritten towards it. */
#include "common.h"

#define MAX_EXT 8
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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} srh_seen SEC(".maps");

SEC("xdp")
int ipv6ext_quic(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	if ((void *)(ip6 + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IPV6))
		return XDP_PASS;
	__u8 next = ip6->nexthdr;
	void *l4 = ip6 + 1;
	__u32 srh = 0;
#pragma unroll
	for (int i = 0; i < MAX_EXT; i++) {
		__u8 *ext = l4;
		if (next == IPPROTO_HOPOPTS || next == IPPROTO_DSTOPTS) {
			if ((void *)(ext + 8) > data_end)
				return XDP_PASS;
			next = ext[0];
			l4 += (ext[1] + 1) * 8;
		} else if (next == IPPROTO_ROUTING) {
			if ((void *)(ext + 8) > data_end)
				return XDP_PASS;
			if (ext[2] == 4)
				srh++;
			next = ext[0];
			l4 += (ext[1] + 1) * 8;
		} else if (next == IPPROTO_FRAGMENT) {
			if ((void *)(ext + 8) > data_end)
				return XDP_PASS;
			if ((ext[2] << 8 | (ext[3] & 0xf8)) != 0)
				return XDP_PASS; /* not the first fragment */
			next = ext[0];
			l4 += 8;
		} else if (next == IPPROTO_AH) {
			if ((void *)(ext + 12) > data_end)
				return XDP_PASS;
			next = ext[0];
			l4 += (ext[1] + 2) * 4;
		} else {
			break;
		}
	}
	if (next != IPPROTO_UDP)
		return XDP_PASS;
	struct udphdr *udp = l4;
	__u8 *quic = l4 + sizeof(*udp);
	if ((void *)(quic + 1 + CID_LEN) > data_end)
		return XDP_PASS;
	if (udp->dest != bpf_htons(443) || (quic[0] & 0x80))
		return XDP_PASS;
	if (srh) {
		__u32 zero = 0;
		__u64 *c = bpf_map_lookup_elem(&srh_seen, &zero);
		if (c)
			*c += srh;
	}
	__u32 id = quic[1];
	struct server *s = bpf_map_lookup_elem(&servers, &id);
	if (!s)
		return XDP_DROP;
	__u32 *dst = ip6->daddr.in6_u.u6_addr32;
	dst[0] = s->addr[0];
	dst[1] = s->addr[1];
	dst[2] = s->addr[2];
	dst[3] = s->addr[3];
	udp->check = 0;
	return XDP_TX;
}
