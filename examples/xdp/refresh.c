/* Per-source packet budget kept with map updates rather than through the
 * value's pointer: a known source's count is written back with
 * BPF_EXIST (the update replaces the element), a new source is inserted
 * with BPF_NOEXIST, and a source over its budget is deleted and dropped.
 * The last source seen is kept in a hash map under key 0, updated without a
 * lookup, so whether that update inserts or replaces is left to the map. */
#include "common.h"

#define BUDGET 64

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} last SEC(".maps");

SEC("xdp")
int refresh(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u32 zero = 0;

	if ((void *)(ip + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;

	__u32 src = ip->saddr;
	bpf_map_update_elem(&last, &zero, &src, BPF_ANY);
	__u64 *n = bpf_map_lookup_elem(&budget, &src);
	if (!n) {
		__u64 one = 1;
		bpf_map_update_elem(&budget, &src, &one, BPF_NOEXIST);
		return XDP_PASS;
	}
	__u64 next = *n + 1;
	if (next > BUDGET) {
		bpf_map_delete_elem(&budget, &src);
		return XDP_DROP;
	}
	bpf_map_update_elem(&budget, &src, &next, BPF_EXIST);
	return XDP_PASS;
}
