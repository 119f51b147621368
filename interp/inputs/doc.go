// Package inputs generates inputs for XDP programs: packets of many shapes
// built from gopacket layers (Ethernet, VLAN, IPv4/IPv6, TCP/UDP/ICMP,
// truncated and random ones) and starting map contents whose keys those
// packets hit. calibrate times the paths of real programs on them, and
// the tests of interp, testrun, symex and perfiface run programs on them.
package inputs
