// Package spec reads and validates dpperf model specifications: the
// hardware of a SmartNIC or I/O device (ingress/egress, IPs, interface,
// memory, IP-to-IP links), the execution graphs of the software that runs on
// it and the traffic offered to it. The format is documented in
// docs/model.md; every error names the file, the line and the field.
//
// A Spec holds quantities in base units (bytes, bytes per second, seconds)
// and says nothing about how they are evaluated; see model/flow for that.
package spec
