/* Per-flow packet counters for IPv4 TCP and UDP, keyed by 5-tuple in a
 * hash map: a packet of a known flow bumps its counter, the first packet of
 * a flow inserts it. Other traffic passes untouched, frames too short for
 * their headers are dropped.
 *
 * Built twice: flowcount.o as written, and flowcount_v2.o (which includes
 * this file with FLOWCOUNT_V2 defined), whose new flows also meet a
 * per-source limit on new flows. `dpperf interface diff` between the two
 * finds that regression (docs/interface.md, "Regressions"). */
#include "common.h"

struct flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct flow_key);
	__type(value, __u64);
} flows SEC(".maps");

#ifdef FLOWCOUNT_V2
#define NEW_FLOWS_PER_SOURCE 64

/* New flows per source address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} sources SEC(".maps");

/* admit counts a new flow of saddr; false when the source opened too many. */
static __always_inline int admit(__u32 saddr)
{
	__u64 *n = bpf_map_lookup_elem(&sources, &saddr);
	if (n) {
		if (*n >= NEW_FLOWS_PER_SOURCE)
			return 0;
		__sync_fetch_and_add(n, 1);
		return 1;
	}
	__u64 one = 1;
	bpf_map_update_elem(&sources, &saddr, &one, BPF_NOEXIST);
	return 1;
}
#endif

SEC("xdp")
int flowcount(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct flow_key key = {};

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	struct iphdr *ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return XDP_DROP;
	key.saddr = ip->saddr;
	key.daddr = ip->daddr;
	key.proto = ip->protocol;
	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *tcp = (void *)(ip + 1);
		if ((void *)(tcp + 1) > data_end)
			return XDP_DROP;
		key.sport = tcp->source;
		key.dport = tcp->dest;
	} else if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *udp = (void *)(ip + 1);
		if ((void *)(udp + 1) > data_end)
			return XDP_DROP;
		key.sport = udp->source;
		key.dport = udp->dest;
	} else {
		return XDP_PASS;
	}

	__u64 *n = bpf_map_lookup_elem(&flows, &key);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return XDP_PASS;
	}
#ifdef FLOWCOUNT_V2
	if (!admit(key.saddr))
		return XDP_DROP;
#endif
	__u64 one = 1;
	bpf_map_update_elem(&flows, &key, &one, BPF_NOEXIST);
	return XDP_PASS;
}
