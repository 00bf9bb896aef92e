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

// staleSnapshot reports whether a snapshot of the target taken at takenAt (zero: unknown)
// and arriving now is discarded, and notes that a new one is wanted. It is while Git is
// ahead; and when it was taken while Git was ahead, although the apply answered since (it
// waited in the router, gathered with others, across the apply).
func (s *branchState) staleSnapshot(target string, takenAt, now time.Time) bool {
	ts := s.targets[target]
	if ts == nil || ts.cfg.Apply == nil || !ts.apply.snapshotPlanned {
		return false
	}
	a := &ts.apply
	ahead := !a.gitAheadSince.IsZero() && now.Sub(a.gitAheadSince) <= staleBound
	takenAhead := !takenAt.IsZero() && !a.lastAhead.from.IsZero() &&
		!takenAt.Before(a.lastAhead.from) && takenAt.Before(a.lastAhead.until)
	if !ahead && !takenAhead {
		return false
	}
	a.discarded++
	a.lastDiscard = now
	return true
}

// aheadSpan is a time during which Git was ahead of the cluster: from a Git-side push
// found until the apply asked after it answered.
type aheadSpan struct{ from, until time.Time }

// gitAhead notes that a Git-side push changed the target's folder.
func (ts *targetState) gitAhead(now time.Time) {
	if ts.apply.gitAheadSince.IsZero() {
		ts.apply.gitAheadSince = now
	}
}

// caughtUp notes an apply that answered for a commit asked for after Git got ahead: the
// cluster holds what Git does again.
func (ts *targetState) caughtUp(askedAt, now time.Time) {
	if !ts.apply.gitAheadSince.IsZero() && !askedAt.Before(ts.apply.gitAheadSince) {
		ts.apply.lastAhead = aheadSpan{from: ts.apply.gitAheadSince, until: now}
		ts.apply.gitAheadSince = time.Time{}
	}
}
