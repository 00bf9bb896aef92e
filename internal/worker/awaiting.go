package worker

import (
	"fmt"
	"slices"
)

// maxAwaiting bounds the batches kept for targets that are not set: a target that never
// comes must not hold memory for ever. What is dropped is re-derived by the snapshot its
// target gets when it is set.
const maxAwaiting = 1024

// awaitTarget keeps a batch of a target that is not set on the worker yet.
func (s *branchState) awaitTarget(b *batch) {
	if len(s.awaiting) >= maxAwaiting {
		dropped := s.awaiting[0]
		s.awaiting = s.awaiting[1:]
		s.count(outcomeReleased, dropped.changes())
		answer(dropped.waiters, SaveResult{Err: fmt.Errorf("GitTarget %s is not configured on this branch", dropped.target)})
		s.cfg.Log.Info("dropped a batch of a GitTarget that is not set; its next snapshot re-derives it", "target", dropped.target)
	}
	s.awaiting = append(s.awaiting, b)
}

// releaseAwaiting moves the kept batches of target, in order, to the batches to plan, ahead
// of the target's batches already queued there: they are older (a batch waits only once a
// plan found its target unset, and later batches of the target may have closed since), and
// a delete planned before the upsert it follows would leave the document in Git.
func (s *branchState) releaseAwaiting(target string) {
	var released []*batch
	kept := s.awaiting[:0]
	for _, b := range s.awaiting {
		if b.target == target {
			released = append(released, b)
			continue
		}
		kept = append(kept, b)
	}
	s.awaiting = kept
	if len(released) == 0 {
		return
	}
	at := slices.IndexFunc(s.closed, func(b *batch) bool { return b.target == target })
	if at < 0 {
		at = len(s.closed)
	}
	s.closed = slices.Insert(s.closed, at, released...)
}

// forgetAwaiting drops the kept batches of a removed target.
func (s *branchState) forgetAwaiting(target string) {
	kept := s.awaiting[:0]
	for _, b := range s.awaiting {
		if b.target == target {
			s.count(outcomeReleased, b.changes())
			answer(b.waiters, SaveResult{Err: fmt.Errorf("GitTarget %s was removed from this branch", target)})
			continue
		}
		kept = append(kept, b)
	}
	s.awaiting = kept
}
