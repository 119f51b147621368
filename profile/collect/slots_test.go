package collect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/profile/event"
)

// A fake sysfs tree: the in-flight table is sized to the device's queues
// and tags, and refused where they are not known.
func TestSlotLayout(t *testing.T) {
	write := func(root, name, v string) {
		t.Helper()
		name = filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dev := event.MakeDev(259, 1)
	dir := "dev/block/259:1/"
	for _, c := range []struct {
		name          string
		files         map[string]string
		stride, slots uint32
		ok            bool
	}{
		{"loop", map[string]string{"queue/nr_requests": "128", "mq/0/nr_tags": "128", "mq/0/nr_reserved_tags": "0"}, 128, 128, true},
		{"scheduler deeper than tags", map[string]string{"queue/nr_requests": "256", "mq/0/nr_tags": "64", "mq/0/nr_reserved_tags": "1"}, 512, 512, true},
		{"three queues", map[string]string{"queue/nr_requests": "1023",
			"mq/0/nr_tags": "1023", "mq/0/nr_reserved_tags": "0",
			"mq/1/nr_tags": "1023", "mq/1/nr_reserved_tags": "0",
			"mq/2/nr_tags": "1023", "mq/2/nr_reserved_tags": "0"}, 1024, 4096, true},
		{"no queues", map[string]string{"queue/nr_requests": "128"}, 0, 0, false},
		{"too large", map[string]string{"queue/nr_requests": "1048576", "mq/0/nr_tags": "4", "mq/0/nr_reserved_tags": "0"}, 0, 0, false},
	} {
		root := t.TempDir()
		for f, v := range c.files {
			write(root, dir+f, v)
		}
		stride, slots, ok := slotLayout(root, dev)
		if stride != c.stride || slots != c.slots || ok != c.ok {
			t.Errorf("%s: stride %d, slots %d, %v; want %d, %d, %v", c.name, stride, slots, ok, c.stride, c.slots, c.ok)
		}
	}
}
