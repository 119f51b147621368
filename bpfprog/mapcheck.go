package bpfprog

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// Limits the kernel puts on map definitions (Linux 6.1, x86-64), checked
// where it creates a map (the map types' map_alloc_check functions).
const (
	maxBPFStack     = 512     // MAX_BPF_STACK: a hash key must fit on the stack
	kmallocMaxSize  = 1 << 22 // KMALLOC_MAX_SIZE
	pcpuMinUnitSize = 32768   // PCPU_MIN_UNIT_SIZE: largest per-CPU value
	lpmDataSizeMax  = 256     // LPM_DATA_SIZE_MAX
	pageSize        = 4096
	htabElemSize    = 48 // sizeof(struct htab_elem) before its key
	lpmNodeSize     = 32 // sizeof(struct lpm_trie_node) before its data
	noPrealloc      = 1  // BPF_F_NO_PREALLOC
)

// validateMap checks a map the program references, and its inner map,
// against the limits the kernel enforces when it creates the map.
func (p *Program) validateMap(m *Map) error {
	if msg := mapLimits(m); msg != "" {
		return &InvalidError{File: p.File, Program: p.Name, Insn: -1, Map: m.Name, Msg: msg}
	}
	if m.Inner != nil {
		if msg := mapLimits(m.Inner); msg != "" {
			return &InvalidError{File: p.File, Program: p.Name, Insn: -1, Map: m.Name + " (inner map " + m.Inner.Name + ")", Msg: msg}
		}
	}
	return nil
}

// mapLimits returns what the kernel refuses about m's definition, or "".
func mapLimits(m *Map) string {
	k, v, n := m.KeySize, m.ValueSize, m.MaxEntries
	bad := func(format string, args ...any) string {
		return fmt.Sprintf("%v map with key size %d, value size %d, %d entries: ", m.Type, k, v, n) + fmt.Sprintf(format, args...)
	}
	percpu := m.Type == ebpf.PerCPUHash || m.Type == ebpf.LRUCPUHash || m.Type == ebpf.PerCPUArray
	switch m.Type {
	case ebpf.Hash, ebpf.LRUHash, ebpf.PerCPUHash, ebpf.LRUCPUHash, ebpf.HashOfMaps:
		switch {
		case n == 0 || k == 0 || v == 0:
			return bad("the kernel needs a key, a value and at least one entry")
		case k > maxBPFStack:
			return bad("keys over %d bytes (the BPF stack) are refused", maxBPFStack)
		case uint64(v) >= kmallocMaxSize-maxBPFStack-htabElemSize:
			return bad("values of %d bytes or more are refused", kmallocMaxSize-maxBPFStack-htabElemSize)
		case m.Type == ebpf.HashOfMaps && v != 4:
			return bad("a map of maps holds 4-byte map ids")
		}
	case ebpf.Array, ebpf.PerCPUArray, ebpf.ProgramArray, ebpf.PerfEventArray, ebpf.CGroupArray, ebpf.ArrayOfMaps:
		if m.Type == ebpf.PerfEventArray {
			// Loaders fill in what the object leaves out: 4-byte keys
			// and values, and one entry per possible CPU.
			k, v, n = max(k, 4), max(v, 4), max(n, 1)
		}
		switch {
		case n == 0 || k != 4 || v == 0:
			return bad("an array needs 4-byte keys, a value and at least one entry")
		case v > kmallocMaxSize:
			return bad("values over %d bytes are refused", kmallocMaxSize)
		case uint64(n)*uint64(roundUp8(v)) >= 1<<32-pageSize:
			return bad("the array would need 4 GiB or more")
		case m.Type != ebpf.Array && m.Type != ebpf.PerCPUArray && v != 4:
			return bad("an array of file descriptors holds 4-byte values")
		}
	case ebpf.LPMTrie:
		switch {
		case n == 0:
			return bad("the kernel needs at least one entry")
		case m.Flags&noPrealloc == 0:
			return bad("an LPM trie must be created with BPF_F_NO_PREALLOC")
		case k < 4+1 || k > 4+lpmDataSizeMax:
			return bad("an LPM trie's key is a 4-byte prefix length and 1 to %d bytes of data", lpmDataSizeMax)
		case v == 0 || uint64(v) > kmallocMaxSize-lpmDataSizeMax-lpmNodeSize:
			return bad("values of 1 to %d bytes", kmallocMaxSize-lpmDataSizeMax-lpmNodeSize)
		}
	case ebpf.DevMap, ebpf.DevMapHash, ebpf.CPUMap, ebpf.SockMap, ebpf.SockHash:
		switch {
		case n == 0 || k != 4 && m.Type != ebpf.SockHash || k == 0:
			return bad("the kernel needs 4-byte keys and at least one entry")
		case v != 4 && v != 8:
			return bad("values of 4 or 8 bytes")
		}
	case ebpf.XSKMap:
		if n == 0 || k != 4 || v != 4 {
			return bad("an XSK map holds 4-byte keys and values and at least one entry")
		}
	case ebpf.RingBuf, ebpf.UserRingbuf:
		if k != 0 || v != 0 || n == 0 || n&(n-1) != 0 || n%pageSize != 0 {
			return bad("a ring buffer has no key or value, and a size that is a power of 2 and a multiple of %d", pageSize)
		}
	case ebpf.Queue, ebpf.Stack, ebpf.BloomFilter:
		if k != 0 || v == 0 || n == 0 || v > kmallocMaxSize {
			return bad("no key, a value of 1 to %d bytes and at least one entry", kmallocMaxSize)
		}
	case ebpf.StackTrace, ebpf.CGroupStorage, ebpf.ReusePortSockArray, ebpf.PerCPUCGroupStorage,
		ebpf.SkStorage, ebpf.StructOpsMap, ebpf.InodeStorage, ebpf.TaskStorage, ebpf.CgroupStorage, ebpf.Arena:
		if k > maxBPFStack || uint64(v) > kmallocMaxSize {
			return bad("keys over %d or values over %d bytes are refused", maxBPFStack, kmallocMaxSize)
		}
	default:
		return fmt.Sprintf("unknown map type %d", uint32(m.Type))
	}
	if percpu && roundUp8(v) > pcpuMinUnitSize {
		return bad("per-CPU values over %d bytes are refused", pcpuMinUnitSize)
	}
	return ""
}

func roundUp8(v uint32) uint64 { return (uint64(v) + 7) &^ 7 }
