/* Per-source accounting: a hash-map lookup keyed by the IPv4 source address,
 * an atomic packet and byte counter for known sources, and a global atomic
 * counter of unknown ones. Sources over their byte budget are dropped. */
#include "common.h"

struct src_stats {
	__u64 packets;
	__u64 bytes;
	__u64 budget;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct src_stats);
} sources SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} unknown SEC(".maps");

SEC("xdp")
int counter(struct xdp_md *ctx)
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
	struct src_stats *st = bpf_map_lookup_elem(&sources, &src);
	if (!st) {
		__u64 *u = bpf_map_lookup_elem(&unknown, &zero);
		if (u)
			__sync_fetch_and_add(u, 1);
		return XDP_PASS;
	}
	__sync_fetch_and_add(&st->packets, 1);
	__sync_fetch_and_add(&st->bytes, (__u64)(data_end - data));
	if (st->bytes > st->budget)
		return XDP_DROP;
	return XDP_PASS;
}
