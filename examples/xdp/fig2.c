/* The example program of the throughput-guarantee paper's Figure 2:
 * small packets are dropped, IPv4 packets bump a DRAM counter, IPv6 packets
 * run a ten-step loop. The slowest path (IPv4 and IPv6 at once) is
 * impossible; the slowest possible one takes one of the two branches with
 * at least 100 bytes (which one depends on the target: on the NFP and on
 * x86-64 the counter's map call outweighs the loop). */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ip4_counter SEC(".maps");

SEC("xdp")
int fig2(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	volatile __u32 acc = 0;
	__u32 zero = 0;

	if (data + 100 > data_end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		__u64 *c = bpf_map_lookup_elem(&ip4_counter, &zero);
		if (c)
			__sync_fetch_and_add(c, 1);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
#pragma clang loop unroll(full)
		for (int i = 0; i < 10; i++)
			acc += i;
	}
	return XDP_PASS;
}
