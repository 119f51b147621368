// Package replay runs a packet capture through an XDP program in the
// interpreter, packet after packet on one persistent map state, and hands
// each packet's run to a callback: what the program executed (instructions,
// memory accesses, helper calls with their PCVs), and optionally the
// source-to-sink path of the loop-free graph it followed and the map state
// it met. It is the input side of deployment-specific performance
// interfaces; dist turns per-packet costs into percentiles and CDF plots
// and rootcause ranks what explains the slow packets.
//
// Nothing here needs a kernel; the package classtime times packet classes
// with BPF_PROG_TEST_RUN.
//
// Memory stays bounded by one packet: results are handed to the callback
// and not kept. The capture is pcap or pcapng (gzip allowed) with Ethernet
// frames; anything else is an input error naming the file.
package replay
