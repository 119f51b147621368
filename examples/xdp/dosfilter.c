/* A DoS filter in the manner of Cloudflare's L4 drop rules (Table 2 of
 * the throughput-guarantee paper): IPv4 packets are matched against rules
 * an operator derived from an attack's signature — protocol, destination
 * port, packet length, TTL, TCP flags, IP ID and a payload fingerprint —
 * and dropped when one matches; everything else passes. */
#include "common.h"

/* Drop a UDP packet from reflector port p carrying l bytes of IP. */
#define DROP_SRC(p, l)                                                   \
	if (udp->source == bpf_htons(p) && ip->tot_len == bpf_htons(l)) \
		return XDP_DROP

SEC("xdp")
int dosfilter(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	void *l4 = data + sizeof(*eth) + sizeof(*ip);

	if ((void *)(ip + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5)
		return XDP_PASS;
	/* Malformed headers: a wrong IPv4 checksum. */
	__u16 *w = (__u16 *)ip;
	__u32 sum = 0;
#pragma unroll
	for (int i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	if (sum != 0xffff)
		return XDP_DROP;
	/* Fragments and spoofed loopback sources never belong to a service. */
	if (ip->frag_off & bpf_htons(0x3fff))
		return XDP_DROP;
	if ((ip->saddr & bpf_htonl(0xff000000)) == bpf_htonl(0x7f000000))
		return XDP_DROP;

	if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *udp = l4;
		__u32 *payload = l4 + sizeof(*udp);
		if ((void *)(payload + 4) > data_end)
			return XDP_PASS;
		/* A fingerprint of the payload's first 16 bytes that a known
		 * attack tool always sends. */
		__u32 fp = payload[0] * 31 + payload[1];
		fp = fp * 31 + payload[2];
		fp = fp * 31 + payload[3];
		if (fp == 0x5f3c0b2a)
			return XDP_DROP;
		/* Reflection from DNS, NTP, memcached and SSDP sources. */
		if (udp->source == bpf_htons(53) && ip->tot_len > bpf_htons(512))
			return XDP_DROP;
		if (udp->source == bpf_htons(123) && ip->tot_len == bpf_htons(468))
			return XDP_DROP;
		if (udp->source == bpf_htons(11211))
			return XDP_DROP;
		if (udp->source == bpf_htons(1900) && payload[0] == bpf_htonl(0x48545450))
			return XDP_DROP;
		/* Amplification vectors by source port and reflected length. */
		DROP_SRC(19, 233);
		DROP_SRC(17, 219);
		DROP_SRC(389, 123);
		DROP_SRC(1434, 238);
		DROP_SRC(3702, 814);
		DROP_SRC(5353, 671);
		DROP_SRC(5683, 281);
		DROP_SRC(10001, 807);
		DROP_SRC(20800, 800);
		DROP_SRC(37810, 170);
		DROP_SRC(3283, 581);
		DROP_SRC(3478, 146);
		DROP_SRC(4500, 100);
		DROP_SRC(520, 140);
		DROP_SRC(161, 327);
		DROP_SRC(137, 159);
		DROP_SRC(138, 166);
		DROP_SRC(111, 877);
		DROP_SRC(69, 583);
		DROP_SRC(7, 149);
		DROP_SRC(1194, 358);
		DROP_SRC(27960, 520);
		DROP_SRC(28960, 320);
		DROP_SRC(47808, 856);
		DROP_SRC(9987, 709);
		DROP_SRC(32414, 198);
		DROP_SRC(2362, 434);
		DROP_SRC(6881, 567);
		DROP_SRC(8767, 269);
		DROP_SRC(30120, 340);
		DROP_SRC(53413, 491);
		DROP_SRC(5060, 420);
		/* A flood with a fixed payload fingerprint and TTL. */
		if (udp->dest == bpf_htons(27015) && payload[0] == bpf_htonl(0xffffffff) &&
		    payload[1] == bpf_htonl(0x54536f75) && ip->ttl > 40 && ip->ttl < 64)
			return XDP_DROP;
		if (ip->id == bpf_htons(0x3419) && udp->len == bpf_htons(8 + 8))
			return XDP_DROP;
		return XDP_PASS;
	}
	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *tcp = l4;
		if ((void *)(tcp + 1) > data_end)
			return XDP_PASS;
		/* SYN floods with telltale options length, window and ID. */
		if (tcp->syn && !tcp->ack) {
			if (tcp->window == bpf_htons(1024) && ip->id == 0)
				return XDP_DROP;
			if (tcp->doff == 5 && ip->ttl > 200)
				return XDP_DROP;
			if (tcp->seq == ip->daddr)
				return XDP_DROP;
		}
		if (tcp->ack && tcp->rst && tcp->window == 0 && tcp->dest != bpf_htons(443))
			return XDP_DROP;
		if (tcp->fin && tcp->urg && tcp->psh)
			return XDP_DROP;
		return XDP_PASS;
	}
	if (ip->protocol == IPPROTO_ICMP && ip->tot_len > bpf_htons(1000))
		return XDP_DROP;
	return XDP_PASS;
}
