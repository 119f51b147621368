package sim

// event is a scheduled step of one request.
type event struct {
	t    float64
	kind uint8
	id   int32
	seq  uint64 // ties in time go in scheduling order
}

const (
	evArrive uint8 = iota // a new packet enters
	evAtNode              // a request reaches a vertex
	evDone                // an engine finishes a request
	evHop                 // a request finishes one transfer stage of an edge
)

// evHeap is a binary min-heap of events by time.
type evHeap []event

func less(a, b *event) bool { return a.t < b.t || a.t == b.t && a.seq < b.seq }

func (h *evHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(&s[i], &s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *evHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && less(&s[r], &s[l]) {
			m = r
		}
		if !less(&s[m], &s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
