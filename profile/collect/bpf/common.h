// SPDX-License-Identifier: MIT
// What block.c and nvme.c share: request types and facts, the layout of
// the tracepoint records they read, the filter and sampling constants, the
// per-CPU counters, and the ring buffer with its per-CPU staging.
#ifndef DPPERF_PROFILE_COMMON_H
#define DPPERF_PROFILE_COMMON_H

#define OP_OTHER 0
#define OP_READ 1
#define OP_WRITE 2
#define NO_KIND 255
#define NO_FIELD 0xffff

// Offsets of fields in a tracepoint record (bytes from its start), read
// by user space from the tracefs format files; NO_FIELD where the event
// lacks one (block events without bytes: nr_sector * 512).
struct layout {
	__u16 dev, sector, nr_sector, rwbs, bytes, qid, cid, opcode;
};

// What one event says about its request.
struct facts {
	__u64 sector;
	__u32 dev;
	__u32 bytes;
	__u16 qid;
	__u16 cid;
	__u8 op;
};

// Set by user space before loading.
volatile const __u8 first_kind;     // path event index of the first event
volatile const __u8 last_kind;      // ... and of the last, which sends the record
volatile const __u32 filter_dev;    // 0: any
volatile const __u8 filter_op;      // 0: any, else OP_READ/OP_WRITE
volatile const __u32 min_bytes;
volatile const __u32 max_bytes;     // 0: unbounded
volatile const __u32 sample_n;      // keep 1 of N (0 or 1: all)
volatile const __u32 wakeup_bytes = 1 << 20; // wake the reader once this much is queued

// Finished records, one entry per request.
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

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

// sampled says whether this request is the 1 of sample_n kept.
static __always_inline int sampled(void)
{
	__u32 n = sample_n;
	if (n <= 1)
		return 1;
	__u32 idx = 1;
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);
	if (!c)
		return 0;
	return (*c)++ % n == 0;
}

// wanted applies the type and size filter.
static __always_inline int wanted(__u8 op, __u32 bytes)
{
	return !(filter_op && op != filter_op) && bytes >= min_bytes && !(max_bytes && bytes > max_bytes);
}

// Finished records wait in a per-CPU staging buffer and go into the ring
// buffer in batches: one bpf_ringbuf_output (its lock, its header and the
// shared producer position) per STAGE_BYTES of records instead of one per
// request. A batch goes out when the next record would not fit, or when
// its first record finished STAGE_AGE_NS ago, so that records of a quiet
// CPU wait at most that long (measured at the next record of that CPU).
// Only the program of the path's last event stages records, and a program
// does not run nested in itself on one CPU, so each CPU's buffer has one
// writer at a time. User space reads what is still staged after the
// programs are detached (staged records are never lost at the end of a
// run). Records of a batch that does not fit the ring are counted as lost.
#define STAGE_WORDS 160 // 1280 bytes: 20 block records, 16 nvme records
#define STAGE_AGE_NS 10000000ULL

struct stage {
	__u32 words; // 8-byte words staged
	__u32 pad;
	__u64 first; // when the first staged record finished
	__u64 buf[STAGE_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stage);
} staged SEC(".maps");

static __always_inline void count_n(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		*v += n;
}

// send stages a finished record of size bytes (a multiple of 8 known at
// compile time) that finished at now. The reader is woken only when
// wakeup_bytes (a quarter of the ring, set by user space) are queued, so
// that a burst cannot fill the ring between two of its polls; otherwise
// it polls on a timer.
static __always_inline void send(void *rec, __u32 size, __u64 now)
{
	const __u32 n = size / 8;
	__u32 zero = 0;
	struct stage *s = bpf_map_lookup_elem(&staged, &zero);
	if (!s)
		return;
	__u32 w = s->words;
	if (w > STAGE_WORDS - n)
		w = 0; // cannot happen: a full buffer was sent
	if (w == 0)
		s->first = now;
	__u64 *src = rec;
#pragma unroll
	for (__u32 i = 0; i < n; i++)
		s->buf[w + i] = src[i];
	w += n;
	if (w <= STAGE_WORDS - n && now - s->first < STAGE_AGE_NS) {
		s->words = w;
		return;
	}
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&events, s->buf, w * 8, flags) != 0)
		count_n(0, w / n);
	s->words = 0;
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

// read_block takes device, sector, size and type from the formatted record
// of a block tracepoint. The layout's fields are read one by one: clang may
// fold a copy of a whole volatile const struct to its (zero) initializer.
static __always_inline void read_block(void *ctx, volatile const struct layout *l, struct facts *f)
{
	__u16 bytes = l->bytes;
	__u32 nr = 0;
	char rwbs[4] = {};
	bpf_probe_read_kernel(&f->dev, sizeof(f->dev), ctx + l->dev);
	bpf_probe_read_kernel(&f->sector, sizeof(f->sector), ctx + l->sector);
	bpf_probe_read_kernel(&nr, sizeof(nr), ctx + l->nr_sector);
	bpf_probe_read_kernel(&rwbs, sizeof(rwbs), ctx + l->rwbs);
	if (bytes != NO_FIELD)
		bpf_probe_read_kernel(&f->bytes, sizeof(f->bytes), ctx + bytes);
	else
		f->bytes = nr * 512;
	f->op = op_of_rwbs(rwbs);
}

#endif
