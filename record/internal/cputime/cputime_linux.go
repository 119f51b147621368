package cputime

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

var who = struct{ thread, process int }{unix.RUSAGE_THREAD, unix.RUSAGE_SELF}

func usage(w int) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(w, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readSteal sums the first line of /proc/stat ("cpu user nice system idle
// iowait irq softirq steal guest guest_nice"); guest time is already in
// user and nice, so it is left out of the total.
func readSteal() Steal {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Steal{}
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return Steal{}
	}
	var s Steal
	for i, v := range f[1:9] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return Steal{}
		}
		s.Total += n
		if i == 7 {
			s.Stolen = n
		}
	}
	return s
}
