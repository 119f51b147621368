package task

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseINI(t *testing.T) {
	data, err := os.ReadFile("testdata/original.good.ini")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := ParseINI(data)
	if err != nil {
		t.Fatal(err)
	}
	w, p, r := tk.Workload, tk.Profiling, tk.Report
	if w.Device != "loop0" || w.Type != "read" || w.MinSize != 4096 || w.MaxSize != 128<<10 || w.Size != 0 {
		t.Errorf("workload %+v", w)
	}
	if p.Mode != "offline" || time.Duration(p.Interval) != 500*time.Millisecond || p.Sample != 100 || p.Buffer.Records != 64<<20/256 {
		t.Errorf("profiling %+v", p)
	}
	if strings.Join(r.Contents, ",") != "latency,breakdown" || strings.Join(r.GroupBy, ",") != "size,session" || strings.Join(r.Aggregators, ",") != "avg" {
		t.Errorf("report %+v", r)
	}
}

func TestParseINIErrors(t *testing.T) {
	for in, want := range map[string]string{
		"[Workload]\nIO_TYPE=trim\n":                   "line 2: IO_TYPE: want read, write or both",
		"[Workload]\nIO_SIZE=4Q\n":                     "line 2: IO_SIZE: bad size",
		"[Profiling]\nFREQUENCY=0\n":                   "line 2: FREQUENCY",
		"[Profiling]\nIS_ONLINE=maybe\n":               "line 2: IS_ONLINE",
		"[Report]\nENABLE_COFFEE=true\n":               "line 2: unknown key ENABLE_COFFEE in [report]",
		"[Nope]\n":                                     "line 1: unknown section [nope]",
		"IO_TYPE=read\n":                               "line 1: IO_TYPE outside a section",
		"[Workload]\nIO_TYPE\n":                        "line 2: want KEY=value",
		"[Workload\n":                                  "line 1: bad section header",
		"[Workload]\nMIN_IO_SIZE=8K\nMAX_IO_SIZE=4K\n": "min_size 8192 above max_size 4096",
	} {
		_, err := ParseINI([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func FuzzParseINI(f *testing.F) {
	data, _ := os.ReadFile("testdata/original.good.ini")
	f.Add(data)
	f.Add([]byte("[Workload]\nIO_SIZE=\"4K,8K\" ; c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := ParseINI(data)
		if err != nil {
			return
		}
		if tk.Profiling.Sample == 0 || tk.Profiling.Buffer.Records < 16 {
			t.Fatalf("accepted task without defaults: %+v", tk.Profiling)
		}
	})
}
