/* An XDP program written without SEC() annotations, as in
 * `clang -O2 -g -target bpf -c`: the entry point, a global helper it calls
 * and a static one all sit in .text. Only the entry is a program: the helper
 * has a caller. Packets are counted per EtherType class in a BTF map. */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} class_hits SEC(".maps");

/* 0 IPv4, 1 IPv6, 2 ARP, 3 anything else. Global and called: not an entry. */
__attribute__((noinline)) int ether_class(__u16 proto)
{
	switch (proto) {
	case ETH_P_IP:
		return 0;
	case ETH_P_IPV6:
		return 1;
	case ETH_P_ARP:
		return 2;
	}
	return 3;
}

static __attribute__((noinline)) int too_short(void *data, void *data_end)
{
	return data + sizeof(struct ethhdr) > data_end;
}

int text_entry(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;

	if (too_short(data, data_end))
		return XDP_DROP;
	__u32 key = ether_class(bpf_ntohs(eth->h_proto));
	__u64 *hits = bpf_map_lookup_elem(&class_hits, &key);
	if (hits)
		__sync_fetch_and_add(hits, 1);
	return key == 3 ? XDP_DROP : XDP_PASS;
}
