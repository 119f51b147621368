// SPDX-License-Identifier: MIT
// Block-layer request records for dpperf profile. Each block tracepoint the
// path uses gets one program. Every event first decides whether its
// request is sampled (1 of N, from the request's first sector, see keep),
// and an event of a request left out returns there. The first event of the
// path applies the device, type and size filter and starts the record in
// a table indexed by a hash of (dev, sector), see inflight; later events
// add their timestamp to the record,
// and the last event sends the whole record (one record per request, not
// per event) and removes it. Records are staged per CPU and go to user
// space through a ring buffer in batches, which the reader polls
// (common.h); records lost to a full ring are counted in a per-CPU array.
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
volatile const __u64 sample_salt;   // set per run, so that runs sample different sectors
volatile const __u32 sample_below;  // with sample_n > 1: keep a request whose hash is below this

// keep says whether the request starting at sector is one of those
// recorded: a hash of the sector and the run's salt falls below
// sample_below, the first 1/sample_n of its range (or a larger share when
// user space attaches the programs only part of the time, see duty.go).
// Every event of a request sees the same first sector and comes to the
// same decision from its own arguments, so
// an event of a request left out returns after one load and a
// multiplication, without a map lookup or a clock read. Each request is
// kept with probability 1/N whatever the order of arrival; a workload
// that reads the same few sectors over and over keeps all or none of them
// in one run.
static __always_inline int keep(__u64 sector)
{
	__u32 n = sample_n;
	if (n <= 1)
		return 1;
	__u32 h = (__u32)(((sector ^ sample_salt) * 0x9E3779B97F4A7C15ULL) >> 32);
	return h < sample_below;
}

// Requests in flight, in a set-associative table: a request lives in one
// of the WAYS slots of the set its (dev, sector) hashes to. An array lookup
// is a few instructions with no lock or helper call. What the table costs
// is its cache misses: a 65536-entry map (LRU hash, plain hash or array
// alike, 4 MiB) missed the caches and the TLB on every request, and even
// a 64 KiB table of 512 two-slot pairs missed on the first touch of a slot
// (a random line last used milliseconds ago). So the ways are banks of
// their own and a request takes the first free way: with few requests in
// flight nearly all of them use way 0, 8 KiB that stay in the caches, and
// the other ways serve bursts. The ways other than 0 are marked in use in
// a byte each (occupied), so that an event whose request is not in way 0
// reads the ways in use only, and a request not recorded at all
// (filtered) costs one more read of a line that stays cached.
// When all ways of a set hold live requests the oldest one is overwritten
// (counted); records left behind by bios merged into another request are
// removed when the request is issued (forget_merged), others (a request
// whose later events were not seen) count as free after a second.
#define SET_BITS 7
#define WAYS 8
#define SETS (1 << SET_BITS)
#define STALE_NS 1000000000ULL

// BPF_F_MMAPABLE puts the slots on a page boundary (nothing maps them): a
// plain array's values are only 8-byte aligned, so that every 64-byte
// record straddled two cache lines.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WAYS * SETS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct event);
} inflight SEC(".maps");

// Per set, a byte per way: nonzero while the way (other than 0) may hold a
// record. Each byte is stored whole, never by a read-modify-write of the
// set's word, so two CPUs updating different ways of a set cannot undo
// each other's update and no atomic operation is needed. The loops over
// the ways run only when way 0 holds another request; they are not
// unrolled, which keeps each program less than half the size.
struct occupancy {
	__u8 way[WAYS];
};
_Static_assert(sizeof(struct occupancy) == sizeof(__u64), "find reads a set's bytes as one word");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct occupancy);
} occupied SEC(".maps");

static __always_inline __u32 set_of(__u32 dev, __u64 sector)
{
	// Fibonacci hashing: neighbouring sectors land far apart.
	return (__u32)(((sector ^ ((__u64)dev << 40)) * 0x9E3779B97F4A7C15ULL) >> (64 - SET_BITS));
}

static __always_inline struct event *way(__u32 set, int w)
{
	__u32 i = (__u32)w * SETS + set;
	return bpf_map_lookup_elem(&inflight, &i);
}

static __always_inline int same(struct event *r, __u32 dev, __u64 sector)
{
	return r->dev == dev && r->sector == sector;
}

static __always_inline int busy(struct event *r, int tp, __u64 now)
{
	return r->dev && tp < TP_COUNT && now - r->ts[tp] < STALE_NS;
}

// taken says whether start may take slot r for a new request: it is free,
// or its record is older than STALE_NS, or of the same (dev, sector) (a
// request whose later events were missed). Taking a slot that holds a
// record counts it as overwritten.
static __always_inline int taken(struct event *r, __u32 dev, __u64 sector, int tp, __u64 now)
{
	if (!r->dev)
		return 1;
	if (!busy(r, tp, now) || same(r, dev, sector)) {
		count(2);
		return 1;
	}
	return 0;
}

// start picks the slot for a request starting at tracepoint tp: the first
// way it may take (see taken), else the oldest record's (counted).
static __always_inline struct event *start(__u32 set, __u32 dev, __u64 sector, int tp, __u64 now)
{
	struct event *r = way(set, 0);
	if (!r)
		return 0;
	if (taken(r, dev, sector, tp, now))
		return r;
	struct occupancy *o = bpf_map_lookup_elem(&occupied, &set);
	if (!o)
		return 0;
	struct event *old = r;
#pragma clang loop unroll(disable)
	for (int w = 1; w < WAYS; w++) {
		struct event *c = way(set, w);
		if (!c)
			return 0;
		// A way not in use is taken without reading it.
		if (!o->way[w]) {
			o->way[w] = 1;
			return c;
		}
		if (taken(c, dev, sector, tp, now))
			return c;
		if (c->ts[tp] < old->ts[tp])
			old = c;
	}
	count(2);
	return old;
}

// match scans the ways other than 0 of a set that are in use for records of
// (dev, sector). With drop it frees every one it finds (counted, see
// forget) and returns 0; without, it returns the first and its way.
static __always_inline struct event *match(__u32 set, __u32 dev, __u64 sector, int drop, int *w)
{
	struct occupancy *o = bpf_map_lookup_elem(&occupied, &set);
	if (!o || !*(__u64 *)o)
		return 0;
#pragma clang loop unroll(disable)
	for (int i = 1; i < WAYS; i++) {
		if (!o->way[i])
			continue;
		struct event *c = way(set, i);
		if (!c || !same(c, dev, sector))
			continue;
		if (!drop) {
			*w = i;
			return c;
		}
		count(2);
		c->dev = 0;
		o->way[i] = 0;
	}
	return 0;
}

// find returns the slot holding the request and its way, if any.
static __always_inline struct event *find(__u32 set, __u32 dev, __u64 sector, int *w)
{
	struct event *r = way(set, 0);
	if (!r)
		return 0;
	*w = 0;
	if (same(r, dev, sector))
		return r;
	return match(set, dev, sector, 0, w);
}

// release frees the slot of a finished request, in way w of set.
static __always_inline void release(struct event *r, __u32 set, int w)
{
	struct occupancy *o = 0;
	if (w > 0)
		o = bpf_map_lookup_elem(&occupied, &set);
	r->dev = 0;
	if (o && w < WAYS)
		o->way[w] = 0;
}

// forget removes the records of the same (dev, sector) when a request
// starts that is not recorded (filtered): one left behind by
// a bio merged into another request, or of a request still in flight,
// which the later events of this one would otherwise continue (counted).
// Usually it reads way 0 and the set's occupancy, lines that stay cached.
static __always_inline void forget(__u32 set, __u32 dev, __u64 sector)
{
	struct event *r = way(set, 0);
	if (!r)
		return;
	if (same(r, dev, sector)) {
		count(2);
		r->dev = 0;
	}
	int w;
	match(set, dev, sector, 1, &w);
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
	__u32 set = set_of(dev, sector);

	if (kind == first_kind) {
		if (!wanted(f->op, f->bytes)) {
			count(3);
			forget(set, dev, sector);
			return 0;
		}
		if (tp >= TP_COUNT)
			return 0;
		__u64 now = bpf_ktime_get_ns();
		struct event *r = start(set, dev, sector, tp, now);
		if (!r)
			return 0;
		__builtin_memset(r->ts, 0, sizeof(r->ts));
		r->ts[tp] = now;
		r->sector = sector;
		r->dev = dev;
		r->bytes = f->bytes;
		r->op = f->op;
		r->cpu = bpf_get_smp_processor_id();
		return 0;
	}

	int w = 0;
	struct event *r = find(set, dev, sector, &w);
	if (!r)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	if (tp < TP_COUNT)
		r->ts[tp] = now;
	if (kind != last_kind)
		return 0;

	send(r, sizeof(*r), now);
	release(r, set, w);
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

struct bio;

struct request {
	struct request_queue *q;
	unsigned int cmd_flags;
	unsigned int __data_len;
	__u64 __sector;
	struct bio *bio;
} __attribute__((preserve_access_index));

struct block_device {
	__u32 bd_dev;
} __attribute__((preserve_access_index));

struct bvec_iter {
	__u64 bi_sector;
	unsigned int bi_size;
} __attribute__((preserve_access_index));

struct bio {
	struct bio *bi_next;
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

static __always_inline __u32 bio_dev(struct bio *bio)
{
	struct block_device *bdev = bio->bi_bdev;
	return bdev ? bdev->bd_dev : 0;
}

// tp_btf arguments are trusted kernel pointers: plain member accesses
// (relocated through CO-RE, loaded as probe-protected memory reads) cost
// less than helper calls.
static __always_inline int from_bio(int tp, struct bio *bio)
{
	__u64 sector = bio->bi_iter.bi_sector;
	if (!keep(sector))
		return 0;
	struct facts f = {
		.dev = bio_dev(bio),
		.sector = sector,
		.bytes = bio->bi_iter.bi_size,
		.op = op_of_flags(bio->bi_opf),
	};
	return record(tp, &f);
}

// A bio merged into a request passed block_bio_queue but none of the later
// events: its record would hold a way of its set for a second, and in a
// workload whose bios mostly merge the sets would fill and every event
// would read all their ways. When a request is issued (no bio joins it
// after that; at its last event if the path has no block_rq_issue), the
// records of its bios other than the first are removed (counted, as the
// overwritten records of merged bios were before). The issuing CPU is
// usually the submitting one, whose caches still hold those bios and
// records; MERGED_MAX bounds the walk, bios beyond it keep their records
// until they are stale. The tracepoint programs do not see the bios.
#define MERGED_MAX 256

// forget_bio is a global function, so that the verifier checks it once
// rather than once per bio of the walk.
__attribute__((noinline)) int forget_bio(__u32 dev, __u64 sector)
{
	forget(set_of(dev, sector), dev, sector);
	return 0;
}

static __always_inline void forget_merged(struct request *rq)
{
	struct bio *b = rq->bio;
	if (!b)
		return;
	b = b->bi_next;
#pragma clang loop unroll(disable)
	for (int i = 0; i < MERGED_MAX && b; i++) {
		__u64 sector = b->bi_iter.bi_sector;
		if (keep(sector))
			forget_bio(bio_dev(b), sector);
		b = b->bi_next;
	}
}

static __always_inline int from_rq(int tp, struct request *rq, __u32 bytes)
{
	__u64 sector = rq->__sector;
	int walk = kinds[TP_RQ_ISSUE] != NO_KIND ? TP_RQ_ISSUE : TP_RQ_COMPLETE;
	int merged = tp == walk && kinds[TP_BIO_QUEUE] == first_kind && kinds[tp] != NO_KIND;
	if (!keep(sector)) {
		// Its merged bios are sampled each by its own sector.
		if (merged && sample_n > 1)
			forget_merged(rq);
		return 0;
	}
	struct gendisk *disk = rq->q->disk;
	struct facts f = {
		.dev = disk ? ((__u32)disk->major << 20) | (__u32)disk->first_minor : 0,
		.sector = sector,
		.bytes = bytes,
		.op = op_of_flags(rq->cmd_flags),
	};
	record(tp, &f);
	if (merged && !(filter_dev && f.dev != filter_dev))
		forget_merged(rq);
	return 0;
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

// btf_empty returns at once. User space attaches a copy to each tracepoint
// of the path instead of the programs above (`--bpf-programs empty`), to
// measure what the attachment alone costs a request: the tracepoint's
// dispatch and the program's entry and exit.
SEC("tp_btf/block_rq_complete")
int btf_empty(__u64 *ctx) { return 0; }

// ---- tracepoint programs: formatted trace records ----

static __always_inline int handle(void *ctx, int tp)
{
	if (tp < 0 || tp >= TP_MAX || kinds[tp] == NO_KIND)
		return 0;
	__u64 sector = 0;
	__u16 off = layouts[tp].sector;
	bpf_probe_read_kernel(&sector, sizeof(sector), ctx + off);
	if (!keep(sector))
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
