package tracetext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/profile/event"
)

// parseBlock reads the fields of the block_* events:
//
//	bio_queue, getrq:   7,0 R 246728 + 8 [fio]
//	rq_insert, issue:   7,0 R 4096 () 452712 + 8 be,0,4 [fio]
//	rq_complete:        7,0 R () 227664 + 8 be,0,4 [0]
//
// (the ioprio column is new in 6.x). The size is bytes when printed, else
// nr_sector*512.
func parseBlock(s string, ev *event.Event) error {
	f := strings.Fields(s)
	if len(f) < 5 {
		return fmt.Errorf("too few block fields in %q", s)
	}
	dev, err := event.ParseDev(f[0])
	if err != nil {
		return err
	}
	ev.Dev = dev
	ev.Op = event.OpFromRWBS(f[1])
	plus := -1
	for i := 3; i+1 < len(f); i++ {
		if f[i] == "+" {
			plus = i
			break
		}
	}
	if plus < 0 {
		return fmt.Errorf("no 'sector + count' in %q", s)
	}
	sector, err1 := strconv.ParseUint(f[plus-1], 10, 64)
	nr, err2 := strconv.ParseUint(f[plus+1], 10, 32)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("bad sector or count in %q", s)
	}
	ev.Sector = sector
	ev.Bytes = uint32(nr * 512)
	if plus >= 4 && strings.HasPrefix(f[3], "(") {
		if b, err := strconv.ParseUint(f[2], 10, 32); err == nil && b > 0 {
			ev.Bytes = uint32(b)
		}
	}
	return nil
}

// parseNVMe reads qid= and cmdid= (nvme_setup_cmd, nvme_complete_rq,
// nvmet_req_init, nvmet_req_complete) and the opcode when printed.
func parseNVMe(s string, ev *event.Event) error {
	q, ok1 := intField(s, "qid=")
	c, ok2 := intField(s, "cmdid=")
	if !ok1 || !ok2 || q > 0xffff || c > 0xffff {
		return fmt.Errorf("bad qid or cmdid in %q", s)
	}
	ev.QID, ev.CID = uint16(q), uint16(c)
	switch {
	case strings.Contains(s, "cmd=(nvme_cmd_read"):
		ev.Op = event.OpRead
	case strings.Contains(s, "cmd=(nvme_cmd_write"):
		ev.Op = event.OpWrite
	}
	return nil
}

// parseKprobe reads the fetched arguments of a kprobe event, as ftrace
// prints them after the probe address:
//
//	(nvmet_bdev_execute_rw+0x0/0x3a0 [nvmet]) qid=2 cid=25
//
// qid, cid, dev and sector set the event's key fields (decimal, or hex
// with 0x for x-types); other arguments are ignored. Without qid and cid
// or dev and sector the event cannot be correlated: an error.
func parseKprobe(s string, ev *event.Event) error {
	if strings.HasPrefix(s, "(") {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return fmt.Errorf("unclosed probe address in %q", s)
		}
		s = s[end+1:]
	}
	var have [4]bool
	for _, f := range strings.Fields(s) {
		name, val, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(val, 0, 64)
		switch name {
		case "qid", "cid":
			if err != nil || v > 0xffff {
				return fmt.Errorf("bad %s in %q", name, s)
			}
			if name == "qid" {
				ev.QID, have[0] = uint16(v), true
			} else {
				ev.CID, have[1] = uint16(v), true
			}
		case "dev":
			if err != nil || v > 0xffffffff {
				return fmt.Errorf("bad dev in %q", s)
			}
			ev.Dev, have[2] = event.Dev(v), true
		case "sector":
			if err != nil {
				return fmt.Errorf("bad sector in %q", s)
			}
			ev.Sector, have[3] = v, true
		}
	}
	if !(have[0] && have[1]) && !(have[2] && have[3]) {
		return fmt.Errorf("kprobe without qid and cid or dev and sector arguments in %q", s)
	}
	return nil
}

func intField(s, name string) (uint64, bool) {
	i := strings.Index(s, name)
	if i < 0 {
		return 0, false
	}
	v := s[i+len(name):]
	end := strings.IndexAny(v, ", )")
	if end >= 0 {
		v = v[:end]
	}
	n, err := strconv.ParseUint(v, 10, 32)
	return n, err == nil
}
