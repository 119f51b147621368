package perfiface

import (
	"container/heap"
	"context"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/symex"
)

// The exploration is a depth-first walk per worker. At a branch, a worker
// continues on one side and leaves the others as tasks; it comes back to
// them when its side is done, unless an idle worker took one meanwhile.
// Idle workers take the shallowest task there is, so that what moves
// between solvers is a large subtree: a solver that changes paths has to
// drop and rebuild its assertions, and keeps nothing of the model that
// decides many sides without a check.

// task is one side of a branch left for later.
type task struct {
	edges   []int32 // the prefix, ending with the side's edge
	parent  smt.Result
	depth   int           // decisions above the side
	decided bool          // result is known without a check
	result  smt.Result    // when decided
	claimed bool          // a worker runs it (guarded by explorer.mu)
	index   int           // in the heap, while unclaimed
	done    chan struct{} // closed when node and err are set
	node    *Node
	err     error
}

// tasks is a heap of unclaimed tasks, shallowest first.
type tasks []*task

func (h tasks) Len() int           { return len(h) }
func (h tasks) Less(i, j int) bool { return len(h[i].edges) < len(h[j].edges) }
func (h tasks) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *tasks) Push(v any) {
	t := v.(*task)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *tasks) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// leave makes a side available to idle workers.
func (x *explorer) leave(t *task) {
	x.mu.Lock()
	heap.Push(&x.pending, t)
	close(x.wake)
	x.wake = make(chan struct{})
	x.mu.Unlock()
}

// claim takes t for the calling worker if no one has.
func (x *explorer) claim(t *task) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if t.claimed {
		return false
	}
	t.claimed = true
	heap.Remove(&x.pending, t.index)
	return true
}

// take claims the shallowest unclaimed task, and returns nil and the
// channel that closes at the next leave when there is none.
func (x *explorer) take() (*task, <-chan struct{}) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.pending) == 0 {
		return nil, x.wake
	}
	t := heap.Pop(&x.pending).(*task)
	t.claimed = true
	return t, nil
}

// run explores a claimed task on c.
func (x *explorer) run(ctx context.Context, c *symex.Checker, t *task) {
	defer close(t.done)
	t.err = fail.Guard(func() error {
		r := t.result
		if !t.decided {
			var err error
			if r, err = x.extend(ctx, c, t.edges, t.parent); err != nil {
				return err
			}
		}
		if r != smt.Unsat {
			var err error
			t.node, err = x.dfs(ctx, c, t.edges, x.g.Edges[t.edges[len(t.edges)-1]].To, r, t.depth)
			return err
		}
		return nil
	})
}

// await returns when t is done: the caller runs it if no one took it, and
// otherwise helps with other tasks while it waits.
func (x *explorer) await(ctx context.Context, c *symex.Checker, t *task) {
	if x.claim(t) {
		x.run(ctx, c, t)
		return
	}
	for {
		select {
		case <-t.done:
			return
		default:
		}
		u, wake := x.take()
		if u != nil {
			x.run(ctx, c, u)
			continue
		}
		select {
		case <-t.done:
			return
		case <-wake:
		}
	}
}

// serve is an idle worker: it runs the shallowest task until the
// exploration ends.
func (x *explorer) serve(ctx context.Context, c *symex.Checker, end <-chan struct{}) {
	for {
		u, wake := x.take()
		if u != nil {
			x.run(ctx, c, u)
			continue
		}
		select {
		case <-end:
			return
		case <-wake:
		}
	}
}
