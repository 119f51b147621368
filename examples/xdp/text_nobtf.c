/* An XDP program as the plainest build makes it: no SEC() on the function
 * and no -g (`clang -O2 -target bpf -c`, see the Makefile), so the entry is
 * in .text, the object holds no BTF and its map is an old struct
 * bpf_map_def in the "maps" section. It drops UDP packets to ports listed
 * in the map. */
#include "common.h"

struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

struct bpf_map_def SEC("maps") blocked_ports = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = sizeof(__u16),
	.value_size = sizeof(__u8),
	.max_entries = 64,
};

int text_nobtf(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	if ((void *)(udp + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	__u16 port = udp->dest;
	if (bpf_map_lookup_elem(&blocked_ports, &port))
		return XDP_DROP;
	return XDP_PASS;
}
