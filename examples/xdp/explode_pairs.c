/* Path explosion that no shortcut removes: 64 branches in 32 pairs. Pair k
 * reads two packet bytes a and b; its first branch does extra work when
 * a == b, its second when a ^ b == 1. No packet takes both, but the two
 * conditions relate two unknown bytes, so no constant folding refutes the
 * pair: only the solver can. Every path taking more than 32 extra-work
 * sides contains such a pair, and there are more than 10^15 shortest
 * refuted prefixes, so the search for the slowest satisfiable path runs
 * until it is stopped, improving its bound as it goes. */
#include "common.h"

#define BYTE(k) (*(volatile __u8 *)(data + 14 + (k)))
#define WORK(i)                                                    \
	{                                                          \
		acc = acc * 31 + (i);                              \
		acc ^= acc >> 7;                                   \
	}
#define PAIR(k)                                                    \
	if (BYTE(2 * (k)) == BYTE(2 * (k) + 1))                    \
		WORK(2 * (k))                                      \
	if ((BYTE(2 * (k)) ^ BYTE(2 * (k) + 1)) == 1)              \
		WORK(2 * (k) + 1)
#define PAIR8(k) PAIR(k) PAIR(k + 1) PAIR(k + 2) PAIR(k + 3) \
	PAIR(k + 4) PAIR(k + 5) PAIR(k + 6) PAIR(k + 7)

SEC("xdp")
int explode_pairs(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	volatile __u64 acc = 0;

	if (data + 14 + 64 > data_end)
		return XDP_PASS;
	PAIR8(0) PAIR8(8) PAIR8(16) PAIR8(24)
	return acc == 12345 ? XDP_DROP : XDP_PASS;
}
