// Package pcapng writes the packet captures of a recording as pcapng with
// gopacket's pcapgo writer: one section per file, growing by one write per
// drain period; one interface per capture interface and direction
// ("<name>_in", "<name>_out", link type Ethernet), declared when first
// seen; Enhanced Packet Blocks with nanosecond timestamps and the direction
// flag. Each period is written with a single Write, so a file cut short by
// a crash ends after a whole period. FORMAT.md beside this file has the
// details.
package pcapng
