/* labels.c with dns_qname.c's case folding: a label's bytes are folded to
 * lower case before they are hashed, so that paths which differ only in
 * the case of a byte share every refutation about the label lengths. Small
 * enough that every path can be enumerated and checked (tests of the
 * search's families, bound/prune_test.go). */
#include "common.h"

#define MAX_NAME 5

SEC("xdp")
int labelcase(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	__u8 *p = data + 42;
	__u32 hash = 7, left = 0;
	int i;
#pragma unroll
	for (i = 0; i < MAX_NAME; i++) {
		if ((void *)(p + i + 1) > data_end)
			return XDP_PASS;
		__u8 c = p[i];
		if (left == 0) {
			if (c == 0)
				break;
			if (c > 2)
				return XDP_DROP;
			left = c;
		} else {
			left--;
			if (c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
			hash = hash * 31 + c;
		}
	}
	return hash == 12345 ? XDP_TX : XDP_PASS;
}
