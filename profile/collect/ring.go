package collect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// pollEvery bounds how long a record waits in the ring buffer: the
// programs wake the reader only when the ring is a quarter full
// (wakeup_bytes), so at ordinary rates the reader drains it on this
// timer.
const pollEvery = 100 * time.Millisecond

// ring reads the records of the programs' ring buffer.
//
// It waits for records in the Go runtime's network poller (the map's file
// descriptor, non-blocking, behind an os.File) rather than in
// ringbuf.Reader's blocking epoll_wait. A goroutine parked in the poller
// holds no thread; a thread blocked in a system call woke the runtime's
// monitor thread at every call into a burst of 20 µs sleeps, about 600
// context switches a second at iodepth 1 on a loop device, most of the
// profiler's own CPU time. ringbuf.Reader still parses the records; its
// deadline in the past makes it return once the ring is empty instead of
// blocking.
type ring struct {
	rd      *ringbuf.Reader
	f       *os.File
	rc      syscall.RawConn
	rec     ringbuf.Record
	stopped atomic.Bool
	final   bool // the last drain after stop has begun
}

func openRing(m *ebpf.Map) (*ring, error) {
	rd, err := ringbuf.NewReader(m)
	if err != nil {
		return nil, fmt.Errorf("open ring buffer: %w", err)
	}
	rd.SetDeadline(time.Unix(1, 0))
	fd, err := unix.FcntlInt(uintptr(m.FD()), unix.F_DUPFD_CLOEXEC, 0)
	if err == nil {
		err = unix.SetNonblock(fd, true)
		if err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		rd.Close()
		return nil, fmt.Errorf("ring buffer descriptor: %w", err)
	}
	r := &ring{rd: rd, f: os.NewFile(uintptr(fd), "ringbuf")}
	if r.rc, err = r.f.SyscallConn(); err != nil {
		r.close()
		return nil, fmt.Errorf("ring buffer descriptor: %w", err)
	}
	return r, nil
}

// next returns the next record's bytes, valid until the following call.
// It waits while the ring is empty; after stop it returns what is left,
// then io.EOF.
func (r *ring) next() ([]byte, error) {
	for {
		err := r.rd.ReadInto(&r.rec)
		if err == nil {
			return r.rec.RawSample, nil
		}
		if errors.Is(err, ringbuf.ErrClosed) || errors.Is(err, os.ErrClosed) {
			return nil, io.EOF
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, fmt.Errorf("read ring buffer: %w", err)
		}
		if r.final {
			return nil, io.EOF
		}
		if r.stopped.Load() {
			// The programs are detached: one more drain finds all
			// they sent.
			r.final = true
			continue
		}
		r.wait()
	}
}

// wait returns when the kernel signals data, at the poll deadline, or
// when stop is called.
func (r *ring) wait() {
	if err := r.f.SetReadDeadline(time.Now().Add(pollEvery)); err != nil {
		// Not in the poller: fall back to sleeping.
		time.Sleep(pollEvery / 10)
		return
	}
	if r.stopped.Load() {
		return
	}
	_ = r.rc.Read(func(uintptr) bool { return r.rd.AvailableBytes() > 0 || r.stopped.Load() })
}

// stop makes next return the records still in the ring, then io.EOF.
// The caller detaches the programs first.
func (r *ring) stop() {
	r.stopped.Store(true)
	_ = r.f.SetReadDeadline(time.Now())
}

func (r *ring) close() {
	r.stop()
	r.rd.Close()
	r.f.Close()
}
