package worker

import "time"

// staleBound is how long snapshots of a target whose Git is ahead of the cluster are
// discarded: past it (the applier keeps failing), they are written as usual.
const staleBound = 5 * time.Minute

// A snapshot lists the cluster as it is. While Git is ahead of it — a Git-side push to a
// triggered folder that the applier has not applied yet — the snapshot holds the objects the
// push changed as they were before it, and writing it would revert the push in Git
// (docs/two-way.md#snapshots-while-git-is-ahead). Such a snapshot is discarded, and a new
// one is asked for once the apply landed (ApplyStatus.Resnapshot, which the GitTarget
// reconciler turns into renewed subscriptions, once per discard number). A target's first snapshot is never
// discarded: it is what a catch-up waits for.

// staleSnapshot reports whether a snapshot of the target arriving now is discarded, and
// notes that a new one is wanted.
func (s *branchState) staleSnapshot(target string, now time.Time) bool {
	ts := s.targets[target]
	if ts == nil || ts.cfg.Apply == nil || !ts.apply.snapshotPlanned {
		return false
	}
	a := &ts.apply
	if a.gitAheadSince.IsZero() || now.Sub(a.gitAheadSince) > staleBound {
		return false
	}
	a.discarded++
	a.lastDiscard = now
	return true
}

// gitAhead notes that a Git-side push changed the target's folder.
func (ts *targetState) gitAhead(now time.Time) {
	if ts.apply.gitAheadSince.IsZero() {
		ts.apply.gitAheadSince = now
	}
}

// caughtUp notes an apply that answered for a commit asked for after Git got ahead: the
// cluster holds what Git does again.
func (ts *targetState) caughtUp(askedAt time.Time) {
	if !ts.apply.gitAheadSince.IsZero() && !askedAt.Before(ts.apply.gitAheadSince) {
		ts.apply.gitAheadSince = time.Time{}
	}
}
