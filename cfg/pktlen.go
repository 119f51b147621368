package cfg

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// resizing helpers move the packet's head or tail, after which bounds
// checks no longer speak of the received packet's length.
var resizing = map[asm.BuiltinFunc]bool{
	asm.FnXdpAdjustHead: true, asm.FnXdpAdjustTail: true,
	asm.FnSkbChangeHead: true, asm.FnSkbChangeTail: true,
	asm.FnSkbAdjustRoom: true, asm.FnSkbChangeProto: true,
	asm.FnSkbPullData: true, asm.FnSkbVlanPush: true, asm.FnSkbVlanPop: true,
	asm.FnLwtPushEncap: true, asm.FnLwtSeg6AdjustSrh: true,
}

// packetLen returns the packet length in bytes that the taken and the
// not-taken outcome of "a op b" prove, when one operand is a packet
// pointer at a known offset (or one known to be at least some offset) and
// the other is data_end (at a known offset).
// With p = data+x and e = data_end+y, "p <= e" proves len >= x-y and
// "p < e" proves len >= x-y+1.
func packetLen(op asm.JumpOp, a, b value) (taken, notTaken int32) {
	// A pointer whose offset is only bounded below proves at least its
	// least offset: every outcome below proves a least length.
	isPkt := func(v value) bool { return v.kind == pointer && (v.exact || v.hasMin) && v.region == RegionPacket }
	isEnd := func(v value) bool { return v.kind == pointer && v.exact && v.region == RegionPacketEnd }
	var n int64
	switch {
	case isPkt(a) && isEnd(b):
		n = a.off - b.off
	case isEnd(a) && isPkt(b):
		n = b.off - a.off
		op = bpfprog.Mirror(op)
	default:
		return 0, 0
	}
	// Now the comparison reads "p op e".
	var t, f int64
	switch op {
	case asm.JLE, asm.JSLE: // p <= e when taken; p > e otherwise
		t = n
	case asm.JLT, asm.JSLT:
		t = n + 1
	case asm.JGT, asm.JSGT: // p > e when taken; p <= e otherwise
		f = n
	case asm.JGE, asm.JSGE:
		f = n + 1
	case asm.JEq:
		t = n
	case asm.JNE:
		f = n
	}
	clamp := func(v int64) int32 { return int32(min(max(v, 0), 1<<16)) }
	return clamp(t), clamp(f)
}
