package tracetext

import (
	"errors"
	"io"
	"testing"
)

// The nvme-tcp path fetches qid and cid from nvmet_bdev_execute_rw's
// argument at offsets read from the Linux 6.1 source. These traces were
// recorded inside the qemu guest (Debian's 6.1 kernel) with the path's own
// kprobe definition: every kprobe event must name a command the target
// has received (nvmet_req_init) and not yet completed.
func TestKprobeArgsOnRunningKernel(t *testing.T) {
	p := mustPath(t, "nvme-tcp")
	recv, exec, done := p.EventIndex("TARGET_RECV"), p.EventIndex("TARGET_EXEC"), p.EventIndex("TARGET_DONE")
	for _, name := range []string{"nvme-tcp-read4k-kprobe.txt.gz", "nvme-tcp-write128k-kprobe.txt.gz"} {
		r := OpenFiles([]string{"../testdata/" + name}, p)
		open := map[[2]uint16]bool{}
		matched, unmatched := 0, 0
		for {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			k := [2]uint16{ev.QID, ev.CID}
			switch int(ev.Kind) {
			case recv:
				open[k] = true
			case done:
				delete(open, k)
			case exec:
				if open[k] {
					matched++
				} else {
					unmatched++
					t.Errorf("%s: kprobe qid=%d cid=%d names no command in flight at the target", name, k[0], k[1])
				}
			}
		}
		r.Close()
		t.Logf("%s: %d kprobe events match a command in flight, %d do not", name, matched, unmatched)
		if matched < 50 {
			t.Errorf("%s: only %d kprobe events", name, matched)
		}
	}
}
