// SPDX-License-Identifier: MIT
// Block-layer request records for dpperf profile. Each block tracepoint the
// path uses gets one program. The first event of the path decides, in the
// kernel, whether a request is profiled (device, type, size filter and 1 of
// N sampling) and starts its record in a table indexed by a hash of (dev, sector);
// later events add their timestamp to the record, and the last event sends
// the whole record (one record per request, not per event) and removes it.
// Records are staged per CPU and go to user space through a ring buffer in
// batches, which the reader polls (common.h); records lost to a full ring
// are counted in a per-CPU array.
//
// Two program sets read the same facts. The tp_btf programs get the
// kernel's struct request / struct bio pointers directly (no trace record
// is formatted, so they cost much less); their field offsets come from the
// kernel's BTF through CO-RE relocations. The tracepoint programs read the
// formatted trace record, at offsets user space takes from the tracefs
// format files and sets as read-only constants before loading; they serve
// kernels without BTF.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "common.h"

#define TP_COUNT 5

// One finished request: the time it passed each tracepoint (0: not seen).
struct event {
	__u64 ts[TP_COUNT];
	__u64 sector;
	__u32 dev;
	__u32 bytes;
	__u16 cpu;
	__u8 op;
	__u8 pad[5];
};

// Used as the type of a dummy global so bpf2go emits a Go type for it.
struct event *unused_event __attribute__((unused));

enum { TP_BIO_QUEUE, TP_GETRQ, TP_RQ_INSERT, TP_RQ_ISSUE, TP_RQ_COMPLETE, TP_MAX };

volatile const struct layout layouts[TP_MAX];
volatile const __u8 kinds[TP_MAX];  // path event index per tracepoint, NO_KIND if unused

// Requests in flight, in a small two-way table: a request lives in one of
// the two slots (a pair, 128 bytes) its (dev, sector) hashes to. An array
// lookup is a few instructions with no lock or helper call, and 64 KiB
// stay in the caches and the TLB: a 65536-entry map (LRU hash, plain hash
// or array alike, 4 MiB) missed both on every request, which was most of
// the collector's cost. When both slots of
// a pair hold live requests the older one is overwritten (counted); a
// record left behind by a bio merged into another request counts as free
// after a second.
#define SLOT_BITS 10
#define STALE_NS 1000000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << SLOT_BITS);
	__type(key, __u32);
	__type(value, struct event);
} inflight SEC(".maps");

static __always_inline __u32 slot_of(__u32 dev, __u64 sector)
{
	// Fibonacci hashing: neighbouring sectors land far apart.
	return (__u32)(((sector ^ ((__u64)dev << 40)) * 0x9E3779B97F4A7C15ULL) >> (64 - SLOT_BITS));
}

static __always_inline int same(struct event *r, __u32 dev, __u64 sector)
{
	return r->dev == dev && r->sector == sector;
}

static __always_inline int busy(struct event *r, int tp, __u64 now)
{
	return r->dev && tp < TP_COUNT && now - r->ts[tp] < STALE_NS;
}

// record follows one request through tracepoint tp.
static __always_inline int record(int tp, struct facts *f)
{
	__u32 dev = f->dev;
	__u64 sector = f->sector;
	__u8 kind = kinds[tp];
	if (kind == NO_KIND)
		return 0;
	// Other devices' requests (a loop device's backing disk, say) leave
	// at once, without a map lookup.
	if (filter_dev && dev != filter_dev)
		return 0;
	__u32 slot = slot_of(dev, sector);
	struct event *r = bpf_map_lookup_elem(&inflight, &slot);
	if (!r)
		return 0;

	if (kind == first_kind) {
		if (!wanted(f->op, f->bytes)) {
			count(3);
			return 0;
		}
		if (!sampled())
			return 0;
		if (tp >= TP_COUNT)
			return 0;
		__u64 now = bpf_ktime_get_ns();
		// A slot is live while its request started less than STALE_NS
		// ago (the first event is always this tracepoint). A live record
		// of the same request (its events were missed) is replaced.
		if (busy(r, tp, now) && !same(r, dev, sector)) {
			__u32 other = slot ^ 1;
			struct event *r2 = bpf_map_lookup_elem(&inflight, &other);
			if (!r2)
				return 0;
			if (!busy(r2, tp, now) || same(r2, dev, sector) || r2->ts[tp] < r->ts[tp])
				r = r2;
		}
		if (busy(r, tp, now))
			count(2);
		__builtin_memset(r->ts, 0, sizeof(r->ts));
		r->ts[tp] = now;
		r->sector = sector;
		r->dev = dev;
		r->bytes = f->bytes;
		r->op = f->op;
		r->cpu = bpf_get_smp_processor_id();
		return 0;
	}

	if (!same(r, dev, sector)) {
		__u32 other = slot ^ 1;
		r = bpf_map_lookup_elem(&inflight, &other);
		if (!r || !same(r, dev, sector))
			return 0;
	}
	__u64 now = bpf_ktime_get_ns();
	if (tp < TP_COUNT)
		r->ts[tp] = now;
	if (kind != last_kind)
		return 0;

	send(r, sizeof(*r), now);
	r->dev = 0;
	return 0;
}

// ---- tp_btf programs: kernel structures through CO-RE ----

struct gendisk {
	int major;
	int first_minor;
} __attribute__((preserve_access_index));

struct request_queue {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

struct request {
	struct request_queue *q;
	unsigned int cmd_flags;
	unsigned int __data_len;
	__u64 __sector;
} __attribute__((preserve_access_index));

struct block_device {
	__u32 bd_dev;
} __attribute__((preserve_access_index));

struct bvec_iter {
	__u64 bi_sector;
	unsigned int bi_size;
} __attribute__((preserve_access_index));

struct bio {
	struct block_device *bi_bdev;
	unsigned int bi_opf;
	struct bvec_iter bi_iter;
} __attribute__((preserve_access_index));

#define REQ_OP_MASK 0xff

static __always_inline __u8 op_of_flags(unsigned int flags)
{
	switch (flags & REQ_OP_MASK) {
	case 0:
		return OP_READ;
	case 1:
		return OP_WRITE;
	}
	return OP_OTHER;
}

// tp_btf arguments are trusted kernel pointers: plain member accesses
// (relocated through CO-RE, loaded as probe-protected memory reads) cost
// less than helper calls.
static __always_inline int from_bio(int tp, struct bio *bio)
{
	struct block_device *bdev = bio->bi_bdev;
	struct facts f = {
		.dev = bdev ? bdev->bd_dev : 0,
		.sector = bio->bi_iter.bi_sector,
		.bytes = bio->bi_iter.bi_size,
		.op = op_of_flags(bio->bi_opf),
	};
	return record(tp, &f);
}

static __always_inline int from_rq(int tp, struct request *rq, __u32 bytes)
{
	struct gendisk *disk = rq->q->disk;
	struct facts f = {
		.dev = disk ? ((__u32)disk->major << 20) | (__u32)disk->first_minor : 0,
		.sector = rq->__sector,
		.bytes = bytes,
		.op = op_of_flags(rq->cmd_flags),
	};
	return record(tp, &f);
}

SEC("tp_btf/block_bio_queue")
int btf_bio_queue(__u64 *ctx) { return from_bio(TP_BIO_QUEUE, (struct bio *)ctx[0]); }

SEC("tp_btf/block_getrq")
int btf_getrq(__u64 *ctx) { return from_bio(TP_GETRQ, (struct bio *)ctx[0]); }

SEC("tp_btf/block_rq_insert")
int btf_rq_insert(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	return from_rq(TP_RQ_INSERT, rq, rq->__data_len);
}

SEC("tp_btf/block_rq_issue")
int btf_rq_issue(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	return from_rq(TP_RQ_ISSUE, rq, rq->__data_len);
}

// block_rq_complete(struct request *rq, blk_status_t error, unsigned int nr_bytes)
SEC("tp_btf/block_rq_complete")
int btf_rq_complete(__u64 *ctx) { return from_rq(TP_RQ_COMPLETE, (struct request *)ctx[0], (__u32)ctx[2]); }

// ---- tracepoint programs: formatted trace records ----

static __always_inline int handle(void *ctx, int tp)
{
	if (tp < 0 || tp >= TP_MAX || kinds[tp] == NO_KIND)
		return 0;
	struct facts f = {};
	read_block(ctx, &layouts[tp], &f);
	return record(tp, &f);
}

SEC("tracepoint/block/block_bio_queue")
int bio_queue(void *ctx) { return handle(ctx, TP_BIO_QUEUE); }

SEC("tracepoint/block/block_getrq")
int getrq(void *ctx) { return handle(ctx, TP_GETRQ); }

SEC("tracepoint/block/block_rq_insert")
int rq_insert(void *ctx) { return handle(ctx, TP_RQ_INSERT); }

SEC("tracepoint/block/block_rq_issue")
int rq_issue(void *ctx) { return handle(ctx, TP_RQ_ISSUE); }

SEC("tracepoint/block/block_rq_complete")
int rq_complete(void *ctx) { return handle(ctx, TP_RQ_COMPLETE); }

char LICENSE[] SEC("license") = "Dual MIT/GPL";
