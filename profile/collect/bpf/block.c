// SPDX-License-Identifier: MIT
// Block-layer request records for dpperf profile. Each block tracepoint the
// path uses gets one program; the last event of the path sends the whole
// record of a request (one record per request, not per event) through the
// per-CPU staging and the ring buffer (common.h).
//
// What a request costs is mostly cache lines and clock reads, so the
// programs keep the lines a request touches few and local:
//
//  - Sampling (1 of N) is a function of the request's first sector and a
//    per-run salt, so every event of a request reaches the same decision
//    from its own arguments: an event of a request left out returns after
//    one load and a multiplication, without a map lookup or a clock read.
//  - block_bio_queue and block_getrq of a bio run on the submitting CPU,
//    back to back. The first keeps the bio's facts in a per-CPU line, the
//    second files them in that CPU's region of pending, where they wait
//    for the request's first request event, which usually runs on the
//    same CPU (the plug's flush). A bio that merges into another request
//    never reaches block_getrq and leaves nothing behind.
//  - The first request event (block_rq_insert, or block_rq_issue where
//    the queue has no scheduler) takes the request's facts from pending,
//    on its own CPU first, and starts its record in the in-flight table,
//    at a slot indexed by the request's tag and hardware queue. With a
//    device filter the table is sized to that device (slot_stride), every
//    request in flight has a slot of its own, written without being read
//    first, and the table's touched part is the queue depth times one
//    line; otherwise slots are probed and told apart by the request's
//    address.
//    The completion reads the slot and stages a copy; it writes nothing
//    to it, since the next request of the same tag rewrites the slot at
//    its own start. So one line per request moves between CPUs (issue on
//    the submitting CPU, completion where the device completes).
//
// Two program sets read the same facts. The tp_btf programs get the
// kernel's struct request / struct bio pointers directly (no trace record
// is formatted, so they cost much less); their field offsets come from the
// kernel's BTF through CO-RE relocations. The tracepoint programs read the
// formatted trace record, at offsets user space takes from the tracefs
// format files and sets as read-only constants before loading; they serve
// kernels without BTF. Without the request's address they index the
// in-flight table by a hash of (dev, sector), tell requests apart by
// those two, and free a slot at the request's last event.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "common.h"

#define TP_COUNT 5

// One finished request: the time it passed each tracepoint (0: not seen).
// While the request is in flight ts[TP_RQ_COMPLETE] holds its identity
// (the struct request's address for tp_btf programs, 0 for tracepoint
// programs), and bytes may carry FILTERED.
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
volatile const __u32 ncpus = 1;     // possible CPUs: pending has a region for each
volatile const __u64 sample_salt;   // set per run, so that runs sample different sectors
// With a device filter, user space sizes the in-flight table to the
// device's hardware queues times slot_stride (a power of two above its
// tag depth) and sets slot_stride: a request's slot is then its own
// (queue * slot_stride + tag), and its first request event writes it
// without reading it first. 0: slots are probed.
volatile const __u32 slot_stride;
volatile const __u32 slot_mask = 2048 - 1; // entries of inflight minus one

#define GOLDEN 0x9E3779B97F4A7C15ULL

// mix32 spreads a key over 32 bits (Fibonacci hashing: neighbouring
// sectors land far apart).
static __always_inline __u32 mix32(__u64 x)
{
	return (__u32)((x * GOLDEN) >> 32);
}

// keep says whether the request starting at sector is one of the 1 of
// sample_n recorded: the hash of the sector and the run's salt falls in the
// first 1/sample_n of its range. A request's events agree since they see
// the same first sector. So each request is kept with probability 1/N,
// whatever the order of arrival; a workload that reads the same few
// sectors over and over keeps all or none of them in one run.
static __always_inline int keep(__u64 sector)
{
	__u32 n = sample_n;
	if (n <= 1)
		return 1;
	return (((__u64)mix32(sector ^ sample_salt) * n) >> 32) == 0;
}

// What the bio events learnt of a request, until its first request event.
// bytes has FILTERED set for a request the type and size filter rejected
// (kept so that its later events find it and drop it).
struct early {
	__u64 ts_q;
	__u64 ts_g;
	__u64 sector;
	__u32 dev;
	__u32 bytes;
};
_Static_assert(sizeof(struct early) == 32, "two entries to a cache line");

struct early *unused_early __attribute__((unused));

#define FILTERED 0x80000000U // no request is 2 GiB
#define PEND 128             // entries per CPU
#define PEND_PROBES 4
#define SLOTS 2048           // in-flight table, unless sized by user space
#define SLOT_PROBES 8
#define STALE_NS 1000000000ULL

// pending holds one region of PEND entries per CPU (user space sizes it to
// ncpus regions): an array lookup is a few instructions, and a CPU's
// region is lines no other CPU writes, except where a request's first
// request event runs on another CPU than its bio events. BPF_F_MMAPABLE
// puts the values on a page boundary, so that regions and slots start on
// cache lines; user space clears the tables through the mapping when the
// programs are attached again (Resume).
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PEND);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct early);
} pending SEC(".maps");

// Per CPU (user space sizes it to 2 * ncpus entries, and a CPU uses the
// even one, so that no two CPUs share a line): the facts of the last
// bio that passed block_bio_queue, one line that stays in the CPU's
// cache. block_getrq follows block_bio_queue at once, and files the facts
// in pending; a bio that merges into another request never reaches
// block_getrq and is overwritten by the next.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct early);
} last_bio SEC(".maps");

// Requests from their first request event to their last event.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct event);
} inflight SEC(".maps");

static __always_inline struct early *entry(__u32 i)
{
	return bpf_map_lookup_elem(&pending, &i);
}

static __always_inline struct event *slot(__u32 i)
{
	i &= slot_mask;
	return bpf_map_lookup_elem(&inflight, &i);
}

static __always_inline __u64 later(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

// put_pending files a request's early facts, which started at now, in the
// CPU's region of pending, at the first of PEND_PROBES entries from its
// hash that is free: empty, of the same (dev, sector), or stale. When all
// hold live requests the first is overwritten (counted).
static __always_inline void put_pending(__u32 cpu, __u32 h, struct early *e, __u64 now)
{
	__u32 base = cpu * PEND;
	struct early *victim = 0;
#pragma unroll
	for (int i = 0; i < PEND_PROBES; i++) {
		struct early *p = entry(base + ((h + i) & (PEND - 1)));
		if (!p)
			return;
		if (p->dev && !(p->dev == e->dev && p->sector == e->sector) && now - later(p->ts_q, p->ts_g) < STALE_NS) {
			if (!victim)
				victim = p;
			continue;
		}
		if (p->dev && !(p->bytes & FILTERED))
			count(2);
		*p = *e;
		return;
	}
	if (victim) {
		count(2);
		*victim = *e;
	}
}

// find_local looks for the request (dev, sector) in cpu's region of
// pending and returns its index plus one, or 0.
static __always_inline int find_local(__u32 cpu, __u32 h, __u32 dev, __u64 sector)
{
	__u32 base = cpu * PEND;
#pragma unroll
	for (int i = 0; i < PEND_PROBES; i++) {
		__u32 idx = base + ((h + i) & (PEND - 1));
		struct early *p = entry(idx);
		if (p && p->dev == dev && p->sector == sector)
			return idx + 1;
	}
	return 0;
}

// find_pending is find_local as a global function: the verifier checks it
// once, not once per CPU of the loop in find_elsewhere.
__attribute__((noinline)) int find_pending(__u32 cpu, __u32 h, __u32 dev, __u64 sector)
{
	return find_local(cpu, h, dev, sector);
}

// find_elsewhere looks for the request in the regions of the CPUs other
// than cpu; it returns 0, or the CPU << 32 | find_pending's index.
static __always_inline __u64 find_elsewhere(__u32 cpu, __u32 h, __u32 dev, __u64 sector)
{
#pragma clang loop unroll(disable)
	for (__u32 c = 0; c < 1024 && c < ncpus; c++) {
		if (c == cpu)
			continue;
		int idx = find_pending(c, h, dev, sector);
		if (idx)
			return (__u64)c << 32 | (__u32)idx;
	}
	return 0;
}

static __always_inline struct early *last_of(__u32 cpu)
{
	__u32 i = cpu * 2;
	return bpf_map_lookup_elem(&last_bio, &i);
}

// bio_event follows a request through block_bio_queue or block_getrq.
static __always_inline int bio_event(int tp, struct facts *f)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 now = bpf_ktime_get_ns();
	struct early e = {};
	if (kinds[tp] == first_kind) {
		e.sector = f->sector;
		e.dev = f->dev;
		e.bytes = f->bytes & ~FILTERED;
		if (!wanted(f->op, f->bytes)) {
			count(3);
			e.bytes |= FILTERED;
		}
		if (tp == TP_BIO_QUEUE)
			e.ts_q = now;
		else
			e.ts_g = now;
		if (tp == TP_BIO_QUEUE && kinds[TP_GETRQ] != NO_KIND) {
			struct early *l = last_of(cpu);
			if (l)
				*l = e;
			return 0;
		}
	} else {
		if (tp != TP_GETRQ)
			return 0;
		// Usually block_bio_queue ran just before on this CPU; else
		// the task moved after it.
		struct early *l = last_of(cpu);
		if (!l || l->dev != f->dev || l->sector != f->sector) {
			l = 0;
#pragma clang loop unroll(disable)
			for (__u32 c = 0; c < 1024 && c < ncpus; c++) {
				struct early *o = last_of(c);
				if (c != cpu && o && o->dev == f->dev && o->sector == f->sector) {
					l = o;
					break;
				}
			}
			if (!l)
				return 0;
		}
		e = *l;
		l->dev = 0;
		e.ts_g = now;
	}
	put_pending(cpu, mix32(f->sector ^ ((__u64)f->dev << 40)), &e, now);
	return 0;
}

// claim picks the in-flight slot for a request: idx0 if the slot is its
// own (own), else the first of SLOT_PROBES slots from idx0 that is free,
// or held by an earlier request of the same identity (finished, or its
// last event was missed), or stale at now; if all hold live requests the
// first is overwritten (counted).
static __always_inline struct event *claim(__u32 idx0, int own, __u64 ident, __u32 dev, __u64 sector, __u64 now)
{
	if (own)
		return slot(idx0);
	struct event *victim = 0;
#pragma clang loop unroll(disable)
	for (int i = 0; i < SLOT_PROBES; i++) {
		struct event *r = slot(idx0 + i);
		if (!r)
			return 0;
		if (!r->dev)
			return r;
		__u64 last = later(later(r->ts[0], r->ts[1]), later(r->ts[2], r->ts[3]));
		int same = r->ts[TP_RQ_COMPLETE] == ident && (ident || (r->dev == dev && r->sector == sector));
		if (same || now - last >= STALE_NS) {
			if (!ident && !(r->bytes & FILTERED))
				count(2);
			return r;
		}
		if (!victim)
			victim = r;
	}
	if (victim && !(victim->bytes & FILTERED))
		count(2);
	return victim;
}

// find returns the in-flight slot of the request, if any: idx0 if the
// slot is its own, else the first of SLOT_PROBES from idx0 that holds it.
static __always_inline struct event *find(__u32 idx0, int own, __u64 ident, __u32 dev, __u64 sector)
{
	if (own) {
		struct event *r = slot(idx0);
		if (r && r->dev == dev && r->sector == sector && r->ts[TP_RQ_COMPLETE] == ident)
			return r;
		return 0;
	}
#pragma clang loop unroll(disable)
	for (int i = 0; i < SLOT_PROBES; i++) {
		struct event *r = slot(idx0 + i);
		if (!r)
			return 0;
		if (r->dev == dev && r->sector == sector && r->ts[TP_RQ_COMPLETE] == ident)
			return r;
	}
	return 0;
}

// start fills slot r for a request whose early facts are e, taken from
// the region of CPU cpu.
static __always_inline void start(struct event *r, struct early *e, struct facts *f, __u64 ident, __u16 cpu)
{
	r->ts[TP_BIO_QUEUE] = e->ts_q;
	r->ts[TP_GETRQ] = e->ts_g;
	r->ts[TP_RQ_INSERT] = 0;
	r->ts[TP_RQ_ISSUE] = 0;
	r->ts[TP_RQ_COMPLETE] = ident;
	r->sector = f->sector;
	r->dev = f->dev;
	r->bytes = e->bytes;
	r->op = f->op;
	r->cpu = cpu;
}

// finish adds the time of the request's event tp to its record, and at
// the path's last event stages a copy (the slot is left as it is, except
// that tracepoint programs free it: they have no identity to tell the
// next request of the same sector by).
static __always_inline void finish(struct event *r, int tp, __u64 ident, __u64 now)
{
	if (r->bytes & FILTERED) {
		if (kinds[tp] == last_kind && !ident)
			r->dev = 0;
		return;
	}
	if (kinds[tp] != last_kind) {
		if (tp < TP_COUNT)
			r->ts[tp] = now;
		return;
	}
	struct event e = *r;
	if (tp < TP_COUNT)
		e.ts[tp] = now;
	if (tp != TP_RQ_COMPLETE)
		e.ts[TP_RQ_COMPLETE] = 0;
	send(&e, sizeof(e), now);
	if (!ident)
		r->dev = 0;
}

// rq_event follows a request through block_rq_insert, block_rq_issue or
// block_rq_complete. ident tells the request apart from others in the
// same slots (0: by dev and sector), idx0 is its first slot.
static __always_inline int rq_event(int tp, struct facts *f, __u64 ident, __u32 idx0, int own)
{
	__u16 cpu = bpf_get_smp_processor_id();
	__u64 now = bpf_ktime_get_ns();
	struct early e = {};
	struct event *r;
	if (kinds[tp] == first_kind) {
		e.bytes = f->bytes & ~FILTERED;
		if (!wanted(f->op, f->bytes)) {
			count(3);
			e.bytes |= FILTERED;
		}
		r = claim(idx0, own, ident, f->dev, f->sector, now);
		if (!r)
			return 0;
		start(r, &e, f, ident, cpu);
		if (tp < TP_COUNT)
			r->ts[tp] = now;
		return 0;
	}
	// The first request event of a request with bio events finds their
	// facts in pending, on this CPU or (rarely) another; later ones find
	// the slot.
	int bio_first = first_kind == kinds[TP_BIO_QUEUE] || first_kind == kinds[TP_GETRQ];
	// The completion follows the issue (or insertion) of its request: it
	// looks in pending only for a path without those.
	if (tp == TP_RQ_COMPLETE && (kinds[TP_RQ_ISSUE] != NO_KIND || kinds[TP_RQ_INSERT] != NO_KIND))
		bio_first = 0;
	__u32 h = mix32(f->sector ^ ((__u64)f->dev << 40));
	__u16 from = cpu;
	int idx = bio_first ? find_local(cpu, h, f->dev, f->sector) : 0;
	r = idx ? 0 : find(idx0, own, ident, f->dev, f->sector);
	if (!idx && !r && bio_first) {
		__u64 at = find_elsewhere(cpu, h, f->dev, f->sector);
		idx = at & 0xffffffff;
		from = at >> 32;
		if (!idx && ident) {
			// Nothing known of the request (it started before the
			// programs were attached): its slot must not keep an
			// earlier request of the same tag for the later events
			// to find.
			r = claim(idx0, own, ident, f->dev, f->sector, now);
			if (r) {
				start(r, &e, f, ident, cpu);
				r->bytes = FILTERED;
			}
			return 0;
		}
	}
	if (idx) {
		struct early *p = entry(idx - 1);
		if (!p)
			return 0;
		e = *p;
		p->dev = 0;
		r = claim(idx0, own, ident, f->dev, f->sector, now);
		if (!r)
			return 0;
		start(r, &e, f, ident, from);
	}
	if (r)
		finish(r, tp, ident, now);
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

struct blk_mq_hw_ctx {
	unsigned int queue_num;
} __attribute__((preserve_access_index));

struct bio;

struct request {
	struct request_queue *q;
	struct blk_mq_hw_ctx *mq_hctx;
	unsigned int cmd_flags;
	int tag;
	int internal_tag;
	unsigned int __data_len;
	__u64 __sector;
	struct bio *bio;
} __attribute__((preserve_access_index));

struct block_device {
	struct gendisk *bd_disk;
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

// disk_dev is the device number the block tracepoints print: the whole
// disk's, for a partition's bios too.
static __always_inline __u32 disk_dev(struct gendisk *disk)
{
	return disk ? ((__u32)disk->major << 20) | (__u32)disk->first_minor : 0;
}

// tp_btf arguments are trusted kernel pointers: plain member accesses
// (relocated through CO-RE, loaded as probe-protected memory reads) cost
// less than helper calls. The sector comes first: a request sampling
// leaves out costs that one load.
static __always_inline int from_bio(int tp, struct bio *bio)
{
	__u64 sector = bio->bi_iter.bi_sector;
	if (!keep(sector))
		return 0;
	struct block_device *bdev = bio->bi_bdev;
	struct facts f = {
		.sector = sector,
		.dev = bdev ? disk_dev(bdev->bd_disk) : 0,
	};
	// Other devices' requests (a loop device's backing disk, say) leave
	// here, without a map lookup.
	if (filter_dev && f.dev != filter_dev)
		return 0;
	f.bytes = bio->bi_iter.bi_size;
	f.op = op_of_flags(bio->bi_opf);
	return bio_event(tp, &f);
}

// from_rq indexes the in-flight table by the request's tag (the
// scheduler's tag where the queue has a scheduler, which the request keeps
// from insertion to completion) and hardware queue, spread per device, and
// tells requests apart by their address.
static __always_inline int from_rq(int tp, struct request *rq, __u32 bytes)
{
	__u64 sector = rq->__sector;
	if (!keep(sector))
		return 0;
	struct facts f = {
		.sector = sector,
		.dev = disk_dev(rq->q->disk),
	};
	if (filter_dev && f.dev != filter_dev)
		return 0;
	f.bytes = bytes;
	f.op = op_of_flags(rq->cmd_flags);
	int tag = rq->internal_tag;
	if (tag < 0)
		tag = rq->tag;
	struct blk_mq_hw_ctx *hctx = rq->mq_hctx;
	__u32 queue = hctx ? hctx->queue_num : 0;
	__u32 stride = slot_stride;
	if (stride && (__u32)tag < stride)
		return rq_event(tp, &f, (__u64)rq, queue * stride + (__u32)tag, 1);
	return rq_event(tp, &f, (__u64)rq, (__u32)tag + queue * 1031 + mix32(f.dev), 0);
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
	__u64 sector = 0;
	__u16 off = layouts[tp].sector;
	bpf_probe_read_kernel(&sector, sizeof(sector), ctx + off);
	if (!keep(sector))
		return 0;
	struct facts f = {};
	read_block(ctx, &layouts[tp], &f);
	if (filter_dev && f.dev != filter_dev)
		return 0;
	if (tp <= TP_GETRQ)
		return bio_event(tp, &f);
	return rq_event(tp, &f, 0, mix32(f.sector ^ ((__u64)f.dev << 40)), 0);
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
