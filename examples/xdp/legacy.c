/* A map declared the old way, in a "maps" section with struct bpf_map_def,
 * as many objects in the wild still are: a per-CPU count of packets by IP
 * protocol number. */
#include "common.h"

struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

struct bpf_map_def SEC("maps") proto_hits = {
	.type = BPF_MAP_TYPE_PERCPU_ARRAY,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u64),
	.max_entries = 256,
};

SEC("xdp")
int legacy(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	__u32 key = ip->protocol;
	__u64 *hits = bpf_map_lookup_elem(&proto_hits, &key);
	if (hits)
		*hits += 1;
	return XDP_PASS;
}
