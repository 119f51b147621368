// SPDX-License-Identifier: MIT
// NVMe over TCP request records for dpperf profile: the nvme:* and nvmet:*
// tracepoints, block_rq_issue and block_rq_complete, and one kprobe (the
// path's, e.g. nvmet_bdev_execute_rw) whose key fields are fetched from
// the function's arguments as the path file says.
//
// Events carry one of two keys: (queue id, command id) for the NVMe
// events, (device, sector) for the block events. The first event of the
// path starts a record under its key (after 1-of-N sampling); an event
// keyed the other way finds the record through an alias table, or, if
// the path says it joins an event, takes the record that event last
// touched on the same CPU (nvme_setup_cmd and block_rq_issue fire back to
// back in nvme_tcp_queue_rq) and adds the alias. The last event checks
// the device, type and size filter and sends the whole record through
// the ring buffer (one entry per request; reservations that fail are
// counted). Host and target in one kernel (nvmet-tcp on 127.0.0.1) share
// the record: the command id travels in the capsule.
//
// The programs read the formatted trace records at offsets user space
// takes from the tracefs format files and sets as read-only constants
// before loading (the nvme modules' types need no BTF or CO-RE).
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "common.h"

enum {
	TP_SETUP_CMD,      // nvme:nvme_setup_cmd
	TP_COMPLETE_RQ,    // nvme:nvme_complete_rq
	TP_REQ_INIT,       // nvmet:nvmet_req_init
	TP_REQ_COMPLETE,   // nvmet:nvmet_req_complete
	TP_RQ_ISSUE,       // block:block_rq_issue
	TP_RQ_COMPLETE,    // block:block_rq_complete
	TP_KPROBE,         // the path's kprobe
	TP_MAX
};

// One finished request: the time it passed each event (0: not seen).
struct nvme_event {
	__u64 ts[TP_MAX];
	__u64 sector;
	__u32 dev;
	__u32 bytes;
	__u16 qid;
	__u16 cid;
	__u16 cpu;
	__u8 op;
	__u8 pad;
};

// Used as the type of a dummy global so bpf2go emits a Go type for it.
struct nvme_event *unused_nvme_event __attribute__((unused));

#define SPACE_BLOCK 0
#define SPACE_NVME 1

// How the kprobe fetches one key field, kprobe_events style: the
// argument register (offset in struct pt_regs), then derefs[i] is added
// and 8 bytes are loaded, except that the last load has size bytes:
// "+24(+16($arg1)):u16" is arg 1, derefs {16, 24}, size 2.
#define MAX_DEREF 4
struct fetch {
	__u16 reg;   // offset of the argument register in struct pt_regs
	__u8 n;      // number of derefs (0: the register itself)
	__u8 size;   // 1, 2, 4 or 8
	__s32 off[MAX_DEREF];
};

struct key {
	__u64 a;     // sector, or qid << 16 | cid
	__u32 b;     // dev, or 0
	__u32 space;
};

volatile const struct layout layouts[TP_MAX];
volatile const __u8 kinds[TP_MAX];  // path event index per event, NO_KIND if unused
volatile const __u8 spaces[TP_MAX]; // SPACE_BLOCK or SPACE_NVME
volatile const __u8 joins[TP_MAX];  // 1: joins join_kind's record on this CPU
volatile const __u8 join_kind = NO_KIND;
volatile const struct fetch kprobe_qid, kprobe_cid; // SPACE_NVME kprobe
volatile const struct fetch kprobe_dev, kprobe_sector; // SPACE_BLOCK kprobe

// Records in flight by the first event's key. NVMe/TCP requests take tens
// of microseconds, so a hash map costs little; LRU maps drop records that
// never finish (admin commands, other controllers' requests).
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct key);
	__type(value, struct nvme_event);
} inflight SEC(".maps");

// The other key of a record in flight -> its key in inflight.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct key);
	__type(value, struct key);
} aliases SEC(".maps");

// Per CPU: the record join_kind last touched, until an event joins it.
struct joinable {
	struct key k;
	__u64 valid;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct joinable);
} joinslot SEC(".maps");

static __always_inline void key_of(struct key *k, __u8 space, struct facts *f)
{
	if (space == SPACE_NVME) {
		k->a = (__u64)f->qid << 16 | f->cid;
		k->b = 0;
	} else {
		k->a = f->sector;
		k->b = f->dev;
	}
	k->space = space;
}

static __always_inline int record(int tp, struct facts *f)
{
	if (tp < 0 || tp >= TP_MAX)
		return 0;
	__u8 kind = kinds[tp];
	if (kind == NO_KIND)
		return 0;
	__u8 space = spaces[tp];
	// Other devices' block requests (the target's backend, say) leave
	// at once.
	if (space == SPACE_BLOCK && filter_dev && f->dev != filter_dev)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct key k = {};
	key_of(&k, space, f);
	__u32 zero = 0;

	if (kind == first_kind) {
		if (!sampled())
			return 0;
		struct nvme_event r = {};
		r.ts[tp] = now;
		r.sector = f->sector;
		r.dev = f->dev;
		r.bytes = f->bytes;
		r.qid = f->qid;
		r.cid = f->cid;
		r.op = f->op;
		r.cpu = bpf_get_smp_processor_id();
		if (bpf_map_update_elem(&inflight, &k, &r, BPF_NOEXIST) != 0) {
			count(2); // the key started again before its record finished
			bpf_map_update_elem(&inflight, &k, &r, BPF_ANY);
		}
		if (kind == join_kind) {
			struct joinable *j = bpf_map_lookup_elem(&joinslot, &zero);
			if (j) {
				j->k = k;
				j->valid = 1;
			}
		}
		return 0;
	}

	// Find the record: under its own key, through an alias, or by joining.
	struct key pk = k;
	struct nvme_event *r = 0;
	r = bpf_map_lookup_elem(&inflight, &k);
	if (!r) {
		struct key *a = bpf_map_lookup_elem(&aliases, &k);
		if (a) {
			pk = *a;
			r = bpf_map_lookup_elem(&inflight, &pk);
		}
	}
	if (!r && joins[tp]) {
		struct joinable *j = bpf_map_lookup_elem(&joinslot, &zero);
		if (j && j->valid) {
			j->valid = 0; // one join per passage of the joined event
			pk = j->k;
			r = bpf_map_lookup_elem(&inflight, &pk);
			if (r && pk.space != space)
				bpf_map_update_elem(&aliases, &k, &pk, BPF_ANY);
		}
	}
	if (!r)
		return 0;
	r->ts[tp] = now;
	if (!r->bytes)
		r->bytes = f->bytes;
	if (r->op == OP_OTHER)
		r->op = f->op;
	if (space == SPACE_BLOCK && !r->dev) {
		r->dev = f->dev;
		r->sector = f->sector;
	}
	if (space == SPACE_NVME && pk.space != SPACE_NVME && !r->qid && !r->cid) {
		r->qid = f->qid;
		r->cid = f->cid;
	}
	if (kind == join_kind) {
		struct joinable *j = bpf_map_lookup_elem(&joinslot, &zero);
		if (j) {
			j->k = pk;
			j->valid = 1;
		}
	}
	if (kind != last_kind)
		return 0;

	// Finished: filter, send, forget.
	if ((filter_dev && r->dev != filter_dev) || !wanted(r->op, r->bytes))
		count(3);
	else
		send(r, sizeof(*r), now);
	struct facts rf = {.sector = r->sector, .dev = r->dev, .qid = r->qid, .cid = r->cid};
	struct key other = {};
	key_of(&other, pk.space == SPACE_NVME ? SPACE_BLOCK : SPACE_NVME, &rf);
	bpf_map_delete_elem(&aliases, &other);
	bpf_map_delete_elem(&inflight, &pk);
	return 0;
}

// ---- tracepoint programs: formatted trace records ----

// NVMe I/O command set: 0x01 write, 0x02 read; queue 0 is the admin queue.
static __always_inline __u8 op_of_opcode(__u16 qid, __u8 opcode)
{
	if (qid == 0)
		return OP_OTHER;
	if (opcode == 0x01)
		return OP_WRITE;
	if (opcode == 0x02)
		return OP_READ;
	return OP_OTHER;
}

static __always_inline int handle(void *ctx, int tp)
{
	if (tp < 0 || tp >= TP_MAX || kinds[tp] == NO_KIND)
		return 0;
	volatile const struct layout *l = &layouts[tp];
	struct facts f = {};
	if (spaces[tp] == SPACE_BLOCK) {
		read_block(ctx, l, &f);
	} else {
		// qid and cid are int or u16 fields: the low 16 bits, little
		// endian.
		bpf_probe_read_kernel(&f.qid, sizeof(f.qid), ctx + l->qid);
		bpf_probe_read_kernel(&f.cid, sizeof(f.cid), ctx + l->cid);
		__u16 off = l->opcode;
		if (off != NO_FIELD) {
			__u8 opcode = 0;
			bpf_probe_read_kernel(&opcode, sizeof(opcode), ctx + off);
			f.op = op_of_opcode(f.qid, opcode);
		}
	}
	return record(tp, &f);
}

SEC("tracepoint/nvme/nvme_setup_cmd")
int setup_cmd(void *ctx) { return handle(ctx, TP_SETUP_CMD); }

SEC("tracepoint/nvme/nvme_complete_rq")
int complete_rq(void *ctx) { return handle(ctx, TP_COMPLETE_RQ); }

SEC("tracepoint/nvmet/nvmet_req_init")
int req_init(void *ctx) { return handle(ctx, TP_REQ_INIT); }

SEC("tracepoint/nvmet/nvmet_req_complete")
int req_complete(void *ctx) { return handle(ctx, TP_REQ_COMPLETE); }

SEC("tracepoint/block/block_rq_issue")
int nv_rq_issue(void *ctx) { return handle(ctx, TP_RQ_ISSUE); }

SEC("tracepoint/block/block_rq_complete")
int nv_rq_complete(void *ctx) { return handle(ctx, TP_RQ_COMPLETE); }

// ---- kprobe: key fields fetched from the function's arguments ----

// fetch follows fd. Its fields are read one by one: clang folds a copy of
// a whole volatile const struct to its (zero) initializer.
static __always_inline __u64 fetch(void *ctx, volatile const struct fetch *fd)
{
	__u8 n = fd->n, size = fd->size;
	__u64 v = 0;
	bpf_probe_read_kernel(&v, sizeof(v), ctx + fd->reg);
	for (int i = 0; i < MAX_DEREF; i++) {
		if (i >= n)
			break;
		__u64 addr = v + (__s64)fd->off[i];
		v = 0;
		if (i + 1 < n) {
			bpf_probe_read_kernel(&v, sizeof(v), (void *)addr);
			continue;
		}
		switch (size) {
		case 1: bpf_probe_read_kernel(&v, 1, (void *)addr); break;
		case 2: bpf_probe_read_kernel(&v, 2, (void *)addr); break;
		case 4: bpf_probe_read_kernel(&v, 4, (void *)addr); break;
		default: bpf_probe_read_kernel(&v, 8, (void *)addr); break;
		}
	}
	if (n == 0 && size < 8)
		v &= (1ULL << (size * 8)) - 1;
	return v;
}

SEC("kprobe")
int path_kprobe(void *ctx)
{
	if (kinds[TP_KPROBE] == NO_KIND)
		return 0;
	struct facts f = {};
	if (spaces[TP_KPROBE] == SPACE_NVME) {
		f.qid = fetch(ctx, &kprobe_qid);
		f.cid = fetch(ctx, &kprobe_cid);
	} else {
		f.dev = fetch(ctx, &kprobe_dev);
		f.sector = fetch(ctx, &kprobe_sector);
	}
	return record(TP_KPROBE, &f);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
