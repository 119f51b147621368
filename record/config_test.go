package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpperf/dpperf/internal/fail"
)

func TestConfigGood(t *testing.T) {
	c, err := LoadConfig("testdata/full.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.Period) != 50*time.Millisecond || c.TargetRoot != "/tmp/traces" || c.Buffer != 2<<20 || c.SnapLen != 128 || !c.Enabled() {
		t.Errorf("top level read as %+v", c)
	}
	if len(c.Policies) != 3 || c.Policies[0].Buffer != 8<<20 || !c.Policies[0].Has(PCAPNG) || c.Policies[1].Buffer != 2<<20 || !c.Policies[1].Has(CTF) || c.Policies[2].Has(CTF) {
		t.Errorf("policies read as %+v", c.Policies)
	}
	if c.Default == nil || c.Default.Buffer != 64<<10 {
		t.Errorf("default policy read as %+v", c.Default)
	}
}

func TestConfigBad(t *testing.T) {
	want := map[string]string{
		"nolabel.bad.yml":   "line 3: policy needs exactly one of label, label_prefix, label_suffix",
		"twolabels.bad.yml": "line 3: policy needs exactly one of label, label_prefix, label_suffix",
		"backend.bad.yml":   `line 4: unknown backend "lttng" (want ctf or pcapng)`,
		"period.bad.yml":    `line 1: "soon" is not a positive duration such as 100ms`,
		"noperiod.bad.yml":  "period is required (such as period: 100ms)",
		"size.bad.yml":      `line 2: "3TiB" is not a size between 1 and 1GiB (such as 4MiB)`,
		"unknown.bad.yml":   `line 4: unknown policy field "bufer"`,
		"missing.bad.yml":   "read config: open testdata/missing.bad.yml: no such file or directory",
	}
	files, _ := filepath.Glob("testdata/*.bad.yml")
	if len(files) != len(want)-1 {
		t.Fatalf("%d bad configurations in testdata, %d expected errors", len(files), len(want)-1)
	}
	for name, msg := range want {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			_, err := LoadConfig(path)
			if err == nil {
				t.Fatal("accepted")
			}
			if fail.ExitCode(err) != fail.ExitInput {
				t.Errorf("exit code %d, want %d", fail.ExitCode(err), fail.ExitInput)
			}
			if got := err.Error(); got != path+": "+msg {
				t.Errorf("error\n%s\nwant\n%s", got, path+": "+msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Error("error spans lines")
			}
		})
	}
}

func TestMatch(t *testing.T) {
	c, err := ParseConfig([]byte(`
period: 1s
policies:
  - label_prefix: pipe
    buffer: 1KiB
  - label_prefix: pipeline/
    buffer: 2KiB
  - label_suffix: router
    buffer: 3KiB
  - label: pipeline/router
    buffer: 4KiB
  - label_prefix: pipeline/
    thread: tx
    buffer: 5KiB
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		label, thread string
		want          Size // 0: not traced
	}{
		{"pipeline/router", "ep", 4 << 10}, // exact beats everything
		{"pipeline/sender", "ep", 2 << 10}, // longer prefix wins
		{"pipeline/sender", "tx", 5 << 10}, // thread filter breaks the tie
		{"pipes/x", "ep", 1 << 10},         // only the short prefix
		{"other/router", "ep", 3 << 10},    // suffix
		{"other/receiver", "ep", 0},        // no match, no default
	} {
		p := c.Match(tc.label, tc.thread)
		got := Size(0)
		if p != nil {
			got = p.Buffer
		}
		if got != tc.want {
			t.Errorf("Match(%q, %q) buffer %d, want %d", tc.label, tc.thread, got, tc.want)
		}
	}
	c.Default = &Policy{Buffer: 9}
	if p := c.Match("other/receiver", "x"); p != c.Default {
		t.Error("default policy not used")
	}
}

func TestLabelPath(t *testing.T) {
	for in, want := range map[string]string{
		"init -> runtime -> nic_router": "init/runtime/nic_router",
		"pipeline/router":               "pipeline/router",
		"../../etc":                     "_/_/etc",
		"/a//b c/":                      "a/b_c",
		"":                              "unlabeled",
	} {
		if got := LabelPath(in); got != want {
			t.Errorf("LabelPath(%q) = %q, want %q", in, got, want)
		}
	}
	if ThreadFile("metadata") != "_metadata" || ThreadFile(".x") != "_.x" {
		t.Error("ThreadFile keeps a reserved name")
	}
}

func TestNewRecordingDirUnique(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	a, err := NewRecordingDir(root, now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRecordingDir(root, now)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(a) != "2026-01-02T03-04-05.006" || filepath.Base(b) != "2026-01-02T03-04-05.006-2" {
		t.Errorf("directories %s, %s", a, b)
	}
	if _, err := os.Stat(b); err != nil {
		t.Error(err)
	}
}
