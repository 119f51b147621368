package pipeline

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	"github.com/dpperf/dpperf/record/trace"
)

// route is a cache entry of the router.
type route struct {
	port     uint16
	lastSeen time.Time // time of the latest packet
	deadline time.Time // when the armed timeout fires
	packets  uint64
}

type router struct {
	w      *trace.Worker
	cfg    Config
	timer  *timer
	routes map[uint16]*route
}

func (r *router) run(ctx context.Context, in <-chan []byte, out chan<- []byte, sig, next signal) {
	for {
		select {
		case <-sig:
		case <-ctx.Done():
			return
		}
		r.w.SignalReceive(1, 0)
		r.w.QueueFill("submit", uint32(len(in)), uint32(cap(in)))
		handled := 0
		for handled < r.cfg.Batch {
			var f []byte
			select {
			case f = <-in:
			default:
			}
			if f == nil {
				break
			}
			handled++
			if r.forward(f) {
				select {
				case out <- f:
				case <-ctx.Done():
					return
				}
			}
		}
		if handled > 0 {
			r.w.SignalSubmit(2)
			next.submit()
		}
		if len(in) > 0 {
			sig.submit() // more than a batch waits: come back at once
		}
	}
}

// forward routes one frame in place and tells whether to pass it on.
func (r *router) forward(f []byte) bool {
	s := r.w.Start("route", uint32(len(f)))
	defer s.End()
	r.w.Packet("uplink", trace.In, f)
	if len(f) < offSeq || f[offTTL] <= 1 {
		r.w.Checkpoint("drop", uint32(len(f)), 0, trace.Failure)
		return false
	}
	port := binary.BigEndian.Uint16(f[offDstPort:])
	now := time.Now()
	rt := r.routes[port]
	if rt == nil {
		rt = &route{port: port}
		r.routes[port] = rt
		r.w.Checkpoint("route_new", uint32(port), 0, trace.ObjNew)
	}
	rt.lastSeen = now
	rt.packets++
	if r.cfg.EagerTimeout || now.Add(r.cfg.RouteTimeout/2).After(rt.deadline) {
		// Eager: every packet moves the deadline a little and costs an
		// RPC. Lazy: only when less than half the timeout is left.
		rt.deadline = now.Add(r.cfg.RouteTimeout)
		r.w.RPCCall("trigger_once", LabelTimer)
		r.timer.triggerOnce(port, rt.deadline)
		r.w.RPCReturned("trigger_once", LabelTimer)
	}
	decrementTTL(f)
	r.w.Packet("downlink", trace.Out, f)
	return true
}

// decrementTTL lowers the IPv4 TTL and updates the header checksum
// incrementally (RFC 1624: HC' = ~(~HC + ~m + m')).
func decrementTTL(f []byte) {
	old := binary.BigEndian.Uint16(f[offTTL:])
	f[offTTL]--
	nw := binary.BigEndian.Uint16(f[offTTL:])
	sum := uint32(^binary.BigEndian.Uint16(f[offIPCsum:])) + uint32(^old) + uint32(nw)
	sum = sum&0xffff + sum>>16
	sum = sum&0xffff + sum>>16
	binary.BigEndian.PutUint16(f[offIPCsum:], ^uint16(sum))
}

// timer is a component serving trigger_once RPCs: each call (re)arms the
// timeout of one route. A call is a round trip to the timer's goroutine.
type timer struct {
	w     *trace.Worker
	reqs  chan timerReq
	mu    sync.Mutex
	n     int
	armed map[uint16]*time.Timer
}

type timerReq struct {
	port     uint16
	deadline time.Time
	done     chan struct{}
}

func newTimer(w *trace.Worker) *timer {
	return &timer{w: w, reqs: make(chan timerReq), armed: map[uint16]*time.Timer{}}
}

func (t *timer) triggerOnce(port uint16, deadline time.Time) {
	done := make(chan struct{})
	t.reqs <- timerReq{port, deadline, done}
	<-done
}

func (t *timer) serve(ctx context.Context) {
	defer func() {
		for _, tm := range t.armed {
			tm.Stop()
		}
	}()
	for {
		select {
		case req := <-t.reqs:
			t.w.RPCDispatch("trigger_once", LabelRouter)
			d := time.Until(req.deadline)
			if tm := t.armed[req.port]; tm != nil {
				tm.Reset(d)
			} else {
				t.armed[req.port] = time.AfterFunc(d, func() {})
			}
			t.mu.Lock()
			t.n++
			t.mu.Unlock()
			t.w.RPCReply("trigger_once", LabelRouter)
			close(req.done)
		case <-ctx.Done():
			return
		}
	}
}

func (t *timer) calls() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}
