package tracetext

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

func mustPath(t testing.TB, name string) *path.Path {
	p, err := path.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readAll(t testing.TB, text string, p *path.Path) ([]event.Event, *Reader, error) {
	r, err := NewReader(strings.NewReader(text), p)
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r, nil
		}
		if err != nil {
			return out, r, err
		}
		out = append(out, ev)
	}
}

// Lines as Linux 6.18 prints them in /sys/kernel/tracing/trace (captured
// on this project's machines), as 6.1 prints them (no ioprio column), and
// as trace-cmd report -t prints them (no flags column, ns timestamps).
const blockText = `# tracer: nop
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
             fio-7772    [000] .....   245.935485: block_bio_queue: 7,0 R 246728 + 8 [fio]
             fio-7772    [000] .....   245.935486: block_getrq: 7,0 R 246728 + 8 [fio]
             fio-7772    [000] .....   245.935486: block_rq_issue: 7,0 R 4096 () 246728 + 8 be,0,4 [fio]
     ksoftirqd/0-14      [000] ..s..   245.940825: block_rq_complete: 7,0 R () 246728 + 8 be,0,4 [0]
CPU:1 [LOST 17 EVENTS]
     kworker/u4:2-88     [001] d..1.   300.000001: block_rq_insert: 259,0 WS 131072 () 2048 + 256 [kworker/u4:2]
     kworker/u4:2-88     [001] d..1.   300.000002: block_rq_issue: 259,0 WS 131072 () 2048 + 256 [kworker/u4:2]
     my [odd] comm-91    [001] .....   300.000003: block_rq_complete: 259,0 WS () 2048 + 256 [0]
            fio-5150  [001]  1000.123456789: block_rq_issue:       8,16 RA 8192 () 77 + 16 [fio]
          <idle>-0     [001] ..s1.   300.000004: sched_switch: prev_comm=x prev_pid=1
`

func TestBlockLines(t *testing.T) {
	p := mustPath(t, "block")
	evs, r, err := readAll(t, blockText, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 8 {
		t.Fatalf("got %d events, want 8: %+v", len(evs), evs)
	}
	want := []event.Event{
		{TS: 245935485000, Sector: 246728, Dev: event.MakeDev(7, 0), Bytes: 4096, CPU: 0, Kind: 0, Op: event.OpRead},
		{TS: 245935486000, Sector: 246728, Dev: event.MakeDev(7, 0), Bytes: 4096, CPU: 0, Kind: 1, Op: event.OpRead},
		{TS: 245935486000, Sector: 246728, Dev: event.MakeDev(7, 0), Bytes: 4096, CPU: 0, Kind: 3, Op: event.OpRead},
		{TS: 245940825000, Sector: 246728, Dev: event.MakeDev(7, 0), Bytes: 4096, CPU: 0, Kind: 4, Op: event.OpRead},
		{TS: 300000001000, Sector: 2048, Dev: event.MakeDev(259, 0), Bytes: 131072, CPU: 1, Kind: 2, Op: event.OpWrite},
		{TS: 300000002000, Sector: 2048, Dev: event.MakeDev(259, 0), Bytes: 131072, CPU: 1, Kind: 3, Op: event.OpWrite},
		{TS: 300000003000, Sector: 2048, Dev: event.MakeDev(259, 0), Bytes: 131072, CPU: 1, Kind: 4, Op: event.OpWrite},
		{TS: 1000123456789, Sector: 77, Dev: event.MakeDev(8, 16), Bytes: 8192, CPU: 1, Kind: 3, Op: event.OpRead},
	}
	for i := range want {
		if evs[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, evs[i], want[i])
		}
	}
	st := r.Stats()
	if st.Lost != 17 || st.Events != 8 || st.Lines != 13 {
		t.Errorf("stats = %+v", st)
	}
	if seen := r.Seen(); !seen[0] || !seen[2] || !seen[4] {
		t.Errorf("seen = %v", seen)
	}
}

// nvme and nvmet lines in the TP_printk formats of Linux 6.1.
const nvmeText = `
 fio-300 [001] ..... 50.000100: nvme_setup_cmd: nvme1: disk=nvme1n1, qid=2, cmdid=16385, nsid=1, flags=0x0, meta=0x0, cmd=(nvme_cmd_read slba=0, len=7, ctrl=0x0, dsmgmt=0, reftag=0)
 fio-300 [001] ..... 50.000101: block_rq_issue: 259,1 R 4096 () 0 + 8 [fio]
 kworker/1:1H-90 [001] ..... 50.000150: nvmet_req_init: nvmet1: disk=/dev/nullb0, qid=2, cmdid=16385, nsid=1, flags=0x0, meta=0x0, cmd=(nvme_cmd_read slba=0, len=7, ctrl=0x0, dsmgmt=0, reftag=0)
 kworker/1:1H-90 [001] ..... 50.000170: nvmet_req_complete: nvmet1: disk=/dev/nullb0, qid=2, cmdid=16385, res=0x0, status=0x0
 kworker/1:1H-91 [001] ..s.. 50.000220: nvme_complete_rq: nvme1: disk=nvme1n1, qid=2, cmdid=16385, res=0x0, retries=0, flags=0x0, status=0x0
 kworker/1:1H-91 [001] ..s.. 50.000221: block_rq_complete: 259,1 R () 0 + 8 [0]
`

func TestNVMeLines(t *testing.T) {
	p := mustPath(t, "nvme-tcp")
	evs, _, err := readAll(t, nvmeText, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 6 {
		t.Fatalf("got %d events", len(evs))
	}
	q := evs[0]
	if q.Kind != uint8(p.EventIndex("QUEUE_RQ")) || q.QID != 2 || q.CID != 16385 || q.Op != event.OpRead {
		t.Errorf("setup_cmd = %+v", q)
	}
	if c := evs[4]; c.Kind != uint8(p.EventIndex("HOST_CQE")) || c.QID != 2 || c.CID != 16385 {
		t.Errorf("complete_rq = %+v", c)
	}
}

const kprobeText = ` kworker/1:1H-57 [001] ..... 25.555263: nvmet_bdev_execute_rw: (nvmet_bdev_execute_rw+0x0/0x3a0 [nvmet]) qid=2 cid=25
 kworker/1:1H-57 [001] ..... 25.555264: p_nvmet_bdev_execute_rw_0: (nvmet_bdev_execute_rw+0x0/0x3a0) qid=0x3 cid=0x1a arg3=7
`

// Kprobe events carry their key fields as fetched arguments.
func TestKprobeLines(t *testing.T) {
	p := mustPath(t, "nvme-tcp")
	evs, _, err := readAll(t, kprobeText, p)
	if err != nil {
		t.Fatal(err)
	}
	exec := uint8(p.EventIndex("TARGET_EXEC"))
	if len(evs) != 2 || evs[0].Kind != exec || evs[0].QID != 2 || evs[0].CID != 25 || evs[0].TS != 25_555_263_000 {
		t.Fatalf("events %+v", evs)
	}
	if evs[1].QID != 3 || evs[1].CID != 26 {
		t.Errorf("hex arguments: %+v", evs[1])
	}
	for _, bad := range []string{
		"(nvmet_bdev_execute_rw+0x0/0x3a0 [nvmet]) qid=2",           // no cid
		"(nvmet_bdev_execute_rw+0x0/0x3a0 [nvmet] qid=2 cid=25",     // unclosed
		"(nvmet_bdev_execute_rw+0x0/0x3a0 [nvmet]) qid=70000 cid=1", // out of range
		"(nvmet_bdev_execute_rw+0x0/0x3a0 [nvmet]) qid=x cid=1",
	} {
		line := " kworker/1:1H-57 [001] ..... 25.555263: nvmet_bdev_execute_rw: " + bad + "\n"
		if _, _, err := readAll(t, line, p); err == nil || !strings.HasPrefix(err.Error(), "line 1: nvmet_bdev_execute_rw: ") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

func TestBadLines(t *testing.T) {
	p := mustPath(t, "block")
	for _, line := range []string{
		" fio-1 [000] ..... 1.5: block_rq_issue: 7,0 R 4096 () 12 + 8 [fio]\n",           // fine, control
		" fio-1 [000] ..... 1.x: block_rq_issue: 7,0 R 4096 () 12 + 8 [fio]\n",           // timestamp
		" fio-1 [000] ..... 1.000001: block_rq_issue: 7,0 R\n",                           // too short
		" fio-1 [000] ..... 1.000001: block_rq_issue: 7;0 R 4096 () 12 + 8 [fio]\n",      // device
		" fio-1 [000] ..... 1.000001: block_rq_issue: 7,0 R 4096 () 12 - 8 be,0,4 [x]\n", // no +
		" fio-1 [000] ..... 1.000001: block_rq_issue: 7,0 R 4096 () x + 8 be,0,4 [x]\n",  // sector
		"CPU:0 [LOST many EVENTS]\n",
	} {
		_, _, err := readAll(t, "# header\n"+line, p)
		if strings.Contains(line, "1.5:") {
			if err != nil {
				t.Errorf("control line rejected: %v", err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
			t.Errorf("%q: error %v, want one naming line 2", line, err)
		}
	}
}

func TestGzipFile(t *testing.T) {
	f, err := os.Open("../testdata/block-qd1.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f, mustPath(t, "block"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 12000 {
		t.Errorf("read %d events from the captured trace, want 12000", n)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(blockText))
	f.Add([]byte(nvmeText))
	f.Add([]byte(kprobeText))
	f.Add([]byte("CPU:3 [LOST 5 EVENTS]\n"))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	p := mustPath(f, "nvme-tcp")
	b := mustPath(f, "block")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, path := range []*path.Path{p, b} {
			r, err := NewReader(strings.NewReader(string(data)), path)
			if err != nil {
				return
			}
			for i := 0; i < 10000; i++ {
				ev, err := r.Next()
				if err != nil {
					break
				}
				if int(ev.Kind) >= len(path.Events) || ev.TS < 0 {
					t.Fatalf("bad event %+v", ev)
				}
			}
		}
	})
}
