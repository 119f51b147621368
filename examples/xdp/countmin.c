/* Count-Min sketch of UDP and TCP flows over IPv4 (Table 2 of the
 * throughput-guarantee paper): every packet of a flow adds one to one
 * counter in each of CM_ROWS rows, the counter picked by a per-row hash of
 * the 5-tuple. The rows live in DRAM as one array map (raw memory on the
 * NIC) and are only ever incremented atomically. Other traffic passes.
 *
 * Built as countmin.o (5 rows) and countmin10/15/20.o, which include this
 * file with CM_ROWS set. */
#include "common.h"

#ifndef CM_ROWS
#define CM_ROWS 5
#endif
#define CM_WIDTH 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CM_ROWS * CM_WIDTH);
	__type(key, __u32);
	__type(value, __u64);
} sketch SEC(".maps");

/* One row's hash: multiply-xorshift rounds over the tuple words, seeded
 * per row. */
static __always_inline __u32 row_hash(__u32 a, __u32 b, __u32 c, __u32 seed)
{
	__u32 h = seed ^ 0x9e3779b9;
	h = (h ^ a) * 0x85ebca6b;
	h ^= h >> 13;
	h = (h ^ b) * 0xc2b2ae35;
	h ^= h >> 16;
	h = (h ^ c) * 0x27d4eb2f;
	h ^= h >> 15;
	h = (h ^ seed) * 0x165667b1;
	h ^= h >> 13;
	h ^= h >> 16;
	return h;
}

SEC("xdp")
int countmin(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	__u16 *ports = data + sizeof(*eth) + sizeof(*ip);

	if ((void *)(ports + 2) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5)
		return XDP_PASS;
	if (ip->protocol != IPPROTO_UDP && ip->protocol != IPPROTO_TCP)
		return XDP_PASS;

	__u32 a = ip->saddr, b = ip->daddr;
	__u32 c = ((__u32)ports[0] << 16 | ports[1]) ^ ip->protocol;
#pragma unroll
	for (__u32 row = 0; row < CM_ROWS; row++) {
		__u32 key = row * CM_WIDTH + (row_hash(a, b, c, row) & (CM_WIDTH - 1));
		__u64 *cnt = bpf_map_lookup_elem(&sketch, &key);
		if (cnt)
			__sync_fetch_and_add(cnt, 1);
	}
	return XDP_PASS;
}
