/* A DNS cache answering from precomputed responses (Table 2 of the
 * throughput-guarantee paper): a standard query (RFC 1035) for an A
 * record to UDP port 53 is answered from an array map indexed by a hash of
 * the question's name. An entry holds the name as it appears in the
 * question and the precomputed records of the response (answers, and an
 * EDNS OPT record where the response carries one), which are copied after
 * the question word by word; the query becomes the response in place
 * (addresses and ports swapped, the header's flags and counts set) and
 * goes back out. Anything else goes to the host's resolver.
 *
 * Like the paper's program it has no loop: the name's labels are walked
 * by an unrolled sequence of at most MAX_LABELS steps, and the name is
 * hashed and compared as four eight-byte words. Its cost is dominated by
 * the reads of the entry in DRAM.
 *
 * Built as dnsbucket.o with DNS_BUCKET set, it serves answers as a cache
 * does: the name's hash picks a bucket (an array map of names and record
 * numbers), the stored name is compared, and only then is the record read
 * from a second array map; its answers are copied from DRAM into the
 * packet in one fixed-size copy, which the NFP JIT turns into a single
 * DRAM read (nfp_bpf_opt_ldst_gather). */
#include "common.h"

#define DNS_PORT 53
#define MAX_NAME 32   /* bytes of the encoded name, its final zero included */
#define MAX_LABELS 8  /* labels of the names the cache keeps */
#define MAX_RESP 48   /* bytes of precomputed records: two A answers and an OPT record */
#define ENTRIES 4096

struct dnshdr {
	__be16 id, flags, qdcount, ancount, nscount, arcount;
};

struct entry {
	__u64 name[MAX_NAME / 8]; /* the encoded name, zero-padded */
	__u32 name_len;           /* its length, final zero included; 0: empty */
	__u16 resp_len;           /* bytes of resp, at most MAX_RESP */
	__be16 ancount;           /* answer records in resp */
	__be16 arcount;           /* additional records (OPT) in resp */
	__u16 pad[3];
	__u64 resp[MAX_RESP / 8]; /* the records as they go on the wire */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ENTRIES);
	__type(key, __u32);
	__type(value, struct entry);
} cache SEC(".maps");

#ifdef DNS_BUCKET
#define DNS_PROG dnsbucket
struct bucket {
	__u64 name[MAX_NAME / 8]; /* the encoded name, zero-padded */
	__u32 name_len;           /* its length, final zero included; 0: empty */
	__u32 record;             /* its record's number in records */
};

struct record {
	__u16 resp_len; /* bytes of resp, at most MAX_RESP */
	__be16 ancount; /* answer records in resp */
	__be16 arcount; /* additional records (OPT) in resp */
	__u16 pad;
	__u64 resp[MAX_RESP / 8]; /* the records as they go on the wire */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ENTRIES);
	__type(key, __u32);
	__type(value, struct bucket);
} buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ENTRIES);
	__type(key, __u32);
	__type(value, struct record);
} records SEC(".maps");
#else
#define DNS_PROG dnscache
#endif

static __always_inline void swap16(__be16 *a, __be16 *b)
{
	__be16 t = *a;
	*a = *b;
	*b = t;
}

SEC("xdp")
int DNS_PROG(struct xdp_md *ctx)
{
	void *data = PKT_DATA(ctx), *data_end = PKT_END(ctx);
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct dnshdr *dns = (void *)(udp + 1);
	__u8 *name = (void *)(dns + 1);
	if ((void *)(name + MAX_NAME + 4) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if (udp->dest != bpf_htons(DNS_PORT))
		return XDP_PASS;
	/* A standard query (QR 0, opcode 0) with one question and nothing else. */
	if ((dns->flags & bpf_htons(0xf800)) || dns->qdcount != bpf_htons(1) ||
	    dns->ancount || dns->nscount || dns->arcount)
		return XDP_PASS;

	/* The name's length: label by label to the final zero. */
	__u32 len = 0;
#pragma unroll
	for (int i = 0; i < MAX_LABELS; i++) {
		__u8 *p = name + (len & (MAX_NAME - 1));
		if ((void *)(p + 1) > data_end) /* for the verifier: a variable offset */
			return XDP_PASS;
		__u8 l = *p;
		if (l == 0) {
			len++;
			goto found;
		}
		if (l > 63)
			return XDP_PASS; /* a compression pointer or a reserved type */
		len += l + 1;
		if (len >= MAX_NAME)
			return XDP_PASS; /* longer than the cache's names */
	}
	return XDP_PASS; /* more labels than the cache's names */
found:;
	__u8 *q = name + len; /* QTYPE, QCLASS */
	if ((void *)(q + 4) > data_end)
		return XDP_PASS;
	if (q[0] != 0 || q[1] != 1 || q[2] != 0 || q[3] != 1)
		return XDP_PASS; /* not A, IN */

	/* The name as eight-byte words, zero beyond its end, and their hash. */
	__u64 *w = (void *)name, x[MAX_NAME / 8];
	__u32 h = 2166136261u;
#pragma unroll
	for (int i = 0; i < MAX_NAME / 8; i++) {
		int valid = (int)len - i * 8;
		x[i] = w[i];
		if (valid <= 0)
			x[i] = 0;
		else if (valid < 8)
			x[i] &= (1ull << (valid * 8)) - 1; /* little-endian: the first bytes */
		h = (h ^ (__u32)x[i] ^ (__u32)(x[i] >> 32)) * 16777619u;
	}
	__u32 key = h % ENTRIES;
#ifdef DNS_BUCKET
	struct bucket *b = bpf_map_lookup_elem(&buckets, &key);
	if (!b || b->name_len != len)
		return XDP_PASS;
#pragma unroll
	for (int i = 0; i < MAX_NAME / 8; i++)
		if (x[i] != b->name[i])
			return XDP_PASS;
	__u32 rec = b->record;
	struct record *e = bpf_map_lookup_elem(&records, &rec);
	if (!e)
		return XDP_PASS;
	__u32 resp = e->resp_len;
	if (resp > MAX_RESP)
		return XDP_PASS;
	int grow = MAX_RESP; /* the whole record slot; bytes past resp are Ethernet padding */
#else
	struct entry *e = bpf_map_lookup_elem(&cache, &key);
	if (!e || e->name_len != len)
		return XDP_PASS;
#pragma unroll
	for (int i = 0; i < MAX_NAME / 8; i++)
		if (x[i] != e->name[i])
			return XDP_PASS;

	/* The response: the precomputed records after the question, in whole
	 * words (bytes past the records are Ethernet padding beyond the IP
	 * length). */
	__u32 resp = e->resp_len;
	if (resp > MAX_RESP)
		return XDP_PASS;
	int grow = (resp + 7) & ~7;
#endif
	int tail = (void *)(q + 4) - data_end; /* bytes after the question: none, or drop them */
	if (bpf_xdp_adjust_tail(ctx, tail + grow))
		return XDP_PASS;
	data = PKT_DATA(ctx);
	data_end = PKT_END(ctx);
	eth = data;
	ip = (void *)(eth + 1);
	udp = (void *)(ip + 1);
	dns = (void *)(udp + 1);
	if ((void *)(dns + 1) + MAX_NAME + 4 > data_end)
		return XDP_PASS;
	__u64 *a = (void *)(dns + 1) + (len & (MAX_NAME - 1 | MAX_NAME)) + 4;
#ifdef DNS_BUCKET
	if ((void *)(a + MAX_RESP / 8) > data_end)
		return XDP_PASS;
	__builtin_memcpy(a, e->resp, MAX_RESP);
#else
#pragma unroll
	for (int i = 0; i < MAX_RESP / 8; i++) {
		if (i * 8 < grow) {
			if ((void *)(a + i + 1) > data_end)
				return XDP_PASS;
			a[i] = e->resp[i];
		}
	}
#endif
	__be16 ancount = e->ancount, arcount = e->arcount;

	__u8 mac[ETH_ALEN];
	__builtin_memcpy(mac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac, ETH_ALEN);
	__be32 addr = ip->saddr;
	ip->saddr = ip->daddr;
	ip->daddr = addr;
	swap16(&udp->source, &udp->dest);

	/* Lengths grow by the records; the IP checksum follows (RFC 1624). */
	__u16 old = bpf_ntohs(ip->tot_len), new = old + tail + resp;
	ip->tot_len = bpf_htons(new);
	__u32 sum = (__u16)~bpf_ntohs(ip->check) + (__u16)~old + new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip->check = bpf_htons(~sum);
	udp->len = bpf_htons(bpf_ntohs(udp->len) + tail + resp);
	udp->check = 0;
	dns->flags = bpf_htons(0x8580) | (dns->flags & bpf_htons(0x0100)); /* QR, AA, RA; RD kept */
	dns->ancount = ancount;
	dns->arcount = arcount;
	return XDP_TX;
}
