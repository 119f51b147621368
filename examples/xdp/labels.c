/* A small label walker for tests of the search: dns_qname.c's loop over
 * six bytes with labels of at most two bytes, so that every path can be
 * enumerated and checked, and refutations relate a length byte to the test
 * bytes later that its count ran out. */
#include "common.h"

#ifndef MAX_NAME
#define MAX_NAME 6
#endif

SEC("xdp")
int labels(struct xdp_md *ctx)
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
#ifdef FOLD_CASE
			if (c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
#endif
			hash = hash * 31 + c;
		}
	}
	return hash == 12345 ? XDP_TX : XDP_PASS;
}
