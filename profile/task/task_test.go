package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpperf/dpperf/profile/event"
)

func TestParseSize(t *testing.T) {
	cases := map[string]Size{"4096": 4096, "4K": 4096, "4k": 4096, "4KiB": 4096, "4KB": 4096, "128K": 131072, "1M": 1 << 20, "2G": 2 << 30}
	for in, want := range cases {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "K", "-4K", "4Q", "1.5K", "99999999999"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestPaperTask(t *testing.T) {
	data, err := os.ReadFile("testdata/paper.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if op, ok := tk.Workload.Op(); !ok || op != event.OpRead {
		t.Errorf("Op() = %v %v", op, ok)
	}
	if lo, hi := tk.Workload.SizeRange(); lo != 4096 || hi != 4096 {
		t.Errorf("SizeRange() = %d, %d", lo, hi)
	}
	if tk.Profiling.Sample != 1000 || tk.Profiling.Buffer.Records != 10000 || time.Duration(tk.Profiling.Duration) != 30*time.Second {
		t.Errorf("profiling = %+v", tk.Profiling)
	}
	if tk.Report.Has("throughput") || !tk.Report.Has("breakdown") {
		t.Errorf("contents = %v", tk.Report.Contents)
	}
}

func TestDefault(t *testing.T) {
	tk := Default()
	if tk.Path != "block" || tk.Profiling.Sample != 1 || tk.Profiling.Mode != "offline" || len(tk.Report.GroupBy) != 2 {
		t.Errorf("Default() = %+v", tk)
	}
	if _, ok := tk.Workload.Op(); ok {
		t.Error("default task filters on type")
	}
	if err := tk.validate(); err != nil {
		t.Errorf("default task invalid: %v", err)
	}
}

func TestFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, _ := os.ReadFile(f)
			_, err := Parse(data)
			if strings.HasSuffix(f, ".good.yaml") {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			first, _, _ := strings.Cut(string(data), "\n")
			want := strings.TrimPrefix(first, "# error: ")
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		data, _ := os.ReadFile(name)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := Parse(data)
		if err != nil {
			return
		}
		if tk.Profiling.Sample == 0 || tk.Profiling.Buffer.Records < 16 {
			t.Fatalf("accepted task without defaults: %+v", tk.Profiling)
		}
		if lo, hi := tk.Workload.SizeRange(); hi != 0 && lo > hi {
			t.Fatalf("accepted empty size range %d..%d", lo, hi)
		}
	})
}
