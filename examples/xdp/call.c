/* A bpf-to-bpf call: a non-inlined function that checks a port against a
 * small deny list, called from three sites (TCP source and destination port,
 * UDP destination port). */
#include "common.h"

static __attribute__((noinline)) int port_denied(__u16 port)
{
	if (port == 23 || port == 135 || port == 445)
		return 1;
	if (port >= 6000 && port < 6064)
		return 1;
	return 0;
}

SEC("xdp")
int call_filter(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	if (ip->ihl != 5)
		return XDP_PASS;
	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *tcp = (void *)(ip + 1);
		if ((void *)(tcp + 1) > data_end)
			return XDP_DROP;
		if (port_denied(bpf_ntohs(tcp->source)))
			return XDP_DROP;
		return port_denied(bpf_ntohs(tcp->dest)) ? XDP_DROP : XDP_PASS;
	}
	if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *udp = (void *)(ip + 1);
		if ((void *)(udp + 1) > data_end)
			return XDP_DROP;
		return port_denied(bpf_ntohs(udp->dest)) ? XDP_DROP : XDP_PASS;
	}
	return XDP_PASS;
}
