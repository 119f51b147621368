/* A stateful flow table: IPv4 and IPv6 TCP/UDP flows keyed by their
 * 5-tuple in an LRU hash map, with per-flow packet and byte counters and
 * per-CPU counters by packet class. A TCP SYN or a UDP packet of an unknown
 * flow inserts it; a TCP packet of an unknown flow without SYN is dropped;
 * FIN or RST removes the flow. ICMP and other traffic only bump a counter;
 * frames too short for their headers are dropped. */
#include "common.h"

enum {
	C_SHORT,   /* frame shorter than its headers */
	C_OTHER,   /* not IPv4/IPv6, or another L4 protocol */
	C_ICMP,    /* ICMP or ICMPv6 */
	C_HIT,     /* packet of a known flow */
	C_NEW,     /* new flow inserted */
	C_NOFLOW,  /* TCP without SYN and no flow: dropped */
	C_CLOSE,   /* FIN or RST of a known flow: flow removed */
	C_MAX
};

struct flow_key {
	__u32 src[4];
	__u32 dst[4];
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct flow_val {
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct flow_key);
	__type(value, struct flow_val);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} classes SEC(".maps");

static __always_inline int count(__u32 c, int verdict)
{
	__u64 *v = bpf_map_lookup_elem(&classes, &c);
	if (v)
		*v += 1;
	return verdict;
}

SEC("xdp")
int flowtable(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct flow_key key = {};
	void *l4;
	__u8 proto;

	if ((void *)(eth + 1) > data_end)
		return count(C_SHORT, XDP_DROP);
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > data_end)
			return count(C_SHORT, XDP_DROP);
		if (ip->ihl < 5)
			return count(C_SHORT, XDP_DROP);
		if (ip->frag_off & bpf_htons(0x1fff))
			return count(C_OTHER, XDP_PASS);
		proto = ip->protocol;
		key.src[0] = ip->saddr;
		key.dst[0] = ip->daddr;
		l4 = (void *)ip + ip->ihl * 4;
		if (proto == IPPROTO_ICMP)
			return count(C_ICMP, XDP_PASS);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > data_end)
			return count(C_SHORT, XDP_DROP);
		proto = ip6->nexthdr;
		__builtin_memcpy(key.src, &ip6->saddr, 16);
		__builtin_memcpy(key.dst, &ip6->daddr, 16);
		l4 = ip6 + 1;
		if (proto == IPPROTO_ICMPV6)
			return count(C_ICMP, XDP_PASS);
	} else {
		return count(C_OTHER, XDP_PASS);
	}

	int syn = 0, fin = 0;
	if (proto == IPPROTO_TCP) {
		struct tcphdr *tcp = l4;
		if ((void *)(tcp + 1) > data_end)
			return count(C_SHORT, XDP_DROP);
		key.sport = tcp->source;
		key.dport = tcp->dest;
		syn = tcp->syn && !tcp->ack;
		fin = tcp->fin || tcp->rst;
	} else if (proto == IPPROTO_UDP) {
		struct udphdr *udp = l4;
		if ((void *)(udp + 1) > data_end)
			return count(C_SHORT, XDP_DROP);
		key.sport = udp->source;
		key.dport = udp->dest;
	} else {
		return count(C_OTHER, XDP_PASS);
	}
	key.proto = proto;

	__u64 len = data_end - data;
	struct flow_val *fv = bpf_map_lookup_elem(&flows, &key);
	if (fv) {
		__sync_fetch_and_add(&fv->packets, 1);
		__sync_fetch_and_add(&fv->bytes, len);
		if (fin) {
			bpf_map_delete_elem(&flows, &key);
			return count(C_CLOSE, XDP_PASS);
		}
		return count(C_HIT, XDP_PASS);
	}
	if (proto == IPPROTO_TCP && !syn)
		return count(C_NOFLOW, XDP_DROP);
	struct flow_val nv = {.packets = 1, .bytes = len};
	bpf_map_update_elem(&flows, &key, &nv, BPF_NOEXIST);
	return count(C_NEW, XDP_PASS);
}
