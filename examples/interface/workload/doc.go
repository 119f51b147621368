// Package workload generates a deterministic mixed packet trace for
// deployment-specific performance interfaces: IPv4 and IPv6 TCP flows (a
// SYN, established packets, a FIN), TCP segments of flows never opened,
// repeated UDP flows, ICMP and ICMPv6 echoes, ARP, and malformed frames
// (runts, truncated headers, an IPv4 header length below five words). The
// same seed gives the same bytes and timestamps, so a pcap written from it
// is reproducible and tests can compare against the committed one
// (examples/interface/mixed.pcap; regenerate with
// `go test ./examples/interface/workload -update`).
package workload
