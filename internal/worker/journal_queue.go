package worker

import (
	"slices"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// journalPoll is how often a worker that waits for the journal to be loaded looks again.
const journalPoll = 200 * time.Millisecond

// journalWait is how long the recorded deletes of a target just set wait for the target's
// first snapshot, so that a snapshot listing an object created again supersedes its
// delete. A scope whose snapshot never comes (its stream cannot list) lets them go after it.
const journalWait = 2 * time.Minute

// queueJournal queues, for each target set on the worker, the deletes the journal keeps for
// it that the worker does not hold a newer change of, one batch per author: they were
// handed to an earlier worker (or to this one before the target was removed). Those still
// in this worker's inbox are not: they arrive in their order, behind older changes. They wait
// for the target's first snapshot batch, or journalWait. A delete goes right after the last
// of the target's batches that holds an older change of its object (a snapshot listing it,
// an upsert), so that nothing older brings back what it removed; with none it goes ahead of
// the target's batches, so that a snapshot taken later, listing an object created again,
// supersedes it. Each is a change received.
func (s *branchState) queueJournal(now time.Time) {
	for name, ts := range s.targets {
		if !ts.journalDue {
			continue
		}
		snapshotQueued := slices.ContainsFunc(s.closed, func(b *batch) bool { return b.target == name && len(b.snapshots) > 0 })
		if !snapshotQueued && now.Before(ts.journalSince.Add(journalWait)) {
			continue
		}
		ts.journalDue = false
		if s.window != nil && s.window.target == name {
			// An older change in the open window would land after the delete.
			s.closeWindow(closeJournal)
		}
		newest := s.newestChanges(name)
		type place struct {
			at     int
			author Author
		}
		var places []place
		byPlace := map[place]*batch{}
		for _, ev := range s.cfg.Journal.pending(name, s.worker) {
			if newest[ev.ID] >= ev.seq {
				continue // the worker holds this delete, or a newer change of the object
			}
			p := place{at: s.placeOfDelete(name, ev.ID), author: ev.Author}
			b := byPlace[p]
			if b == nil {
				b = &batch{target: name, author: ev.Author, reason: closeJournal}
				byPlace[p] = b
				places = append(places, p)
			}
			ev.changes = 1
			b.events = append(b.events, ev)
			b.received = append(b.received, now)
			s.count(outcomeReceived, 1)
		}
		if len(places) == 0 {
			continue
		}
		s.cfg.Log.Info("queued the deletes an earlier worker received", "target", name, "batches", len(places))
		// From the last place to the first, so that the earlier indices stay valid; batches
		// of one place keep the order of their first delete.
		slices.SortStableFunc(places, func(a, b place) int { return b.at - a.at })
		for i := 0; i < len(places); {
			j := i
			var group []*batch
			for ; j < len(places) && places[j].at == places[i].at; j++ {
				group = append(group, byPlace[places[j]])
			}
			s.closed = slices.Insert(s.closed, places[i].at, group...)
			i = j
		}
	}
}

// placeOfDelete is the index in s.closed a recorded delete of the target's object goes to:
// after the last of the target's batches holding a change of the object (all older than the
// delete: a newer one skips it), else ahead of the target's first batch, else at the end.
func (s *branchState) placeOfDelete(target string, id layout.Identity) int {
	first := -1
	for i := len(s.closed) - 1; i >= 0; i-- {
		b := s.closed[i]
		if b.target != target {
			continue
		}
		if b.holds(id) {
			return i + 1
		}
		first = i
	}
	if first < 0 {
		return len(s.closed)
	}
	return first
}

// holds reports whether the batch has a change of the object: an event, or a snapshot that
// lists it.
func (b *batch) holds(id layout.Identity) bool {
	for _, ev := range b.events {
		if ev.ID == id {
			return true
		}
	}
	for _, snap := range b.snapshots {
		for _, o := range snap.Objects {
			if o.ID == id {
				return true
			}
		}
	}
	return false
}

// journalWake is when queueJournal next has something to decide: a target whose deletes
// wait for its first snapshot.
func (s *branchState) journalWake() (time.Time, bool) {
	var at time.Time
	found := false
	for _, ts := range s.targets {
		if ts.journalDue && (!found || ts.journalSince.Before(at)) {
			at, found = ts.journalSince, true
		}
	}
	return at.Add(journalWait), found
}

// newestChanges maps each object of target to the stamp of the newest change of it the
// worker holds: in the window, a batch, a pending write, or kept after a refusal.
func (s *branchState) newestChanges(target string) map[layout.Identity]uint64 {
	newest := map[layout.Identity]uint64{}
	note := func(id layout.Identity, seq uint64) { newest[id] = max(newest[id], seq) }
	batches := append(slices.Clone(s.closed), s.awaiting...)
	if s.window != nil {
		batches = append(batches, &s.window.batch)
	}
	for _, b := range batches {
		if b.target != target {
			continue
		}
		for _, ev := range b.events {
			note(ev.ID, ev.seq)
		}
		for _, snap := range b.snapshots {
			for _, o := range snap.Objects {
				note(o.ID, snap.seq)
			}
		}
	}
	for _, pw := range s.pending {
		if pw.target == target {
			for _, a := range pw.actions {
				note(a.id, a.seq)
			}
		}
	}
	if ts := s.targets[target]; ts != nil {
		for id, c := range ts.retry {
			note(id, c.ev.seq)
		}
	}
	for k, seq := range s.marks { // found unchanged, not yet ended in the journal
		if k.target == target {
			note(k.id, seq)
		}
	}
	return newest
}

// forgetMarks drops the target's marks: what made them unchanged (its pending writes) is
// gone, so the deletes they would end must stay in the journal.
func (s *branchState) forgetMarks(target string) {
	for k := range s.marks {
		if k.target == target {
			delete(s.marks, k)
		}
	}
}

// journalMark is a change found unchanged on the local tip while writes were pending: the
// journal forgets the deletes it ends only once everything before it is on the remote.
type journalMark struct {
	target string
	id     layout.Identity
}

// endInJournal ends, in the journal, the deletes that the target's actions follow: written
// ones are on the remote; unchanged ones are so on the local tip, which the remote has when
// nothing is pending and ahead is false (else they wait for settle). ahead is set when a
// write not yet in s.pending comes before them (the commit of their own batch).
func (s *branchState) endInJournal(outcome, target string, actions []action, ahead bool) {
	for _, a := range actions {
		switch {
		case a.seq == 0:
		case outcome == outcomeWritten || (len(s.pending) == 0 && !ahead):
			s.cfg.Journal.forget(target, a.id, a.seq)
		case s.cfg.Journal.holds(target, a.id):
			k := journalMark{target, a.id}
			if s.marks == nil {
				s.marks = map[journalMark]uint64{}
			}
			s.marks[k] = max(s.marks[k], a.seq)
		}
	}
}

// settleMarks ends the marked deletes once nothing is pending, but those of objects the
// target keeps a refused change of (a pending write refused on a new tip).
func (s *branchState) settleMarks() {
	if len(s.pending) > 0 {
		return
	}
	for k, seq := range s.marks {
		if ts := s.targets[k.target]; ts != nil {
			if _, kept := ts.retry[k.id]; kept {
				continue
			}
		}
		s.cfg.Journal.forget(k.target, k.id, seq)
	}
	s.marks = nil
}
