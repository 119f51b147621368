// SPDX-License-Identifier: MIT
// What block.c and nvme.c share: request types, the per-CPU counters and
// the ring buffer's batched wake-up.
#ifndef DPPERF_PROFILE_COMMON_H
#define DPPERF_PROFILE_COMMON_H

#define OP_OTHER 0
#define OP_READ 1
#define OP_WRITE 2
#define NO_KIND 255

volatile const __u32 wakeup_bytes = 65536; // wake the reader once this much is queued

// Index 0: records lost (ring buffer full); 1: sampling counter;
// 2: records overwritten or restarted before they completed; 3: requests
// the filter rejected. Requests started are not counted: an extra cache
// line touched per request for a figure user space can do without.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		(*v)++;
}

// sampled says whether this request is the 1 of n kept.
static __always_inline int sampled(__u32 n)
{
	if (n <= 1)
		return 1;
	__u32 idx = 1;
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);
	if (!c)
		return 0;
	return (*c)++ % n == 0;
}

// submit_flags: waking user space for every request costs more than the
// request; wake it when a batch is queued (it also polls on a timer).
static __always_inline __u64 submit_flags(void *rb)
{
	return bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

// op_of_rwbs reads the block layer's rwbs string ("R", "WS", "FWS" ...).
static __always_inline __u8 op_of_rwbs(const char *rwbs)
{
	for (int i = 0; i < 4; i++) {
		if (rwbs[i] == 'R')
			return OP_READ;
		if (rwbs[i] == 'W')
			return OP_WRITE;
		if (rwbs[i] == 'D' || rwbs[i] == 'N' || rwbs[i] == 0)
			return OP_OTHER;
	}
	return OP_OTHER;
}

#endif
