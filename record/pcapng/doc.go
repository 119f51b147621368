// Package pcapng writes the packet captures of a recording as pcapng
// sections with gopacket's pcapgo writer: one section per drain period,
// one interface per capture interface and direction ("<name>_in",
// "<name>_out", link type Ethernet), and Enhanced Packet Blocks with
// nanosecond timestamps and the direction flag. Each section is written
// with a single Write, so a file cut short by a crash ends after a whole
// section. FORMAT.md beside this file has the details.
package pcapng
