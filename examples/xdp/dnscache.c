/* A DNS cache answering from precomputed responses (Table 2 of the
 * throughput-guarantee paper): a standard query (RFC 1035) for an A
 * record to UDP port 53 is answered from an array map indexed by a hash of
 * the question's name. An entry holds the name as it appears in the
 * question and the answer record after it; when the names match, the
 * query becomes the response in place (addresses and ports swapped, the
 * header's flags and counts set, the answer appended) and goes back out.
 * Anything else goes to the host's resolver. */
#include "common.h"

#define DNS_PORT 53
#define MAX_NAME 32 /* bytes of the encoded name, its final zero included */
#define ENTRIES 4096

struct dnshdr {
	__be16 id, flags, qdcount, ancount, nscount, arcount;
};

/* An answer record whose name points back to the question (offset 12). */
struct answer {
	__be16 name, type, class;
	__be16 ttl[2];
	__be16 rdlength;
	__be32 addr;
};

struct entry {
	__u64 name[MAX_NAME / 8]; /* the encoded name, zero-padded */
	__u32 name_len;           /* its length, final zero included; 0: empty */
	__u32 pad;
	struct answer ans;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ENTRIES);
	__type(key, __u32);
	__type(value, struct entry);
} cache SEC(".maps");

static __always_inline void swap16(__be16 *a, __be16 *b)
{
	__be16 t = *a;
	*a = *b;
	*b = t;
}

SEC("xdp")
int dnscache(struct xdp_md *ctx)
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

	/* The name's length and hash (FNV-1a), label bytes and lengths alike. */
	__u32 h = 2166136261u, len = 0;
	for (int i = 0; i < MAX_NAME; i++) {
		__u8 c = name[i];
		h = (h ^ c) * 16777619u;
		if (c == 0) {
			len = i + 1;
			break;
		}
	}
	if (len == 0)
		return XDP_PASS; /* longer than the cache's names */
	__u8 *q = name + len; /* QTYPE, QCLASS */
	if ((void *)(q + 4) > data_end)
		return XDP_PASS;
	if (q[0] != 0 || q[1] != 1 || q[2] != 0 || q[3] != 1)
		return XDP_PASS; /* not A, IN */

	__u32 key = h % ENTRIES;
	struct entry *e = bpf_map_lookup_elem(&cache, &key);
	if (!e || e->name_len != len)
		return XDP_PASS;
	/* The name as eight-byte words, zero beyond its end. */
	__u64 *w = (void *)name;
#pragma unroll
	for (int i = 0; i < MAX_NAME / 8; i++) {
		__u64 x = w[i];
		int valid = (int)len - i * 8;
		if (valid <= 0)
			x = 0;
		else if (valid < 8)
			x &= (1ull << (valid * 8)) - 1; /* little-endian: the first bytes */
		if (x != e->name[i])
			return XDP_PASS;
	}

	/* The response: the answer after the question. */
	int grow = sizeof(struct answer);
	int tail = (void *)(q + 4) - data_end; /* bytes after the question: none, or drop them */
	if (bpf_xdp_adjust_tail(ctx, tail + grow))
		return XDP_PASS;
	data = PKT_DATA(ctx);
	data_end = PKT_END(ctx);
	eth = data;
	ip = (void *)(eth + 1);
	udp = (void *)(ip + 1);
	dns = (void *)(udp + 1);
	if ((void *)(dns + 1) + MAX_NAME + 4 + sizeof(struct answer) > data_end)
		return XDP_PASS;
	struct answer *a = (void *)(dns + 1) + (len & (MAX_NAME - 1 | MAX_NAME)) + 4;
	if ((void *)(a + 1) > data_end)
		return XDP_PASS;
	__builtin_memcpy(a, &e->ans, sizeof(*a));

	__u8 mac[ETH_ALEN];
	__builtin_memcpy(mac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac, ETH_ALEN);
	__be32 addr = ip->saddr;
	ip->saddr = ip->daddr;
	ip->daddr = addr;
	swap16(&udp->source, &udp->dest);

	/* Lengths grow by the answer; the IP checksum follows (RFC 1624). */
	__u16 old = bpf_ntohs(ip->tot_len), new = old + tail + grow;
	ip->tot_len = bpf_htons(new);
	__u32 sum = (__u16)~bpf_ntohs(ip->check) + (__u16)~old + new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip->check = bpf_htons(~sum);
	udp->len = bpf_htons(bpf_ntohs(udp->len) + tail + grow);
	udp->check = 0;
	dns->flags = bpf_htons(0x8580) | (dns->flags & bpf_htons(0x0100)); /* QR, AA, RA; RD kept */
	dns->ancount = bpf_htons(1);
	return XDP_TX;
}
