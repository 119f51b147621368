/* An RTP transcoder from G.711 a-law to µ-law (Table 2 of the
 * throughput-guarantee paper): an RTP packet to UDP port 5004 whose
 * payload type is PCMA (8) gets each of up to 160 payload bytes (20 ms of
 * 8 kHz audio) converted to PCMU and its payload type set to PCMU (0);
 * the packet goes back out. Each byte is decoded to linear PCM as G.711's
 * a-law expansion and encoded again as µ-law, without branches: the
 * segment of the µ-law code is a count of comparisons done by subtraction.
 * Packets with CSRCs or a header extension are passed to the host.
 *
 * Built as rtp_table.o with RTP_TABLE set: the shape of the paper's
 * transcoder, a table lookup per byte in a 256-entry array map (raw DRAM
 * on the NFP) that the control plane fills with G.711's a-law to µ-law
 * codes. */
#include "common.h"

#ifdef RTP_TABLE
#define RTP_PROG rtp_table
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} a2u SEC(".maps");
#else
#define RTP_PROG rtp_transcode
#endif

#define RTP_PORT 5004
#define PT_PCMU 0
#define PT_PCMA 8
#define MAX_PAYLOAD 160

struct rtphdr {
	__u8 vpxcc; /* version 2, padding, extension, CSRC count */
	__u8 mpt;   /* marker, payload type */
	__be16 seq;
	__be32 ts;
	__be32 ssrc;
};

/* 1 when v exceeds end, for v and end well inside 63 bits. */
static __always_inline __u64 above(__u64 v, __u64 end) { return (end - v) >> 63; }

/* The µ-law code of the a-law code a (ITU-T G.711). */
static __always_inline __u8 alaw_to_ulaw(__u64 a)
{
	a ^= 0x55;
	__u64 sign = a & 0x80, e = (a >> 4) & 7, m = a & 0xf;
	__u64 nz = (e + 7) >> 3; /* segment above 0 */
	__u64 t = ((m << 4) + 8 + (nz << 8)) << (e - nz); /* 16-bit magnitude */
	__u64 v = (t >> 2) + 0x21;                          /* 14 bits, biased */
	/* Hide v's range from the compiler, which would otherwise turn the
	 * subtractions below back into comparisons and branches. */
	asm volatile("" : "+r"(v));
	__u64 seg = above(v, 0x3f) + above(v, 0x7f) + above(v, 0xff) + above(v, 0x1ff) +
		    above(v, 0x3ff) + above(v, 0x7ff) + above(v, 0xfff);
	__u64 u = seg << 4 | ((v >> (seg + 1)) & 0xf);
	return u ^ (0x7f | sign);
}

SEC("xdp")
int RTP_PROG(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct rtphdr *rtp = (void *)(udp + 1);
	if ((void *)(rtp + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if (udp->dest != bpf_htons(RTP_PORT))
		return XDP_PASS;
	if (rtp->vpxcc != 0x80 || (rtp->mpt & 0x7f) != PT_PCMA)
		return XDP_PASS; /* not version 2 without CSRCs and extension, or not a-law */
	__u8 *payload = (void *)(rtp + 1);
	for (int i = 0; i < MAX_PAYLOAD; i++) {
		if ((void *)(payload + i + 1) > data_end)
			break;
#ifdef RTP_TABLE
		__u32 key = payload[i];
		__u32 *u = bpf_map_lookup_elem(&a2u, &key);
		if (!u)
			return XDP_ABORTED;
		payload[i] = *u;
#else
		payload[i] = alaw_to_ulaw(payload[i]);
#endif
	}
	rtp->mpt = (rtp->mpt & 0x80) | PT_PCMU;
	udp->check = 0;
	return XDP_TX;
}
