// Package event answers "what did one request do?": it defines the compact
// timestamped event that every collector (BPF ring buffer, tracefs text,
// trace files) produces and the analyzer consumes, and the Record of one
// whole request, which the BPF collector produces and the analyzer also
// builds from events. It has no dependencies beyond the standard library.
package event

import (
	"fmt"
	"strconv"
	"strings"
)

// Op is the direction of an I/O request.
type Op uint8

// Operations. OpOther covers flushes, discards and anything that is neither
// a read nor a write.
const (
	OpOther Op = iota
	OpRead
	OpWrite
)

func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	}
	return "other"
}

// ParseOp parses "read", "write" or "other".
func ParseOp(s string) (Op, error) {
	switch strings.ToLower(s) {
	case "read", "r":
		return OpRead, nil
	case "write", "w":
		return OpWrite, nil
	case "other":
		return OpOther, nil
	}
	return OpOther, fmt.Errorf("unknown I/O type %q (want read, write or other)", s)
}

// OpFromRWBS derives the operation from the block layer's rwbs string
// ("R", "WS", "FWS", "RA" ...): the first R or W decides; D (discard) and
// flush-only requests are OpOther.
func OpFromRWBS(rwbs string) Op {
	for i := 0; i < len(rwbs); i++ {
		switch rwbs[i] {
		case 'R':
			return OpRead
		case 'W':
			return OpWrite
		case 'D', 'N':
			return OpOther
		}
	}
	return OpOther
}

// Dev is a block device number in the kernel's internal encoding
// (major<<20 | minor), as tracepoints record it.
type Dev uint32

// MakeDev builds a Dev from major and minor numbers.
func MakeDev(major, minor uint32) Dev { return Dev(major<<20 | minor&(1<<20-1)) }

// Major returns the major number.
func (d Dev) Major() uint32 { return uint32(d) >> 20 }

// Minor returns the minor number.
func (d Dev) Minor() uint32 { return uint32(d) & (1<<20 - 1) }

func (d Dev) String() string { return fmt.Sprintf("%d,%d", d.Major(), d.Minor()) }

// ParseDev parses "major,minor" or "major:minor".
func ParseDev(s string) (Dev, error) {
	i := strings.IndexAny(s, ",:")
	if i < 0 {
		return 0, fmt.Errorf("bad device %q (want major,minor)", s)
	}
	maj, err1 := strconv.ParseUint(s[:i], 10, 12)
	mnr, err2 := strconv.ParseUint(s[i+1:], 10, 20)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad device %q (want major,minor)", s)
	}
	return MakeDev(uint32(maj), uint32(mnr)), nil
}

// Event is one observation of a path event for one request. Kind indexes
// the events of the path the collector was configured with. Fields a
// tracepoint does not carry are zero.
type Event struct {
	TS     int64  // nanoseconds, any monotonic clock shared by one trace
	Sector uint64 // first sector (block events)
	Dev    Dev    // block device (block events)
	Bytes  uint32 // request size in bytes, 0 if unknown
	QID    uint16 // NVMe queue id (nvme events)
	CID    uint16 // NVMe command id (nvme events)
	CPU    uint16
	Kind   uint8
	Op     Op
}
