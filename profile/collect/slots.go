package collect

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/profile/event"
)

// maxSlots bounds the in-flight table sized to a device (64-byte slots:
// 16 MiB); a device with more queues times tags gets probed slots.
const maxSlots = 1 << 18

// slotLayout sizes the in-flight table of bpf/block.c to the block device
// dev: stride is a power of two above every tag a request of dev can carry
// (its tag set's depth and its scheduler's, reserved tags included), slots
// the hardware queues times stride, so that a request's slot is queue *
// stride + tag and no two requests in flight share one. It reads the
// device's sysfs directory (/sys/dev/block/MAJ:MIN); ok is false when
// that is not a multi-queue block device or the table would be too large.
func slotLayout(sysfs string, dev event.Dev) (stride, slots uint32, ok bool) {
	dir := filepath.Join(sysfs, "dev", "block", fmt.Sprintf("%d:%d", dev.Major(), dev.Minor()))
	queues, err := filepath.Glob(filepath.Join(dir, "mq", "*", "nr_tags"))
	if err != nil || len(queues) == 0 {
		return 0, 0, false
	}
	depth, ok := readUint(filepath.Join(dir, "queue", "nr_requests"))
	if !ok {
		return 0, 0, false
	}
	var reserved uint32
	for _, q := range queues {
		tags, ok1 := readUint(q)
		r, ok2 := readUint(filepath.Join(filepath.Dir(q), "nr_reserved_tags"))
		if !ok1 || !ok2 {
			return 0, 0, false
		}
		depth, reserved = max(depth, tags), max(reserved, r)
	}
	stride = ceilPow2(depth + reserved)
	n := uint64(stride) * uint64(ceilPow2(uint32(len(queues))))
	if n > maxSlots {
		return 0, 0, false
	}
	return stride, uint32(n), true
}

func readUint(name string) (uint32, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	return uint32(v), err == nil
}

// ceilPow2 returns the smallest power of two at least v (1 for 0).
func ceilPow2(v uint32) uint32 {
	if v <= 1 {
		return 1
	}
	return 1 << bits.Len32(v-1)
}
