// Package ctf writes and reads the Common Trace Format (CTF 1.8) traces that
// dpperf records: a plain-text TSDL metadata file and binary stream files
// made of packets, each packet holding the events of one drain period of one
// thread. FORMAT.md beside this file describes the layout byte by byte.
//
// The writer side (Metadata, PacketWriter) is used by the recorder; the
// reader side (ParseMetadata, Reader) by the analyses. Both only know the
// subset of TSDL that dpperf emits: byte-aligned little-endian integers,
// NUL-terminated strings and one stream class.
package ctf
