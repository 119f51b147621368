package pathenum

// list is a node's prefix list. Its first chunk grows by doubling up to
// chunkLen elements, and later ones are allocated whole: the sink's list
// holds an element for every path produced, and a list millions of
// elements long that grew by doubling would be copied whole at every
// growth, with both copies live, while chunks are never copied.
type list struct {
	chunks [][]elem
	n      int32
}

const chunkLen = 1 << 14 // elements: 384 KiB

func (l *list) len() int32 { return l.n }

func (l *list) at(k int32) *elem { return &l.chunks[k/chunkLen][k%chunkLen] }

func (l *list) push(el elem) {
	if l.n < chunkLen {
		if len(l.chunks) == 0 {
			l.chunks = [][]elem{nil}
		}
		l.chunks[0] = append(l.chunks[0], el)
	} else {
		if l.n%chunkLen == 0 {
			l.chunks = append(l.chunks, make([]elem, 0, chunkLen))
		}
		c := &l.chunks[len(l.chunks)-1]
		*c = append(*c, el)
	}
	l.n++
}
