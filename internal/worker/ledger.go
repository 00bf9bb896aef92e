package worker

import "time"

// The ledger (docs/branch-worker.md#the-ledger): every change the worker receives — an
// event, or an object a snapshot lists with its document — ends in exactly one outcome,
// counted once, when it ends:
//   - written: in a commit the remote has;
//   - superseded: a later change or snapshot of the same object replaced it before it was
//     written;
//   - unchanged: planning found nothing to do (Git already says so, or the prune mode keeps
//     the document);
//   - released: the worker let go of it: its GitTarget left the branch, or the worker
//     stopped (the next worker's snapshot derives it again; a delete is kept by the
//     journal of deletes).
//
// Until then it is open: in the window, in a closed, held or awaiting batch, in a pending
// write, or refused and kept for a retry. openChanges counts what is open by walking the
// state, independently of the counters, so that received = ended + open is a check of the
// bookkeeping, not a definition of it. A change carries its weight (Event.changes,
// action.changes): what a sweep derives weighs nothing, and a kept refusal weighs what it
// stands for.

const (
	outcomeReceived   = "received"
	outcomeWritten    = "written"
	outcomeSuperseded = "superseded"
	outcomeUnchanged  = "unchanged"
	outcomeReleased   = "released"
)

// Ledger is the worker's count of changes received and of how they ended.
type Ledger struct {
	Received, Written, Superseded, Unchanged, Released int
	// Open is what the worker holds now, counted from its state.
	Open int
}

// Balanced reports whether every change received has ended or is open, and nothing more.
func (l Ledger) Balanced() bool {
	return l.Received == l.Written+l.Superseded+l.Unchanged+l.Released+l.Open
}

// count records n changes with an outcome.
func (s *branchState) count(outcome string, n int) {
	if n <= 0 {
		return
	}
	switch outcome {
	case outcomeReceived:
		s.ledger.Received += n
	case outcomeWritten:
		s.ledger.Written += n
	case outcomeSuperseded:
		s.ledger.Superseded += n
	case outcomeUnchanged:
		s.ledger.Unchanged += n
	case outcomeReleased:
		s.ledger.Released += n
	}
	s.cfg.Metrics.Changes(outcome, n)
}

// publishOpen sets the open-changes gauge, at most once a second: counting walks the state.
func (s *branchState) publishOpen(now time.Time) {
	if now.Sub(s.openPublished) < time.Second {
		return
	}
	s.openPublished = now
	s.cfg.Metrics.ChangesOpen(s.branchLabel, s.openChanges())
}

// ended counts the target's actions with an outcome; written or unchanged, they also end
// the journal's deletes of their objects that they follow (endInJournal; ahead: a write of
// their own batch, not pending yet, comes before them).
func (s *branchState) ended(outcome, target string, actions []action, ahead bool) {
	s.count(outcome, actionChanges(actions))
	if outcome == outcomeWritten || outcome == outcomeUnchanged {
		s.endInJournal(outcome, target, actions, ahead)
	}
}

// ledgerNow is the ledger with what is open now.
func (s *branchState) ledgerNow() Ledger {
	l := s.ledger
	l.Open = s.openChanges()
	return l
}

// openChanges counts the changes the state holds that have not ended.
func (s *branchState) openChanges() int {
	n := 0
	if s.window != nil {
		n += s.window.changes()
	}
	for _, b := range s.closed {
		n += b.changes()
	}
	for _, b := range s.awaiting {
		n += b.changes()
	}
	for _, pw := range s.pending {
		n += actionChanges(pw.actions)
	}
	for _, ts := range s.targets {
		n += ts.keptChanges()
	}
	return n
}

// changes is the weight of a batch: its events' and its snapshots' listed documents.
func (b *batch) changes() int {
	n := eventChanges(b.events)
	for _, snap := range b.snapshots {
		n += snap.changes()
	}
	return n
}

// changes counts the objects a snapshot lists with their documents.
func (snap *Snapshot) changes() int {
	n := 0
	for _, o := range snap.Objects {
		if o.Doc != nil {
			n++
		}
	}
	return n
}

func eventChanges(events []Event) int {
	n := 0
	for _, ev := range events {
		n += ev.changes
	}
	return n
}

func actionChanges(actions []action) int {
	n := 0
	for _, a := range actions {
		n += a.changes
	}
	return n
}

// keptChanges is the weight of the target's kept refused changes.
func (ts *targetState) keptChanges() int {
	n := 0
	for _, c := range ts.retry {
		n += c.ev.changes
	}
	return n
}
