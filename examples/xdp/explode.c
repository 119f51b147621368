/* Path explosion: 64 independent branches, each comparing the same packet
 * byte with a different constant and doing extra work when it matches. The
 * program has 2^64 paths; all but 65 are impossible, because one byte
 * cannot equal two constants. The byte is read through a volatile pointer
 * so the compiler keeps every branch instead of building a switch. */
#include "common.h"

#define STEP(i)                                                    \
	if (*(volatile __u8 *)(data + 14) == (i)) {                \
		acc = acc * 31 + (i);                              \
		acc ^= acc >> 7;                                   \
	}
#define STEP8(b) STEP(b) STEP(b + 1) STEP(b + 2) STEP(b + 3) \
	STEP(b + 4) STEP(b + 5) STEP(b + 6) STEP(b + 7)

SEC("xdp")
int explode(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	volatile __u64 acc = 0;

	if (data + 15 > data_end)
		return XDP_PASS;
	STEP8(0) STEP8(8) STEP8(16) STEP8(24)
	STEP8(32) STEP8(40) STEP8(48) STEP8(56)
	return acc == 12345 ? XDP_DROP : XDP_PASS;
}
