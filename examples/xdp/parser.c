/* A header parser with IPv4/IPv6 and TCP/UDP branches. It counts packets per
 * protocol in a per-CPU array and drops telnet (TCP port 23) and UDP packets
 * to port 9 ("discard"). */
#include "common.h"

enum { CNT_OTHER, CNT_IPV4, CNT_IPV6, CNT_TCP, CNT_UDP, CNT_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} proto_count SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&proto_count, &idx);
	if (c)
		*c += 1;
}

static __always_inline int l4(void *l4h, void *data_end, __u8 proto)
{
	if (proto == IPPROTO_TCP) {
		struct tcphdr *tcp = l4h;
		if ((void *)(tcp + 1) > data_end)
			return XDP_DROP;
		count(CNT_TCP);
		if (tcp->dest == bpf_htons(23))
			return XDP_DROP;
		return XDP_PASS;
	}
	if (proto == IPPROTO_UDP) {
		struct udphdr *udp = l4h;
		if ((void *)(udp + 1) > data_end)
			return XDP_DROP;
		count(CNT_UDP);
		if (udp->dest == bpf_htons(9))
			return XDP_DROP;
	}
	return XDP_PASS;
}

SEC("xdp")
int parser(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > data_end)
			return XDP_DROP;
		count(CNT_IPV4);
		if (ip->ihl != 5)
			return XDP_PASS; /* options: leave to the stack */
		return l4(ip + 1, data_end, ip->protocol);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > data_end)
			return XDP_DROP;
		count(CNT_IPV6);
		return l4(ip6 + 1, data_end, ip6->nexthdr);
	}
	count(CNT_OTHER);
	return XDP_PASS;
}
