package profiling

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/profile/analyze"
	"github.com/dpperf/dpperf/profile/collect"
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/hostjoin"
	"github.com/dpperf/dpperf/profile/peer"
)

// Hosts are the settings of a run on one of two hosts: the target serves
// its events (Serve), the initiator fetches them (Peer) and joins.
type Hosts struct {
	Serve string // listen on this address and serve the target's events
	Peer  string // HOST:PORT of the target's dpperf
	Token []byte // shared bearer token
	// Linger is how long the target keeps serving after its recording
	// ends, for the initiator's last fetch (0: 30 s); Ctrl-C ends it.
	Linger time.Duration
}

// ReadToken reads a token file: its content without surrounding white
// space, at least 16 bytes.
func ReadToken(name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fail.Usagef("-token-file: %v", err)
	}
	tok := []byte(strings.TrimSpace(string(data)))
	if len(tok) < 16 || strings.ContainsAny(string(tok), " \t\r\n") {
		return nil, fail.Inputf(name, "a token is one word of at least 16 bytes")
	}
	return tok, nil
}

// monoNow reads CLOCK_MONOTONIC, the clock of the collectors' events.
func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// runHosts is Run on one of two hosts. Both sides collect through a
// tracefs instance, whose events carry the NVMe ids the join needs.
func (l *Live) runHosts(ctx context.Context) (*Result, error) {
	sides, err := hostjoin.SidesOf(l.Path)
	if err != nil {
		return nil, fail.Usagef("profile run: -serve/-peer: %v", err)
	}
	if l.Hosts.Serve != "" && l.Hosts.Peer != "" {
		return nil, fail.Usagef("profile run: -serve (target) and -peer (initiator) exclude each other")
	}
	end, err := l.waitForWindow(ctx)
	if err != nil {
		return nil, err
	}
	// Each side records only its own events.
	cfg := l.config()
	serving := l.Hosts.Serve != ""
	cfg.Skip = func(i int) bool { return sides.TargetKind(i) != serving }
	col, err := collect.Open(collect.KindTraceFS, cfg)
	if errors.Is(err, collect.ErrNotRoot) {
		return nil, fail.NeedsRootf("profile run: %v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("profile run: %w", err)
	}
	defer col.Close()
	runCtx, cancel, cmd, err := l.start(ctx, end, col)
	defer cancel()
	if err != nil {
		return nil, err
	}
	var res *Result
	if l.Hosts.Serve != "" {
		res, err = l.serveTarget(ctx, col, sides)
	} else {
		res, err = l.joinPeer(ctx, runCtx, col, sides)
	}
	if err != nil {
		return nil, err
	}
	prof := res.Profile
	prof.Counts.Lost = col.Lost()
	for _, st := range col.Status() {
		i := len(prof.Events)
		info := analyze.EventInfo{Name: st.Name, Probe: st.Probe, Observed: st.Attached, Reason: st.Reason}
		if l.Hosts.Peer != "" && sides.Target[i] {
			info.Observed, info.Reason = prof.Counts.PerEvent[i] > 0, ""
			if !info.Observed {
				info.Reason = "not recorded by the peer"
			}
		}
		prof.Events = append(prof.Events, info)
	}
	prof.SetEventCounts()
	if ctx.Err() != nil {
		prof.Warnings = append(prof.Warnings, "interrupted: partial profile")
	}
	if cmdErr := cmd.wait(); cmdErr != nil && ctx.Err() == nil {
		prof.Warnings = append(prof.Warnings, "command failed: "+cmdErr.Error())
		res.CommandErr = cmdErr
	}
	return res, nil
}

// drain reads the collector to its end, passing on each event keep
// accepts as it comes (a target's store serves it at once).
func drain(col collect.Collector, keep func(int) bool, out func(event.Event)) error {
	for {
		ev, err := col.Next()
		if err == nil && keep(int(ev.Kind)) {
			out(ev)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// serveTarget records the target's events into a store served to the
// initiator, and profiles the target's own stages.
func (l *Live) serveTarget(ctx context.Context, col collect.Collector, sides hostjoin.Sides) (*Result, error) {
	var store peer.Store
	ln, err := net.Listen("tcp", l.Hosts.Serve)
	if err != nil {
		return nil, fail.Usagef("-serve: %v", err)
	}
	srv := &http.Server{Handler: peer.Handler(&store, l.Path.Name, l.Hosts.Token, monoNow), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Fprintf(l.Notes, "profile: serving the target's events on http://%s/v1/events\n", ln.Addr())
	var all []event.Event
	err = drain(col, sides.TargetKind, func(ev event.Event) {
		store.Add(ev)
		all = append(all, ev)
	})
	store.Stop()
	if err != nil {
		return nil, fmt.Errorf("profile run: %w", err)
	}
	if ctx.Err() == nil {
		linger := l.Hosts.Linger
		if linger <= 0 {
			linger = 30 * time.Second
		}
		fmt.Fprintf(l.Notes, "profile: recording ended; serving %d events for %v more (Ctrl-C ends)\n", len(all), linger)
		select {
		case <-time.After(linger):
		case <-ctx.Done():
		}
	}
	halves, incomplete := sides.Halves(all)
	opt := analyze.OptionsFor(l.Task, l.Path, 0)
	agg, _, err := analyze.Run(context.Background(), hostjoin.RecordsOf(halves), opt)
	if err != nil {
		return nil, err
	}
	prof := l.summarize(agg, "tracefs, target side")
	prof.Counts = analyze.Counts{BuildStats: analyze.BuildStats{Events: int64(len(all)), Records: int64(len(halves)), Open: incomplete, PerEvent: perEvent(all, len(l.Path.Events))}, Analyzed: agg.Records()}
	return &Result{Profile: prof}, nil
}

func perEvent(evs []event.Event, n int) []int64 {
	out := make([]int64, n)
	for _, ev := range evs {
		if int(ev.Kind) < n {
			out[ev.Kind]++
		}
	}
	return out
}

// joinPeer records the initiator's events, fetches the target's from the
// peer (every interval of an online task, and at the end), and joins
// them. A peer that fails leaves the report partial, with its reason.
func (l *Live) joinPeer(ctx, runCtx context.Context, col collect.Collector, sides hostjoin.Sides) (*Result, error) {
	c := &peer.Client{URL: "http://" + l.Hosts.Peer, Token: l.Hosts.Token, Path: l.Path.Name, Target: sides.TargetKind}
	var (
		mu      sync.Mutex
		tgt     []event.Event
		after   uint64
		best    peer.Sample
		partial string
	)
	// fetch returns how many events it got, or -1 once the peer failed.
	fetch := func(fctx context.Context) int {
		mu.Lock()
		defer mu.Unlock()
		if partial != "" {
			return -1
		}
		evs, next, s, err := c.FetchAll(fctx, after, monoNow)
		tgt, after = append(tgt, evs...), next
		if s.TargetNS != 0 && (best.TargetNS == 0 || s.RecvNS-s.SendNS < best.RecvNS-best.SendNS) {
			best = s
		}
		if err != nil {
			partial = err.Error()
			return -1
		}
		return len(evs)
	}
	done := make(chan struct{})
	if iv := time.Duration(l.Task.Profiling.Interval); l.online() && iv > 0 {
		go func() {
			t := time.NewTicker(iv)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					_ = fetch(runCtx)
				case <-runCtx.Done():
					close(done)
					return
				}
			}
		}()
	} else {
		close(done)
	}
	var initEvs []event.Event
	err := drain(col, sides.Initiator, func(ev event.Event) { initEvs = append(initEvs, ev) })
	<-done
	if err != nil {
		return nil, fmt.Errorf("profile run: %w", err)
	}
	// The last fetches are not bound to the run: Ctrl-C ended that, and
	// the target's records are still wanted. The target may still be
	// reading its last events from its kernel: ask until two replies half
	// a second apart bring nothing new (or for at most 30 s).
	final := context.WithoutCancel(ctx)
	for quiet, deadline := 0, time.Now().Add(30*time.Second); quiet < 2 && time.Now().Before(deadline); {
		switch n := fetch(final); {
		case n < 0:
			quiet = 2
		case n == 0:
			quiet++
		default:
			quiet = 0
		}
		if quiet < 2 {
			time.Sleep(500 * time.Millisecond)
		}
	}
	jopt := hostjoin.Options{}
	if best.TargetNS != 0 {
		h := best.Hint()
		jopt.Hint = &h
	}
	agg, stats, hosts, err := sides.Analyze(context.Background(), initEvs, tgt, partial, analyze.OptionsFor(l.Task, l.Path, l.Dev), jopt)
	if err != nil {
		return nil, err
	}
	prof := l.summarize(agg, "tracefs, initiator joined with peer "+l.Hosts.Peer)
	prof.Counts = analyze.Counts{BuildStats: stats, Analyzed: agg.Records()}
	hostjoin.Annotate(prof, hosts, l.Path)
	return &Result{Profile: prof}, nil
}
