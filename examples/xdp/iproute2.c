/* An XDP program laid out for iproute2's legacy loader (`ip link set dev
 * eth0 xdp obj iproute2.o`): the code in section "prog", which names no
 * program type, and maps declared as struct bpf_elf_map in section "maps",
 * with the id, pinning and inner-map fields only that loader reads. A
 * pinned per-CPU counter per verdict and a hash of blocked IPv4 sources.
 * The array of maps "tables" only shows how an inner map is given by id
 * (the program does not use it: dpperf's interpreter does not model maps of
 * maps, and `bound --measure` replays through it). */
#include "common.h"

/* iproute2's include/bpf_elf.h */
struct bpf_elf_map {
	__u32 type;
	__u32 size_key;
	__u32 size_value;
	__u32 max_elem;
	__u32 flags;
	__u32 id;
	__u32 pinning;
	__u32 inner_id;
	__u32 inner_idx;
};

#define PIN_NONE 0
#define PIN_OBJECT_NS 1
#define PIN_GLOBAL_NS 2

struct bpf_elf_map SEC("maps") verdicts = {
	.type = BPF_MAP_TYPE_PERCPU_ARRAY,
	.size_key = sizeof(__u32),
	.size_value = sizeof(__u64),
	.max_elem = 4,
	.pinning = PIN_GLOBAL_NS,
};

struct bpf_elf_map SEC("maps") blocked = {
	.type = BPF_MAP_TYPE_HASH,
	.size_key = sizeof(__u32),
	.size_value = sizeof(__u8),
	.max_elem = 1024,
	.flags = BPF_F_NO_PREALLOC,
	.id = 1,
	.pinning = PIN_OBJECT_NS,
};

/* Slot 0 holds the map with id 1 (blocked) when iproute2 loads the object. */
struct bpf_elf_map SEC("maps") tables = {
	.type = BPF_MAP_TYPE_ARRAY_OF_MAPS,
	.size_key = sizeof(__u32),
	.size_value = sizeof(__u32),
	.max_elem = 2,
	.inner_id = 1,
	.inner_idx = 0,
};

static __always_inline int verdict(__u32 v)
{
	__u64 *n = bpf_map_lookup_elem(&verdicts, &v);
	if (n)
		*n += 1;
	return v;
}

SEC("prog")
int iproute2_xdp(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > data_end)
		return verdict(XDP_DROP);
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return verdict(XDP_PASS);
	__u32 src = ip->saddr;
	if (bpf_map_lookup_elem(&blocked, &src))
		return verdict(XDP_DROP);
	return verdict(XDP_PASS);
}
