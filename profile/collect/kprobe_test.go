package collect

import (
	"testing"

	"github.com/dpperf/dpperf/profile/path"
)

// The nvme-tcp path's kprobe becomes this kprobe_events line (Linux 6.1
// offsets, see the path file).
func TestKprobeDef(t *testing.T) {
	p, err := path.Builtin("nvme-tcp")
	if err != nil {
		t.Fatal(err)
	}
	i := p.EventIndex("TARGET_EXEC")
	got := kprobeDef("dpperf_42", &p.Events[i], p.EventKey(i))
	want := "p:dpperf_42/nvmet_bdev_execute_rw nvmet_bdev_execute_rw qid=+24(+16($arg1)):u16 cid=+2(+0($arg1)):u16"
	if got != want {
		t.Errorf("kprobe definition\n got %s\nwant %s", got, want)
	}
	e := path.Event{Name: "X", Kprobe: "fn"}
	if ok, why := kprobeStatus(&e, []string{"qid", "cid"}); ok || why == "" {
		t.Errorf("kprobe without args: %v %q", ok, why)
	}
}
