/* The query parser of a DNS cache (the DNS Cache program of the
 * throughput-guarantee paper, Table 2 and 3): a UDP query to port 53 with
 * one question has its name walked byte by byte, at most 255 bytes (RFC
 * 1035): a length byte starts each label (0 ends the name, more than 63 is
 * malformed), the label's bytes are folded to lower case and hashed. The
 * name's hash, with the query type, is looked up in a hash map of cached
 * answers; a hit is counted and the query turned back as the answer's
 * placeholder (addresses swapped), a miss passed to the resolver. */
#include "common.h"

#define MAX_NAME 255

struct dnshdr {
	__u16 id, flags, qdcount, ancount, nscount, arcount;
};

struct qkey {
	__u32 hash;
	__u16 qtype, len;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct qkey);
	__type(value, __u64);
} answers SEC(".maps");

SEC("xdp")
int dns_qname(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct dnshdr *dns = (void *)(udp + 1);
	if ((void *)(dns + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if (udp->dest != bpf_htons(53))
		return XDP_PASS;
	if ((dns->flags & bpf_htons(0x8000)) || dns->qdcount != bpf_htons(1))
		return XDP_PASS;

	__u8 *p = (void *)(dns + 1);
	__u32 hash = 2166136261u;
	__u32 left = 0; /* bytes left in the current label */
	int i;
#pragma unroll
	for (i = 0; i < MAX_NAME; i++) {
		if ((void *)(p + i + 1) > data_end)
			return XDP_PASS;
		__u8 c = p[i];
		if (left == 0) {
			if (c == 0)
				break;
			if (c > 63)
				return XDP_DROP;
			left = c;
			c = '.';
		} else {
			left--;
			if (c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
		}
		hash = (hash ^ c) * 16777619u;
	}
	if (i == MAX_NAME)
		return XDP_DROP; /* no end within 255 bytes */
	if ((void *)(p + i + 5) > data_end)
		return XDP_PASS;
	struct qkey k = {.hash = hash, .qtype = (__u16)p[i + 1] << 8 | p[i + 2], .len = i};
	__u64 *hits = bpf_map_lookup_elem(&answers, &k);
	if (!hits)
		return XDP_PASS;
	__sync_fetch_and_add(hits, 1);
	__u32 a = ip->saddr;
	ip->saddr = ip->daddr;
	ip->daddr = a;
	__u16 port = udp->source;
	udp->source = udp->dest;
	udp->dest = port;
	dns->flags |= bpf_htons(0x8000);
	return XDP_TX;
}
