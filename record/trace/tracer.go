package trace

import (
	"sync"
	"sync/atomic"
)

// Tracer is the registry of the workers of one program.
type Tracer struct {
	mu      sync.Mutex
	workers []*Worker
	hook    func(*Worker)
}

// New returns an empty tracer.
func New() *Tracer { return &Tracer{} }

// Default is the tracer of programs that need only one.
var Default = New()

// Worker registers and returns a worker of the component label (a path
// such as "pipeline/router") named thread. Each goroutine that emits events
// needs its own Worker: a Worker must not be used by two goroutines at once.
func (t *Tracer) Worker(label, thread string) *Worker {
	w := &Worker{label: label, thread: thread}
	t.mu.Lock()
	t.workers = append(t.workers, w)
	hook := t.hook
	t.mu.Unlock()
	if hook != nil {
		hook(w)
	}
	return w
}

// Workers returns the registered workers in registration order.
func (t *Tracer) Workers() []*Worker {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*Worker(nil), t.workers...)
}

// SetHook makes fn be called with every worker registered from now on; a
// recorder uses it to attach buffers to workers created while it records.
// It returns the registered workers at the time of the call, so that none
// is missed or seen twice. A nil fn removes the hook.
func (t *Tracer) SetHook(fn func(*Worker)) []*Worker {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hook = fn
	return append([]*Worker(nil), t.workers...)
}

// Worker emits the events of one goroutine into its attached Buffer. With
// no buffer attached every event method returns after one branch.
type Worker struct {
	buf    atomic.Pointer[Buffer]
	label  string
	thread string
}

// Label returns the component label of the worker.
func (w *Worker) Label() string { return w.label }

// Thread returns the thread name of the worker.
func (w *Worker) Thread() string { return w.thread }

// Attach makes the worker write into b (nil stops tracing) and returns the
// buffer it wrote into before.
func (w *Worker) Attach(b *Buffer) *Buffer { return w.buf.Swap(b) }

// Enabled tells whether the worker has a buffer, for callers that want to
// skip preparing expensive event arguments.
func (w *Worker) Enabled() bool { return w.buf.Load() != nil }

// CheckpointType classifies a checkpoint event.
type CheckpointType uint8

// Checkpoint types, with the values of the CTF type field.
const (
	Undef     CheckpointType = 0x00
	Start     CheckpointType = 0x01
	End       CheckpointType = 0x02
	ObjNew    CheckpointType = 0x10
	ObjDel    CheckpointType = 0x11
	ObjState  CheckpointType = 0x12
	Exception CheckpointType = 0xfe
	Failure   CheckpointType = 0xff
)

// Direction of a captured packet relative to the component.
type Direction uint8

// Packet directions.
const (
	In  Direction = 0
	Out Direction = 1
)

// Checkpoint records a named checkpoint with a data word (e.g. a variable's
// value), an address (e.g. an object's) and a type.
func (w *Worker) Checkpoint(name string, data uint32, addr uint64, typ CheckpointType) {
	if b := w.buf.Load(); b != nil {
		b.checkpoint(name, data, addr, uint8(typ))
	}
}

// Scope is a code section opened by Worker.Start and closed by End.
type Scope struct {
	w    *Worker
	name string
	data uint32
}

// Start records a START checkpoint and returns the scope whose End records
// the matching END checkpoint: `defer w.Start("route", 0).End()`.
func (w *Worker) Start(name string, data uint32) Scope {
	w.Checkpoint(name, data, 0, Start)
	return Scope{w: w, name: name, data: data}
}

// End records the END checkpoint of the scope.
func (s Scope) End() { s.w.Checkpoint(s.name, s.data, 0, End) }

// RPCCall records that this worker calls the RPC name of component peer.
func (w *Worker) RPCCall(name, peer string) { w.rpc(1, name, peer) }

// RPCReturned records that the call of RPC name to peer returned.
func (w *Worker) RPCReturned(name, peer string) { w.rpc(2, name, peer) }

// RPCDispatch records that this worker starts serving RPC name for peer.
func (w *Worker) RPCDispatch(name, peer string) { w.rpc(3, name, peer) }

// RPCReply records that this worker replies to RPC name of peer.
func (w *Worker) RPCReply(name, peer string) { w.rpc(4, name, peer) }

func (w *Worker) rpc(id uint8, name, peer string) {
	if b := w.buf.Load(); b != nil {
		b.twoStrings(id, name, peer)
	}
}

// SignalSubmit records that this worker submits signal number.
func (w *Worker) SignalSubmit(number uint32) {
	if b := w.buf.Load(); b != nil {
		b.signal(5, number, 0)
	}
}

// SignalReceive records that this worker receives signal number with a
// context word.
func (w *Worker) SignalReceive(number uint32, context uint64) {
	if b := w.buf.Load(); b != nil {
		b.signal(6, number, context)
	}
}

// QueueFill records a fill sample of queue name: used of capacity slots.
func (w *Worker) QueueFill(name string, used, capacity uint32) {
	if b := w.buf.Load(); b != nil {
		b.queueFill(name, used, capacity)
	}
}

// Packet captures an Ethernet frame seen on interface iface in direction
// dir, truncated to the buffer's snap length.
func (w *Worker) Packet(iface string, dir Direction, frame []byte) {
	if b := w.buf.Load(); b != nil {
		b.packet(iface, dir, frame)
	}
}
