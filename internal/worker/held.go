package worker

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// Nothing that reached the worker is dropped (docs/branch-worker.md#held-changes). A closed
// batch that cannot be written now is held, in order, with the target's later batches,
// and planned again on the target's recheck schedule and after a fetch: its folder is
// refused, the render refuses the batch as a whole, RenderMatchesLive holds the target, or
// planning or committing failed. A change the render refuses for one object only is left
// out of its batch, reported, and kept in the target's refused set, to be tried again when
// the folder changes (a fetch that touches it) or superseded by a later change of the
// object. A held change is superseded by a later snapshot of its scope that lists the
// object (or sweeps), and consecutive held windows of one author are merged, later
// changes of an object replacing earlier ones, so that what is held stays bounded by the
// objects, not by the events.

// heldReason says why some of target's changes are not on the remote and wait for a
// recheck or a change of the folder: a held batch, a write that waits for its folder, or a
// change the render refused and the target keeps. "" when none does.
func (s *branchState) heldReason(target string) string {
	ts := s.targets[target]
	if ts == nil {
		return ""
	}
	why := func() string {
		switch {
		case ts.folder.refused != nil:
			return ts.folder.refused.Error()
		case ts.held != nil:
			return ts.held.Error()
		case ts.boundary != "":
			return ts.boundary
		}
		return "a change the render refused is kept until the folder changes"
	}
	if ts.heldOrRefused() && slices.ContainsFunc(s.closed, func(b *batch) bool { return b.target == target }) {
		return why()
	}
	if slices.ContainsFunc(s.pending, func(pw *pendingWrite) bool { return pw.target == target && !pw.applied }) || len(ts.retry) > 0 {
		return why()
	}
	return ""
}

// answerHeld tells the waiters of a batch that was just held why; they ask again.
func answerHeld(b *batch, err error) {
	answer(b.waiters, SaveResult{Held: err.Error()})
	b.waiters = nil
}

// tellHeld answers the waiters of a batch that waits behind its held target.
func (s *branchState) tellHeld(b *batch) {
	if len(b.waiters) == 0 {
		return
	}
	if reason := s.heldReason(b.target); reason != "" {
		answerHeld(b, errors.New(reason))
	}
}

// waitingToPlan reports a closed batch the next tick would plan: one that is not held
// back for its target's recheck.
func (s *branchState) waitingToPlan() bool {
	for _, b := range s.closed {
		if ts := s.targets[b.target]; ts == nil || !ts.heldOrRefused() || b.jumpsTheQueue() {
			return true
		}
	}
	return false
}

// jumpsTheQueue reports a snapshot not yet tried: it is planned even while its target's
// earlier windows are held, as it supersedes what they hold of its scope.
func (b *batch) jumpsTheQueue() bool { return len(b.snapshots) > 0 && !b.held }

// heldOrRefused reports whether the target's batches wait for a recheck.
func (ts *targetState) heldOrRefused() bool { return ts.folder.refused != nil || ts.held != nil }

// keptRefusal reports whether err refused only single objects of the batch, which the
// target keeps for a retry (the rest of the batch was written).
func keptRefusal(err error) bool {
	var r *writeRefusal
	return errors.As(err, &r) && r.kept
}

// supersede drops from the closed batches what a later snapshot of the same target makes
// stale: an earlier snapshot of the same scope, and the events of an object in its scope
// that it lists (or of any object in its scope when the prune mode sweeps). A batch left
// with nothing hands its waiters to the snapshot that superseded it.
func (s *branchState) supersede() {
	for j, later := range s.closed {
		if len(later.snapshots) == 0 {
			continue
		}
		ts := s.targets[later.target]
		if ts == nil {
			continue
		}
		for i := 0; i < j; i++ {
			b := s.closed[i]
			if b.target != later.target {
				continue
			}
			b.snapshots = slices.DeleteFunc(b.snapshots, func(snap *Snapshot) bool {
				stale := later.lists(snap.Scope)
				if stale {
					s.count(outcomeSuperseded, snap.changes())
				}
				return stale
			})
			var dropped int
			b.events, b.received, dropped = keepEvents(b.events, b.received, func(ev Event) bool {
				return !later.supersedes(ev, ts.cfg.Prune.deletesOnSweep())
			})
			s.count(outcomeSuperseded, dropped)
			if len(b.events) == 0 && len(b.snapshots) == 0 {
				later.waiters = append(later.waiters, b.waiters...)
				b.waiters = nil
			}
		}
	}
	s.closed = dropEmpty(s.closed)
}

// lists reports whether the batch holds a snapshot of scope.
func (b *batch) lists(scope Scope) bool {
	for _, snap := range b.snapshots {
		if snap.Scope == scope {
			return true
		}
	}
	return false
}

// covers reports whether the batch's snapshots state id: they list it with its document,
// or their scope holds it, they do not list it, and a sweep would delete it. An object
// listed without a document (unreadable) is neither written nor swept: not covered.
func (b *batch) covers(id layout.Identity, sweeps bool) bool {
	for _, snap := range b.snapshots {
		if !snap.Scope.contains(id) {
			continue
		}
		for _, o := range snap.Objects {
			if o.ID == id {
				return o.Doc != nil
			}
		}
		if sweeps {
			return true
		}
	}
	return false
}

// supersedes reports whether the batch's snapshots make ev stale. A delete is superseded
// only by a snapshot that lists its object with a document (created again): a sweep that
// finds no document would end nothing, and the journal would keep the delete for ever, so
// the delete is planned and the sweep finds nothing left.
func (b *batch) supersedes(ev Event, sweeps bool) bool {
	return b.covers(ev.ID, sweeps && ev.Op != OpDelete)
}

// coalesceHeld bounds what a held target keeps: an event of an object that a later held
// window of the target changes again is dropped (whoever made either change), and
// consecutive windows of one author are merged.
func (s *branchState) coalesceHeld() {
	later := map[string]map[layout.Identity]*batch{} // per target: the latest window of each object
	for i := len(s.closed) - 1; i >= 0; i-- {
		b := s.closed[i]
		if len(b.snapshots) > 0 || !s.targetHeld(b.target) {
			continue
		}
		seen := later[b.target]
		if seen == nil {
			seen = map[layout.Identity]*batch{}
			later[b.target] = seen
		}
		var heir *batch
		deletes := s.targets[b.target].cfg.Prune.deletesOnEvent()
		b.events, b.received, _ = keepEvents(b.events, b.received, func(ev Event) bool {
			if ev.Op == OpDelete && !deletes {
				// A delete the prune mode ignores must not replace an upsert.
				s.ended(outcomeUnchanged, b.target, []action{{op: ev.Op, id: ev.ID, changes: ev.changes, seq: ev.seq}}, false)
				return false
			}
			if newer, ok := seen[ev.ID]; ok {
				s.count(outcomeSuperseded, ev.changes)
				heir = newer
				return false
			}
			return true
		})
		for _, ev := range b.events {
			seen[ev.ID] = b
		}
		if len(b.events) == 0 && heir != nil {
			heir.waiters = append(heir.waiters, b.waiters...)
			b.waiters = nil
		}
	}
	s.closed = dropEmpty(s.closed)
	out := s.closed[:0]
	for _, b := range s.closed {
		if n := len(out); n > 0 && mergeable(out[n-1], b) && s.targetHeld(b.target) {
			out[n-1].absorb(b)
			continue
		}
		out = append(out, b)
	}
	s.closed = out
}

func (s *branchState) targetHeld(target string) bool {
	ts := s.targets[target]
	return ts != nil && ts.heldOrRefused()
}

func mergeable(a, b *batch) bool {
	return a.target == b.target && a.author == b.author && len(a.snapshots) == 0 && len(b.snapshots) == 0 &&
		a.reason != closeRetry && b.reason != closeRetry
}

// absorb appends b's events to a. coalesceHeld ran first, so no object of b is in a.
func (a *batch) absorb(b *batch) {
	a.events = append(a.events, b.events...)
	a.received = append(a.received, b.received...)
	if b.message != "" {
		a.message = b.message
	}
	a.waiters = append(a.waiters, b.waiters...)
}

// keepEvents filters events (and their arrival times, index for index) in place; dropped
// is the ledger weight of the events it left out.
func keepEvents(events []Event, received []time.Time, keep func(Event) bool) (_ []Event, _ []time.Time, dropped int) {
	outE, outR := events[:0], received[:0]
	for i, ev := range events {
		if !keep(ev) {
			dropped += ev.changes
			continue
		}
		outE = append(outE, ev)
		if i < len(received) {
			outR = append(outR, received[i])
		}
	}
	return outE, outR, dropped
}

func dropEmpty(batches []*batch) []*batch {
	out := batches[:0]
	for _, b := range batches {
		if len(b.events) > 0 || len(b.snapshots) > 0 || len(b.waiters) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// waitsForRecheck reports changes that wait for the recheck: held batches, writes that wait
// for their folder, changes the render refused. The last need no fetch of their own while
// writes are pending: a push to a remote that moved fetches anyway.
func (s *branchState) waitsForRecheck() bool {
	return s.parked() || s.hasUnapplied() || (s.hasRefused() && len(s.pending) == 0)
}

// recheck is the one look again at what waits (docs/branch-worker.md#held-changes): when it
// is due, it fetches and replays, so that a fix pushed to a folder is planned on (rebuildOn
// queues the refused changes of a changed folder again). It reports whether held batches
// are to be planned again now; after a fetch that already brought a held folder's change,
// they are, without fetching again.
func (s *branchState) recheck(ctx context.Context, now time.Time) bool {
	if s.replanHeld {
		s.replanHeld = false
		return true
	}
	if !s.ready || now.Before(s.recheckAt) || now.Before(s.retryAt) || !s.waitsForRecheck() {
		return false
	}
	return s.fetchAndReplay(ctx, now)
}

// scheduleNextRecheck keeps one recheck ahead while anything waits for it (exponential,
// like failures, so that a refused folder never becomes a busy loop), and starts the
// schedule again once nothing does.
func (s *branchState) scheduleNextRecheck(now time.Time) {
	switch {
	case s.waitsForRecheck() && !s.recheckAt.After(now):
		s.scheduleRecheck(now)
	case !s.waitsForRecheck() && !s.hasRefused():
		s.rechecks = 0 // kept refused changes keep their backoff while writes are pushed
	}
}

// nextRecheck is when recheck can act: on its schedule, and not before the branch's retry
// (it fetches). A wake time before either would spin the loop.
func (s *branchState) nextRecheck() (time.Time, bool) {
	switch {
	case s.replanHeld:
		return time.Time{}, true
	case s.waitsForRecheck():
		return latest(s.recheckAt, s.retryAt), true
	}
	return time.Time{}, false
}

// recheckTime is nextRecheck's time, zero when nothing waits.
func (s *branchState) recheckTime() time.Time {
	at, _ := s.nextRecheck()
	return at
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// hasRefused reports targets that keep changes the render refused.
func (s *branchState) hasRefused() bool {
	for _, ts := range s.targets {
		if len(ts.retry) > 0 {
			return true
		}
	}
	return false
}

// refusedChange is a change the render refused for its object alone, kept for a retry.
type refusedChange struct {
	ev Event
	// seq orders it with the pending writes: the decide it came from (branchState.seq).
	seq uint64
}

// clearBoundary clears the reported refusal once nothing refused is kept any more: while a
// refused change waits for its folder, GitPathAccepted stays False.
func (ts *targetState) clearBoundary() {
	if len(ts.retry) == 0 {
		ts.boundary = ""
	}
}

// keepRefused records the changes of objects the render refused, replacing what the target
// kept for them before (superseded). A target with onRefusal: Reapply keeps none of an
// object Git holds: the applier is asked to put Git's state back on the cluster (a Refusal
// apply), which supersedes them (docs/two-way.md). A refused create (Git has no document
// to put back) is kept as under Ignore.
func (s *branchState) keepRefused(ts *targetState, changes []refusedChange) {
	if len(changes) == 0 {
		return
	}
	if ts.cfg.Reapply && ts.cfg.Apply != nil {
		changes = s.reapplyRefused(ts, changes)
	}
	if ts.retry == nil {
		ts.retry = map[layout.Identity]refusedChange{}
	}
	for _, c := range changes {
		have, ok := ts.retry[c.ev.ID]
		switch {
		case !ok:
			ts.retry[c.ev.ID] = c
		case have.seq <= c.seq:
			s.count(outcomeSuperseded, have.ev.changes)
			ts.retry[c.ev.ID] = c
		default:
			s.count(outcomeSuperseded, c.ev.changes)
		}
	}
}

// reapplyRefused supersedes the refused changes of objects Git holds with a Refusal apply,
// and returns the others (creates) to be kept.
func (s *branchState) reapplyRefused(ts *targetState, changes []refusedChange) []refusedChange {
	var creates []refusedChange
	reapply := false
	for _, c := range changes {
		if ts.folder.render(c.ev.ID) == nil { // outside a plan too: taken as a create, kept
			creates = append(creates, c)
			continue
		}
		s.forgetKept(ts, c.ev.ID)
		s.count(outcomeSuperseded, c.ev.changes)
		// A refused delete is undone by the reapply (the applier creates the object
		// again): the journal must not write it through a later worker.
		s.cfg.Journal.forget(ts.cfg.Name, c.ev.ID, c.ev.seq)
		reapply = true
	}
	if reapply {
		ts.markApply(applyRefusal, time.Now())
	}
	return creates
}

// forgetRefused drops the kept changes of the objects the batch changes again: its own
// change of them supersedes the refused one.
func (s *branchState) forgetRefused(ts *targetState, b *batch) {
	for _, ev := range b.events {
		s.forgetKept(ts, ev.ID)
	}
	for id, c := range ts.retry {
		if b.supersedes(c.ev, ts.cfg.Prune.deletesOnSweep()) {
			s.forgetKept(ts, id)
		}
	}
}

// forgetKept drops the kept change of id, superseded.
func (s *branchState) forgetKept(ts *targetState, id layout.Identity) {
	if c, ok := ts.retry[id]; ok {
		s.count(outcomeSuperseded, c.ev.changes)
		delete(ts.retry, id)
	}
}

// retryRefused queues the target's kept changes again, one batch per author: the folder
// changed, so the render may take them now. A kept change that a queued batch or the open
// window changes again is dropped first, and the retries go before the target's queued
// batches, which are newer.
func (s *branchState) retryRefused(ts *targetState, now time.Time) {
	for _, b := range s.closed {
		if b.target == ts.cfg.Name {
			s.forgetRefused(ts, b)
		}
	}
	if s.window != nil && s.window.target == ts.cfg.Name {
		s.forgetRefused(ts, &s.window.batch)
	}
	if len(ts.retry) == 0 {
		return
	}
	byAuthor := map[Author]*batch{}
	var retries []*batch
	ids := make([]layout.Identity, 0, len(ts.retry))
	for id := range ts.retry {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		c := ts.retry[id]
		b := byAuthor[c.ev.Author]
		if b == nil {
			b = &batch{target: ts.cfg.Name, author: c.ev.Author, reason: closeRetry}
			byAuthor[c.ev.Author] = b
			retries = append(retries, b)
		}
		b.events = append(b.events, c.ev)
		b.received = append(b.received, now)
	}
	ts.retry = nil
	at := slices.IndexFunc(s.closed, func(b *batch) bool { return b.target == ts.cfg.Name })
	if at < 0 {
		at = len(s.closed)
	}
	s.closed = slices.Insert(s.closed, at, retries...)
}
