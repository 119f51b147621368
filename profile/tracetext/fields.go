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
