/* Shared includes and helpers for the example XDP programs. */
#ifndef DPPERF_EXAMPLES_COMMON_H
#define DPPERF_EXAMPLES_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* The packet bytes [data, data_end) of an XDP context. */
#define PKT_DATA(ctx) ((void *)(long)(ctx)->data)
#define PKT_END(ctx) ((void *)(long)(ctx)->data_end)

char LICENSE[] SEC("license") = "GPL";

#endif
