/* A bounded loop kept as a real loop: the 16-bit one's-complement sum over
 * the 20-byte IPv4 header, ten iterations with a back-edge (unrolling is
 * disabled), dropping packets with a bad header checksum. */
#include "common.h"

SEC("xdp")
int csum_loop(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u32 sum = 0;

	if ((void *)(ip + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;

	__u16 *w = (__u16 *)ip;
#pragma clang loop unroll(disable)
	for (int i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	if ((__u16)~sum != 0)
		return XDP_DROP;
	return XDP_PASS;
}
