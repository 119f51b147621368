package interp

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// XDP actions.
const (
	xdpAborted  = 0
	xdpRedirect = 4
)

const (
	errEACCES = 13
	errEFAULT = 14
)

// helper runs a helper call: arguments in R1-R5, result in R0. R1-R5 are
// left as they are; the verifier forbids reading them afterwards.
func (m *machine) helper(fn asm.BuiltinFunc) error {
	c := Call{Insn: int32(m.pc), Helper: fn}
	var ret int64
	var rtag uint32
	var err error
	r := &m.regs
	switch fn {
	case asm.FnMapLookupElem:
		rtag, ret, err = m.lookup(&c)
		if rtag != 0 {
			ret = int64(ptr(rtag, 0))
		}
	case asm.FnMapUpdateElem:
		ret, err = m.update(&c)
	case asm.FnMapDeleteElem:
		ret, err = m.delete(&c)
	case asm.FnKtimeGetNs, asm.FnKtimeGetBootNs, asm.FnKtimeGetCoarseNs:
		ret = int64(m.it.clock)
		m.it.clock += m.it.opts.ClockStep
		m.nondet = true
	case asm.FnGetPrandomU32:
		ret = int64(uint32(m.it.random()))
		m.nondet = true
	case asm.FnGetSmpProcessorId:
		ret = int64(m.it.opts.CPU)
	case asm.FnTracePrintk:
		ret, err = m.printf()
	case asm.FnTailCall:
		ret, err = m.tailCall(&c)
	case asm.FnRedirect:
		ret = xdpRedirect
		if r[2] != 0 {
			ret = xdpAborted
		} else {
			m.redirect = &Redirect{Ifindex: uint32(r[1])}
		}
	case asm.FnRedirectMap:
		ret, err = m.redirectMap(&c)
	case asm.FnCsumDiff:
		ret, err = m.csumDiff()
	case asm.FnXdpAdjustHead:
		ret = m.adjustHead(int(int32(r[2])))
	case asm.FnXdpAdjustMeta:
		ret = m.adjustMeta(int(int32(r[2])))
	case asm.FnXdpAdjustTail:
		ret = m.adjustTail(int(int32(r[2])))
	case asm.FnXdpGetBuffLen:
		ret = int64(m.end - m.data)
	case asm.FnPerfEventOutput:
		ret, err = m.perfOutput(&c)
	case asm.FnFibLookup:
		err = fmt.Errorf("%s: helper bpf_fib_lookup is not modelled: it needs the kernel's routing tables", where(m.it.prog, m.pc))
	default:
		err = fmt.Errorf("%s: helper %v is not modelled", where(m.it.prog, m.pc), fn)
	}
	if err != nil {
		return err
	}
	c.Ret = ret
	if fn == asm.FnMapLookupElem {
		c.Ret = 0
		if rtag != 0 {
			c.Ret = 1
		}
	}
	m.calls = append(m.calls, c)
	m.regs[0], m.tags[0] = uint64(ret), rtag
	return nil
}

func (it *Interp) random() uint64 {
	it.rng += 0x9e3779b97f4a7c15
	z := it.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// mapArg returns the map R1 points to and records it in c.
func (m *machine) mapArg(c *Call, op string) (*mapModel, error) { return m.mapArgIn(c, op, 1) }

// mapArgIn is the map that register reg points to.
func (m *machine) mapArgIn(c *Call, op string, reg int) (*mapModel, error) {
	t := m.tags[reg]
	if t == 0 || m.regions[t].kind != RegionMap {
		return nil, m.it.prog.Invalid(m.pc, "%v: R%d is not a map pointer", c.Helper, reg)
	}
	mp := m.regions[t].mp
	c.Map, c.Op = mp.name, op
	return mp, nil
}

func (m *machine) keyArg(mp *mapModel) ([]byte, error) {
	return m.bytesAt(m.tags[2], m.regs[2], mp.ks, "map key (R2)")
}

func (m *machine) valueRegion(mp *mapModel, buf []byte, ro bool) uint32 {
	return m.newRegion(region{kind: RegionMapValue, buf: buf, mp: mp, ro: ro || mp.frozen})
}

// lookup is bpf_map_lookup_elem: the tag of the value region, 0 for NULL.
func (m *machine) lookup(c *Call) (uint32, int64, error) {
	mp, err := m.mapArg(c, "lookup")
	if err != nil {
		return 0, 0, err
	}
	key, err := m.keyArg(mp)
	if err != nil {
		return 0, 0, err
	}
	cpu := mp.cpuOf(m.it.opts.CPU)
	switch {
	case mp.arr != nil:
		if idx := binary.LittleEndian.Uint32(key); idx < mp.max {
			return m.valueRegion(mp, mp.arrayValue(idx, cpu), false), 0, nil
		}
		return 0, 0, nil
	case mp.h != nil:
		e, pcv := mp.h.lookup(key)
		c.PCV = pcv
		if e == nil {
			return 0, 0, nil
		}
		return m.valueRegion(mp, e.vals[cpu], false), 0, nil
	case mp.t != nil:
		v, visited := mp.t.lookup(key)
		c.PCV = []PCV{{"stages", visited}}
		if v == nil {
			return 0, 0, nil
		}
		return m.valueRegion(mp, v, false), 0, nil
	case mp.typ == ebpf.DevMap || mp.typ == ebpf.DevMapHash || mp.typ == ebpf.XSKMap:
		v, ok := mp.targets[binary.LittleEndian.Uint32(key)]
		if !ok {
			return 0, 0, nil
		}
		if mp.typ == ebpf.XSKMap {
			// The kernel returns the socket (struct xdp_sock); programs test
			// it for NULL. Its fields are not modelled: an empty region, so
			// that a read of one fails rather than returning the map's bytes.
			return m.newRegion(region{kind: RegionMapValue, mp: mp, ro: true}), 0, nil
		}
		return m.valueRegion(mp, v, true), 0, nil
	}
	return 0, 0, fmt.Errorf("%s: lookup in %v map %s is not modelled", where(m.it.prog, m.pc), mp.typ, mp.name)
}

// update is bpf_map_update_elem.
func (m *machine) update(c *Call) (int64, error) {
	mp, err := m.mapArg(c, "update")
	if err != nil {
		return 0, err
	}
	key, err := m.keyArg(mp)
	if err != nil {
		return 0, err
	}
	val, err := m.bytesAt(m.tags[3], m.regs[3], mp.vs, "map value (R3)")
	if err != nil {
		return 0, err
	}
	flags := m.regs[4]
	cpu := mp.cpuOf(m.it.opts.CPU)
	var ret int64
	switch {
	case mp.frozen:
		return 0, fmt.Errorf("%s: update of read-only map %s", where(m.it.prog, m.pc), mp.name)
	case mp.arr != nil:
		idx := binary.LittleEndian.Uint32(key)
		c.Key = presence(idx < mp.max)
		switch {
		case flags > flagExist:
			ret = -errEINVAL
		case idx >= mp.max:
			ret = -errE2BIG
		case flags == flagNoExist:
			ret = -errEEXIST
		default:
			copy(mp.arrayValue(idx, cpu), val)
		}
	case mp.h != nil:
		e, _, _ := mp.h.find(key)
		c.Key = presence(e != nil)
		ret, c.PCV = mp.h.update(key, val, flags, m.it.opts.CPU)
	case mp.t != nil:
		var visited int
		ret, visited = mp.t.update(key, val, flags)
		c.PCV = []PCV{{"stages", visited}}
	default:
		return 0, fmt.Errorf("%s: update of %v map %s from a program is not modelled", where(m.it.prog, m.pc), mp.typ, mp.name)
	}
	if ret == 0 {
		m.writes[mp.idx]++
	}
	return ret, nil
}

// delete is bpf_map_delete_elem.
func (m *machine) delete(c *Call) (int64, error) {
	mp, err := m.mapArg(c, "delete")
	if err != nil {
		return 0, err
	}
	key, err := m.keyArg(mp)
	if err != nil {
		return 0, err
	}
	var ret int64
	switch {
	case mp.frozen:
		return 0, fmt.Errorf("%s: delete from read-only map %s", where(m.it.prog, m.pc), mp.name)
	case mp.arr != nil:
		ret = -errEINVAL
	case mp.h != nil:
		ret, c.PCV = mp.h.del(key)
		c.Key = presence(ret == 0)
	case mp.t != nil:
		var visited int
		ret, visited = mp.t.del(key)
		c.PCV = []PCV{{"stages", visited}}
	default:
		return 0, fmt.Errorf("%s: delete from %v map %s from a program is not modelled", where(m.it.prog, m.pc), mp.typ, mp.name)
	}
	if ret == 0 {
		m.writes[mp.idx]++
	}
	return ret, nil
}

// tailCall is bpf_tail_call. A program array can hold no programs in a map
// state, so every tail call misses and the program continues, as in the
// kernel; a slot that held a program would stop the run with an error.
func (m *machine) tailCall(c *Call) (int64, error) {
	t := m.tags[2]
	if t == 0 || m.regions[t].kind != RegionMap || m.regions[t].mp.typ != ebpf.ProgramArray {
		return 0, fmt.Errorf("%s: bpf_tail_call: R2 is not a program array", where(m.it.prog, m.pc))
	}
	mp := m.regions[t].mp
	c.Map, c.Op = mp.name, "tail_call"
	if _, ok := mp.targets[uint32(m.regs[3])]; ok {
		return 0, fmt.Errorf("%s: tail call into %s[%d]: tail calls are not followed", where(m.it.prog, m.pc), mp.name, uint32(m.regs[3]))
	}
	return -errNOENT, nil
}

// redirectMap is bpf_redirect_map.
func (m *machine) redirectMap(c *Call) (int64, error) {
	mp, err := m.mapArg(c, "redirect")
	if err != nil {
		return 0, err
	}
	key, flags := uint32(m.regs[2]), m.regs[3]
	const actionMask, broadcast, excludeIngress = 3, 1 << 3, 1 << 4
	var allowed uint64 = actionMask
	switch mp.typ {
	case ebpf.DevMap, ebpf.DevMapHash:
		allowed |= broadcast | excludeIngress
	case ebpf.CPUMap, ebpf.XSKMap:
	default:
		return 0, fmt.Errorf("%s: bpf_redirect_map into %v map %s", where(m.it.prog, m.pc), mp.typ, mp.name)
	}
	if flags&^allowed != 0 {
		return xdpAborted, nil
	}
	_, ok := mp.targets[key]
	if !ok && flags&broadcast == 0 {
		return int64(flags & actionMask), nil
	}
	m.redirect = &Redirect{Map: mp.name, Key: key, Flags: flags}
	return xdpRedirect, nil
}

// perfOutput is bpf_perf_event_output. Perf event arrays hold no events in
// a map state, so a valid call returns -ENOENT as the kernel does for a CPU
// without an open perf event.
// perfOutput models bpf_perf_event_output(ctx, map, flags, data, size).
func (m *machine) perfOutput(c *Call) (int64, error) {
	mp, err := m.mapArgIn(c, "output", 2)
	if err != nil {
		return 0, err
	}
	if mp.typ != ebpf.PerfEventArray {
		return 0, fmt.Errorf("%s: bpf_perf_event_output into %v map %s", where(m.it.prog, m.pc), mp.typ, mp.name)
	}
	const indexMask, ctxLenMask, currentCPU = 0xffffffff, 0xfffff << 32, 0xffffffff
	flags := m.regs[3]
	if flags&^uint64(indexMask|ctxLenMask) != 0 {
		return -errEINVAL, nil
	}
	if int(flags>>32&0xfffff) > m.end-m.data {
		return -errEFAULT, nil
	}
	if _, err := m.bytesAt(m.tags[4], m.regs[4], int(m.regs[5]), "perf event data (R4)"); err != nil {
		return 0, err
	}
	idx := flags & indexMask
	if idx == currentCPU {
		idx = uint64(m.it.opts.CPU)
	}
	if idx >= uint64(mp.max) {
		return -errE2BIG, nil
	}
	return -errNOENT, nil
}

// csumDiff is bpf_csum_diff: the ones'-complement sum of ~from and to,
// seeded, folded to 16 bits.
func (m *machine) csumDiff() (int64, error) {
	fromSize, toSize := int(uint32(m.regs[2])), int(uint32(m.regs[4]))
	if (fromSize|toSize)&3 != 0 || fromSize+toSize > 512 {
		return -errEINVAL, nil
	}
	from, err := m.bytesAt(m.tags[1], m.regs[1], fromSize, "csum_diff from (R1)")
	if err != nil {
		return 0, err
	}
	to, err := m.bytesAt(m.tags[3], m.regs[3], toSize, "csum_diff to (R3)")
	if err != nil {
		return 0, err
	}
	diff := make([]byte, 0, fromSize+toSize)
	for _, b := range from {
		diff = append(diff, ^b)
	}
	diff = append(diff, to...)
	return int64(csumFrom32to16(csumPartial(diff, uint32(m.regs[5])))), nil
}

// csumFrom32to16 folds a 32-bit partial checksum to 16 bits with end-around
// carry, as bpf_csum_diff does since Linux 6.12 so that every architecture
// returns the same value.
func csumFrom32to16(x uint32) uint32 {
	return (x + bits.RotateLeft32(x, 16)) >> 16
}

// csumPartial is x86-64's csum_partial: 64-bit words added with end-around
// carry, then folded to 32 bits the same way.
func csumPartial(b []byte, seed uint32) uint32 {
	sum := uint64(seed)
	add := func(w uint64) {
		var c uint64
		sum, c = bits.Add64(sum, w, 0)
		sum += c
	}
	for len(b) >= 8 {
		add(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) > 0 {
		var tail [8]byte
		copy(tail[:], b)
		add(binary.LittleEndian.Uint64(tail[:]))
	}
	r, c := bits.Add32(uint32(sum>>32), uint32(sum), 0)
	return r + c
}

// adjustHead is bpf_xdp_adjust_head: move data (and the metadata with it).
func (m *machine) adjustHead(off int) int64 {
	metalen := m.data - m.meta
	nd := m.data + off
	if nd < xdpFrame+metalen || nd > m.end-MinPacket {
		return -errEINVAL
	}
	if metalen > 0 {
		copy(m.buf[m.meta+off:], m.buf[m.meta:m.data])
	}
	m.meta += off
	m.data = nd
	return 0
}

// adjustMeta is bpf_xdp_adjust_meta.
func (m *machine) adjustMeta(off int) int64 {
	nm := m.meta + off
	if nm < xdpFrame || nm > m.data {
		return -errEINVAL
	}
	if l := m.data - nm; l&3 != 0 || l > maxMeta {
		return -errEACCES
	}
	m.meta = nm
	return 0
}

// adjustTail is bpf_xdp_adjust_tail; growing zeroes the new bytes.
func (m *machine) adjustTail(off int) int64 {
	ne := m.end + off
	if ne > FrameSize-Tailroom || ne < m.data+MinPacket {
		return -errEINVAL
	}
	if off > 0 {
		clear(m.buf[m.end:ne])
	}
	m.end = ne
	return 0
}

// printf is bpf_trace_printk: the output is kept in the result, and the
// return value is its length.
func (m *machine) printf() (int64, error) {
	n := int(uint32(m.regs[2]))
	f, err := m.bytesAt(m.tags[1], m.regs[1], n, "trace_printk format (R1)")
	if err != nil {
		return 0, err
	}
	format := strings.TrimRight(string(f), "\x00")
	var out strings.Builder
	arg := 3
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' || i+1 >= len(format) {
			out.WriteByte(ch)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("lh", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			break
		}
		v := uint64(0)
		if arg <= 5 {
			v = m.regs[arg]
		}
		long := strings.Count(format[i+1:j], "l") > 0
		switch format[j] {
		case 'd', 'i':
			if long {
				out.WriteString(strconv.FormatInt(int64(v), 10))
			} else {
				out.WriteString(strconv.FormatInt(int64(int32(v)), 10))
			}
			arg++
		case 'u':
			if !long {
				v = uint64(uint32(v))
			}
			out.WriteString(strconv.FormatUint(v, 10))
			arg++
		case 'x', 'p':
			if !long && format[j] == 'x' {
				v = uint64(uint32(v))
			}
			out.WriteString(strconv.FormatUint(v, 16))
			arg++
		case '%':
			out.WriteByte('%')
		default:
			out.WriteString(format[i : j+1])
			arg++
		}
		i = j
	}
	m.printk = append(m.printk, out.String())
	return int64(out.Len()), nil
}
