// Package interptest generates inputs for tests of the interpreter and of
// kernel runs: packets built from gopacket layers (Ethernet, VLAN,
// IPv4/IPv6, TCP/UDP/ICMP, truncated and random ones) and starting map
// contents whose keys those packets hit.
package interptest
