package bound

// When the search stops dispatching paths: limits, and the tolerance.

// capped: the search has dispatched as many paths as MaxChecks allows,
// or its heap reached MaxHeap.
func (s *search) capped() bool {
	return s.opts.MaxChecks > 0 && s.next >= s.opts.MaxChecks || s.heapFull()
}

// stopped: nothing in flight and nothing more worth dispatching.
func (s *search) stopped() bool {
	key, ok := s.ord.Peek()
	return !ok || !s.worth(key)
}

// worth says whether a path whose metric is at least key could still
// lower the bound by more than the tolerance.
func (s *search) worth(key float64) bool {
	return key < s.best*(1-s.opts.Tolerance)
}

// tolerated says whether the search ended within the tolerance rather
// than decided: paths were left unchecked that cannot lower the bound by
// more than the tolerance.
func (s *search) tolerated() bool {
	if s.opts.Tolerance <= 0 || s.final {
		return false
	}
	key, ok := s.ord.Peek()
	return ok && key < s.best && !s.worth(key)
}
