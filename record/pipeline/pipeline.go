package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/dpperf/dpperf/record/trace"
)

// Config sets up a run.
type Config struct {
	Packets      int           // packets the sender sends (default 100000)
	Routes       int           // UDP destination ports, one route each (default 4)
	QueueSize    int           // slots of each packet queue (default 1024)
	Batch        int           // packets the router handles per wakeup (default 150)
	RouteTimeout time.Duration // idle time after which a route leaves the cache (default 1s)
	// EagerTimeout re-arms a route's timeout with a timer RPC on every
	// packet (the planted cost). Without it the router notes the time of
	// the last packet and re-arms only when the armed deadline is near.
	EagerTimeout bool
	// Halfway, when set, is called by the sender once, after it has sent
	// half of the packets, while the router and receiver go on: it lets a
	// caller act at a known point of a run, whatever the machine's speed.
	Halfway func()
}

func (c *Config) defaults() {
	if c.Packets <= 0 {
		c.Packets = 100000
	}
	if c.Routes <= 0 {
		c.Routes = 4
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 1024
	}
	if c.Batch <= 0 {
		c.Batch = 150
	}
	if c.RouteTimeout <= 0 {
		c.RouteTimeout = time.Second
	}
}

// Result summarises a run.
type Result struct {
	Sent        int           `json:"sent"`
	Received    int           `json:"received"`
	TimerRPCs   int           `json:"timer_rpcs"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	PacketsPerS float64       `json:"packets_per_s"`
}

// Component labels of the pipeline.
const (
	LabelSender   = "pipeline/sender"
	LabelRouter   = "pipeline/router"
	LabelTimer    = "pipeline/timer"
	LabelReceiver = "pipeline/receiver"
)

// signal is a coalescing wake-up: submitting twice before the receiver
// wakes up wakes it once.
type signal chan struct{}

func (s signal) submit() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// Run runs the pipeline until the receiver has every packet or ctx is
// done, emitting events through workers of tr.
func Run(ctx context.Context, tr *trace.Tracer, cfg Config) (Result, error) {
	cfg.defaults()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	submit := make(chan []byte, cfg.QueueSize)
	deliver := make(chan []byte, cfg.QueueSize)
	routerSig, recvSig := make(signal, 1), make(signal, 1)
	tm := newTimer(tr.Worker(LabelTimer, "ep"))
	go tm.serve(ctx)
	r := &router{w: tr.Worker(LabelRouter, "ep"), cfg: cfg, timer: tm, routes: map[uint16]*route{}}
	frames, err := buildFrames(cfg.Routes)
	if err != nil {
		return Result{}, err
	}
	var res Result
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		res.Sent = send(ctx, tr.Worker(LabelSender, "tx"), frames, cfg.Packets, submit, routerSig, cfg.Halfway)
	}()
	go func() {
		defer wg.Done()
		r.run(ctx, submit, deliver, routerSig, recvSig)
	}()
	res.Received = receive(ctx, tr.Worker(LabelReceiver, "rx"), cfg.Packets, deliver, recvSig)
	res.Elapsed = time.Since(start)
	cancel()
	wg.Wait()
	res.TimerRPCs = tm.calls()
	res.PacketsPerS = float64(res.Received) / res.Elapsed.Seconds()
	if res.Received < cfg.Packets && ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.Canceled) {
		return res, ctx.Err()
	}
	return res, nil
}

// buildFrames returns one Ethernet/IPv4/UDP frame per route, with a
// 64-byte payload whose first 8 bytes carry a sequence number.
func buildFrames(routes int) ([][]byte, error) {
	var frames [][]byte
	for i := 0; i < routes; i++ {
		eth := &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: []byte{10, 0, 1, 1}, DstIP: []byte{10, 0, 2, 1}}
		udp := &layers.UDP{SrcPort: 40000, DstPort: layers.UDPPort(5000 + i)}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			return nil, err
		}
		buf := gopacket.NewSerializeBuffer()
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(make([]byte, 64))); err != nil {
			return nil, fmt.Errorf("build frame: %w", err)
		}
		frames = append(frames, buf.Bytes())
	}
	return frames, nil
}

// Offsets in the frames buildFrames makes.
const (
	offTTL     = 14 + 8
	offIPCsum  = 14 + 10
	offDstPort = 14 + 20 + 2
	offUDPCsum = 14 + 20 + 6
	offSeq     = 14 + 20 + 8
)

func send(ctx context.Context, w *trace.Worker, frames [][]byte, n int, q chan<- []byte, sig signal, halfway func()) int {
	for i := 0; i < n; i++ {
		if i == n/2 && halfway != nil {
			halfway()
		}
		f := append([]byte(nil), frames[i%len(frames)]...)
		binary.BigEndian.PutUint64(f[offSeq:], uint64(i))
		binary.BigEndian.PutUint16(f[offUDPCsum:], 0) // UDP checksum optional in IPv4
		select {
		case q <- f:
		case <-ctx.Done():
			return i
		}
		w.SignalSubmit(1)
		sig.submit()
	}
	return n
}

func receive(ctx context.Context, w *trace.Worker, n int, q <-chan []byte, sig signal) int {
	got := 0
	for got < n {
		select {
		case <-sig:
		case <-ctx.Done():
			return got
		}
		w.SignalReceive(2, 0)
		w.QueueFill("deliver", uint32(len(q)), uint32(cap(q)))
		for more := true; more; {
			select {
			case <-q:
				got++
			default:
				more = false
			}
		}
	}
	return got
}
