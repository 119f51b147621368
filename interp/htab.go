package interp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/cilium/ebpf"
)

// Kernel error numbers helpers return (negated).
const (
	errNOENT  = 2
	errE2BIG  = 7
	errEEXIST = 17
	errEINVAL = 22
	errENOSPC = 28
	errEBUSY  = 16
)

// Map update flags.
const (
	flagAny     = 0
	flagNoExist = 1
	flagExist   = 2
)

// BPF_F_NO_COMMON_LRU: one LRU list per CPU.
const flagNoCommonLRU = 1 << 1

var errFull = errors.New("map is full")

// htab models the kernel's hash table (kernel/bpf/hashtab.c): n_buckets =
// roundup_pow_of_two(max_entries); a key's bucket is jhash(key, seed) &
// (n_buckets-1), jhash2 over 32-bit words when the key size is a multiple of
// 4; new elements and replaced ones go to the head of their bucket's chain,
// so a lookup compares keys from the most recently inserted onwards.
//
// LRU hash maps never fail for lack of room: an insert into a full map
// evicts the least recently used element (of the inserting CPU's list when
// the map has BPF_F_NO_COMMON_LRU). The kernel's LRU is an approximation of
// this (active/inactive lists with reference bits, batched shrinking), so
// the victim it picks can differ; the count of evictions agrees while the
// map is below max_entries.
type htab struct {
	mm      *mapModel
	seed    uint32
	nb      uint32
	buckets [][]*helem // chain order: head first
	count   int
	lru     bool
	pcpuLRU bool
	perCap  int    // per-CPU LRU: entries per CPU list
	tick    uint64 // LRU recency clock
	perCPU  []int  // per-CPU LRU: entries on each CPU's list
}

type helem struct {
	key  []byte
	vals [][]byte // one per CPU for per-CPU maps, else one
	used uint64
	cpu  int
}

func newHtab(mm *mapModel, seed uint32, flags uint32) *htab {
	h := &htab{mm: mm, seed: seed, lru: mm.typ == ebpf.LRUHash || mm.typ == ebpf.LRUCPUHash}
	max := mm.max
	if h.lru && flags&flagNoCommonLRU != 0 {
		h.pcpuLRU = true
		n := uint32(mm.ncpu)
		max = (max + n - 1) / n * n
		h.perCap = int(max / n)
		h.perCPU = make([]int, mm.ncpu)
	}
	h.nb = nBuckets(max)
	h.buckets = make([][]*helem, h.nb)
	return h
}

// nBuckets is roundup_pow_of_two(maxEntries), at least 1.
func nBuckets(maxEntries uint32) uint32 {
	if maxEntries <= 1 {
		return 1
	}
	return 1 << bits.Len32(maxEntries-1)
}

// HashBucket returns the bucket the kernel's hash map (hash, percpu_hash,
// lru_hash, lru_percpu_hash) puts key in: jhash2 of the key's 32-bit words
// (jhash when the key size is not a multiple of 4) with seed, masked to
// n_buckets = roundup_pow_of_two(maxEntries). The seed is 0 for a map
// created with BPF_F_ZERO_SEED (otherwise the kernel draws it at random).
// For an LRU map with BPF_F_NO_COMMON_LRU, pass max_entries rounded up to
// a multiple of the CPU count, as the kernel does.
func HashBucket(key []byte, maxEntries, seed uint32) uint32 {
	return bucketOf(key, seed, nBuckets(maxEntries))
}

func bucketOf(key []byte, seed, nb uint32) uint32 {
	var hash uint32
	if len(key)%4 == 0 {
		hash = jhash2(key, seed)
	} else {
		hash = jhash(key, seed)
	}
	return hash & (nb - 1)
}

// bucket returns the bucket index of key.
func (h *htab) bucket(key []byte) uint32 { return bucketOf(key, h.seed, h.nb) }

// find returns the element holding key, the bucket, and the number of keys
// compared (all of the chain on a miss).
func (h *htab) find(key []byte) (*helem, uint32, int) {
	b := h.bucket(key)
	for i, e := range h.buckets[b] {
		if bytes.Equal(e.key, key) {
			return e, b, i + 1
		}
	}
	return nil, b, len(h.buckets[b])
}

// lookup finds key and marks it used; the PCVs are the bucket's length and
// the keys compared.
func (h *htab) lookup(key []byte) (*helem, []PCV) {
	e, b, n := h.find(key)
	if e != nil && h.lru {
		h.tick++
		e.used = h.tick
	}
	return e, []PCV{{"bucket_len", len(h.buckets[b])}, {"traversals", n}}
}

// insert adds key at the head of its bucket's chain, replacing an element
// with the same key, and returns it with the number of evictions (LRU).
// The new element's values are zero; for an existing key of a per-CPU
// hash the element is kept in place, values and all.
func (h *htab) insert(key []byte, cpu int) (*helem, int, error) {
	old, b, _ := h.find(key)
	if old != nil && (h.mm.typ == ebpf.PerCPUHash || h.mm.typ == ebpf.LRUCPUHash) {
		h.touch(old)
		return old, 0, nil
	}
	evicted := 0
	switch {
	case h.lru:
		// The kernel takes a free node before looking for the old one, so
		// a full map evicts even when the key is present.
		if h.pcpuLRU && h.perCPU[cpu] >= h.perCap || !h.pcpuLRU && h.count >= int(h.mm.max) {
			h.evict(cpu)
			evicted = 1
			old, b, _ = h.find(key)
		}
	case old == nil && h.count >= int(h.mm.max):
		return nil, 0, errFull
	}
	e := &helem{key: bytes.Clone(key), vals: make([][]byte, h.mm.cpus()), cpu: cpu}
	for i := range e.vals {
		e.vals[i] = make([]byte, h.mm.vs)
	}
	chain := append([]*helem{e}, h.buckets[b]...)
	h.buckets[b] = chain
	h.count++
	if h.pcpuLRU {
		h.perCPU[cpu]++
	}
	h.touch(e)
	if old != nil {
		h.remove(old, b)
	}
	return e, evicted, nil
}

func (h *htab) touch(e *helem) {
	h.tick++
	e.used = h.tick
}

func (h *htab) remove(e *helem, b uint32) {
	chain := h.buckets[b]
	for i, x := range chain {
		if x == e {
			h.buckets[b] = append(chain[:i:i], chain[i+1:]...)
			h.count--
			if h.pcpuLRU {
				h.perCPU[e.cpu]--
			}
			return
		}
	}
}

// evict removes the least recently used element (of cpu's list for a
// per-CPU LRU).
func (h *htab) evict(cpu int) {
	var victim *helem
	var vb uint32
	for b, chain := range h.buckets {
		for _, e := range chain {
			if h.pcpuLRU && e.cpu != cpu {
				continue
			}
			if victim == nil || e.used < victim.used {
				victim, vb = e, uint32(b)
			}
		}
	}
	if victim != nil {
		h.remove(victim, vb)
	}
}

// update implements bpf_map_update_elem for a program on cpu.
func (h *htab) update(key, val []byte, flags uint64, cpu int) (int64, []PCV) {
	old, b, n := h.find(key)
	pcv := []PCV{{"bucket_len", len(h.buckets[b])}, {"traversals", n}}
	if h.lru {
		pcv = append(pcv, PCV{"evicted", 0})
	}
	switch {
	case flags > flagExist:
		return -errEINVAL, pcv
	case flags == flagNoExist && old != nil:
		return -errEEXIST, pcv
	case flags == flagExist && old == nil:
		return -errNOENT, pcv
	}
	e, ev, err := h.insert(key, cpu)
	if err != nil {
		return -errE2BIG, pcv
	}
	if h.lru {
		pcv[2].Value = ev
	}
	if h.mm.percpu {
		if old == nil {
			for c := range e.vals {
				clear(e.vals[c])
			}
		}
		copy(e.vals[cpu], val)
	} else {
		copy(e.vals[0], val)
	}
	return 0, pcv
}

// del implements bpf_map_delete_elem.
func (h *htab) del(key []byte) (int64, []PCV) {
	e, b, n := h.find(key)
	pcv := []PCV{{"bucket_len", len(h.buckets[b])}, {"traversals", n}}
	if e == nil {
		return -errNOENT, pcv
	}
	h.remove(e, b)
	return 0, pcv
}

// all lists the elements bucket by bucket, each chain from its head.
func (h *htab) all() []*helem {
	var out []*helem
	for _, chain := range h.buckets {
		out = append(out, chain...)
	}
	return out
}

// jhash is the kernel's jhash (include/linux/jhash.h) of a byte string.
func jhash(k []byte, initval uint32) uint32 {
	n := uint32(len(k))
	a := 0xdeadbeef + n + initval
	b, c := a, a
	for len(k) > 12 {
		a += binary.LittleEndian.Uint32(k)
		b += binary.LittleEndian.Uint32(k[4:])
		c += binary.LittleEndian.Uint32(k[8:])
		a, b, c = jmix(a, b, c)
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], k)
	a += binary.LittleEndian.Uint32(tail[:])
	b += binary.LittleEndian.Uint32(tail[4:])
	c += binary.LittleEndian.Uint32(tail[8:])
	_, _, c = jfinal(a, b, c)
	return c
}

// jhash2 is the kernel's jhash2 over the 32-bit words of k.
func jhash2(k []byte, initval uint32) uint32 {
	n := uint32(len(k) / 4)
	a := 0xdeadbeef + n<<2 + initval
	b, c := a, a
	w := func(i int) uint32 { return binary.LittleEndian.Uint32(k[4*i:]) }
	for n > 3 {
		a += w(0)
		b += w(1)
		c += w(2)
		a, b, c = jmix(a, b, c)
		n -= 3
		k = k[12:]
	}
	switch n {
	case 3:
		c += w(2)
		fallthrough
	case 2:
		b += w(1)
		fallthrough
	case 1:
		a += w(0)
		_, _, c = jfinal(a, b, c)
	}
	return c
}

func jmix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= bits.RotateLeft32(c, 4)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 6)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 8)
	b += a
	a -= c
	a ^= bits.RotateLeft32(c, 16)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 19)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 4)
	b += a
	return a, b, c
}

func jfinal(a, b, c uint32) (uint32, uint32, uint32) {
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return a, b, c
}
