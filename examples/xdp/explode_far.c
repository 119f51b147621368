/* Path explosion of another shape than explode_pairs: 64 branches in 32
 * pairs, the two branches of a pair 32 branches apart. Pair k reads its
 * own two packet bytes a and b; its first branch (in the first half) does
 * extra work when a == b, its second (in the second half) when a ^ b == 1.
 * No packet takes both, but a path only meets the contradiction 32
 * branches after its cause, so refuting a short prefix never helps: the
 * pair must be learnt. A last branch tests the xor of all 64 bytes, so it
 * depends on every pair. The bytes are read through a volatile pointer so
 * the compiler keeps every branch. */
#include "common.h"

#define BYTE(k) (*(volatile __u8 *)(data + 14 + (k)))
#define WORK(i)                                                    \
	{                                                          \
		acc = acc * 31 + (i);                              \
		acc ^= acc >> 7;                                   \
	}
#define SAME(k)                                                    \
	if (BYTE(2 * (k)) == BYTE(2 * (k) + 1))                    \
		WORK(k)
#define NEXT(k)                                                    \
	if ((BYTE(2 * (k)) ^ BYTE(2 * (k) + 1)) == 1)              \
		WORK(32 + (k))
#define SAME8(k) SAME(k) SAME(k + 1) SAME(k + 2) SAME(k + 3) \
	SAME(k + 4) SAME(k + 5) SAME(k + 6) SAME(k + 7)
#define NEXT8(k) NEXT(k) NEXT(k + 1) NEXT(k + 2) NEXT(k + 3) \
	NEXT(k + 4) NEXT(k + 5) NEXT(k + 6) NEXT(k + 7)

SEC("xdp")
int explode_far(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	volatile __u64 acc = 0;
	__u8 all = 0;

	if (data + 14 + 64 > data_end)
		return XDP_PASS;
	SAME8(0) SAME8(8) SAME8(16) SAME8(24)
	NEXT8(0) NEXT8(8) NEXT8(16) NEXT8(24)
#pragma unroll
	for (int k = 0; k < 64; k++)
		all ^= BYTE(k);
	if (all == 0x5a)
		WORK(64)
	return acc == 12345 ? XDP_DROP : XDP_PASS;
}
