package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// action is one decision of a plan. A replay applies exactly these, never a new picture
// of the cluster (docs/branch-worker.md#decide-once, docs/branch-worker.md#replay).
type action struct {
	op    Op
	typ   layout.TypeInfo
	id    layout.Identity
	doc   []byte
	shape sanitize.Shape // of the live document's content (Event.Shape)
	sweep bool           // a delete found by a snapshot's sweep, not a DELETE event
	// live is the live document before the reducer took server defaults out of doc; a
	// retry starts from it.
	live []byte
	// changes is the action's weight in the ledger: the changes received it stands for (0
	// for a sweep's delete, which no change asked for).
	changes int
	// seq is the journal order of the change it comes from (journal.go).
	seq uint64
	// moved is set when a replay refused the action and the target keeps its change for a
	// retry: the kept change stands for it.
	moved bool
	// created is set on an upsert of an object the folder did not hold: an applier of the
	// folder adopts it with its next apply (docs/two-way.md).
	created bool
	// prepared is doc parsed ahead for the layout (reduce_ahead.go), or nil: set only
	// between the plan's reduce and its act.
	prepared *layout.Prepared
}

// operation names the action for metrics: upsert, delete, or prune (a sweep's delete).
func (a action) operation() string {
	switch {
	case a.sweep:
		return "prune"
	case a.op == OpDelete:
		return "delete"
	}
	return "upsert"
}

// pendingWrite is a decided batch committed locally and not yet on the remote.
type pendingWrite struct {
	target  string
	author  Author
	message string
	actions []action
	// commit is the local commit holding the write; "" when, after a replay, the new tip
	// already held everything it decided.
	commit string
	// applied is false while the write could not be replayed on the current tip (its
	// folder is refused); it stays pending and is tried again after the next fetch.
	applied bool
	waiters []chan SaveResult
	// received are the arrival times of the events it holds.
	received []time.Time
	// seq is the order of the decide that made it (branchState.seq).
	seq uint64
	// bootstrap marks a write of a triggered folder's bootstrap files alone
	// (apply_bootstrap.go): a replay writes them again while the folder holds no object.
	bootstrap bool
}

// targetState is the worker's knowledge of one GitTarget writing its branch.
type targetState struct {
	cfg TargetConfig
	// folder is the target's folder on the local tip, and the plan being made on it.
	folder *folder
	// retained counts documents kept by suppressed sweeps, per scope.
	retained map[Scope]int
	// boundary is the last refused write (WriteBoundaryRefused); "" once a write lands.
	boundary string
	// held is why the target's batches wait for a recheck when it is not a refused folder
	// (the render refused a batch as a whole, RenderMatchesLive, a failure); nil otherwise.
	held error
	// retry holds the changes the render refused for their object alone, until the folder
	// changes or a later change of the object supersedes them.
	retry map[layout.Identity]refusedChange
	// fidelity is RenderMatchesLive.
	fidelity fidelityGate
	// journalDue is set until the target's recorded deletes were queued
	// (journal_queue.go); journalSince is when the target was set.
	journalDue   bool
	journalSince time.Time
	// apply is the target's applies, when it names an applier (apply.go).
	apply applyState
	// first follows the target's first mirror while it is planned and pushed; mirrored is
	// set once it is on the remote (progress.go).
	first    *firstMirror
	mirrored bool
}

// decide plans a batch once, on the local tip, and commits it. It returns nil when the
// batch changes nothing: such a write is neither committed nor pushed
// (docs/branch-worker.md#decide-once). A write the render refuses
// (docs/kustomize.md#verification-render, docs/kustomize.md#unplaceable-edits) is left out
// and reported, and the rest of the batch is planned again without it: dropping the others
// would drop changes that reached the API. When a refusal cannot be pinned to one object of the batch, or the
// fidelity gate holds the target back (docs/kustomize.md#render-fidelity), the batch writes
// nothing and returns the reason.
func (s *branchState) decide(ctx context.Context, b *batch) (out *pendingWrite, err error) {
	ts := s.targets[b.target]
	if ts == nil {
		return nil, fmt.Errorf("GitTarget %s is not configured on this branch", b.target)
	}
	f := ts.folder
	if err := f.begin(s.localTip); err != nil {
		return nil, fmt.Errorf("GitTarget %s: %w", b.target, err)
	}
	// The plan moves the index along its edits: it is kept when they are committed.
	committed := false
	defer func() { f.end(committed) }()
	if b.author.Name == "" {
		// Without attribution the committer is the author, in the message as in the commit.
		b.author = s.cfg.Committer
	}
	s.forgetRefused(ts, b)
	s.seq++
	seq := s.seq
	s.beginFirstMirror(ts, b)
	defer func() {
		var refusal *writeRefusal
		if err == nil || (errors.As(err, &refusal) && refusal.kept) {
			// Written, or done with its refused objects kept for a retry.
			s.firstMirrorDecided(ts, b, out)
		}
	}()
	ts.fidelity.remeasure(f.render) // the plan has no edit yet: the render at the tip
	for _, snap := range b.snapshots {
		ts.fidelity.rescope(snap.Scope)
	}
	excluded := map[string]bool{}
	var refusals []error // the verification's refusals, one per object left out
	var kept []refusedChange
	var p plannedBatch
	for {
		p = s.planBatch(ctx, ts, b, excluded)
		if f.refused != nil {
			// A file read in full for the first time cannot be understood.
			return nil, fmt.Errorf("GitTarget %s: %w", b.target, f.refused)
		}
		if p.failed != nil {
			// The index could not follow one object's edit: that object is refused and the
			// batch planned again from the tip without it.
			id := p.failedAction.id.String()
			if excluded[id] {
				return nil, fmt.Errorf("GitTarget %s: %w", b.target, p.failed)
			}
			excluded[id] = true
			refusals = append(refusals, p.failed)
			kept = append(kept, refusedChanges([]action{p.failedAction}, b.target, b.author, seq)...)
			if err := f.begin(s.localTip); err != nil {
				return nil, fmt.Errorf("GitTarget %s: %w", b.target, err)
			}
			continue
		}
		if p.refusal == nil {
			break
		}
		object, ok := refusedObject(p.refusal, p.actions)
		if !ok || excluded[object] {
			s.reportRefusals(ts, append(refusals, p.objectRefusals...))
			return nil, s.refuseBatch(ts, b.target, p.refusal)
		}
		excluded[object] = true
		refusals = append(refusals, p.refusal)
		objectActions := slices.DeleteFunc(slices.Clone(p.actions), func(a action) bool { return a.id.String() != object })
		kept = append(kept, refusedChanges(objectActions, b.target, b.author, seq)...)
		if err := f.begin(s.localTip); err != nil { // plan again from the tip
			return nil, fmt.Errorf("GitTarget %s: %w", b.target, err)
		}
	}
	refusals = append(refusals, p.objectRefusals...)
	kept = weighKept(append(kept, refusedChanges(p.refusedActions, b.target, b.author, seq)...), p.excluded)
	if ts.fidelity.blocked() {
		s.cfg.Metrics.Refused("render-does-not-match-live")
		return nil, &writeRefusal{target: b.target, err: &blockedError{d: ts.fidelity.first()}}
	}
	// From here on the batch ends: its refused changes are kept, the rest is counted.
	consume := func(committing bool) {
		s.reportRefusals(ts, refusals)
		s.keepRefused(ts, kept)
		s.ended(outcomeUnchanged, b.target, p.unchanged, committing)
	}
	if len(p.actions) == 0 {
		consume(false)
		if len(refusals) > 0 {
			return nil, &writeRefusal{target: b.target, err: refusals[0], kept: true}
		}
		ts.clearBoundary()
		return s.bootstrapTriggered(ts, b, seq, &committed)
	}
	if err := f.bootstrap(ts.cfg.SOPSRules); err != nil {
		return nil, fmt.Errorf("bootstrap %s: %w", ts.cfg.Name, err)
	}
	if len(p.actions) < cap(p.actions)/2 {
		p.actions = slices.Clone(p.actions) // most planned to nothing: hold no more than the rest
	}
	pw := &pendingWrite{target: b.target, author: b.author, actions: p.actions, waiters: b.waiters, received: b.received, seq: seq}
	pw.message = s.messages.render(b, &p.changes)
	commit, err := s.commit(f.changes(), pw)
	if err != nil {
		return nil, err
	}
	committed = true // or the edits changed nothing: the index matches the local tip either way
	consume(commit != "")
	if commit == "" {
		s.ended(outcomeUnchanged, b.target, p.actions, false)
		return nil, nil
	}
	pw.commit, pw.applied = commit, true
	if len(refusals) == 0 {
		ts.clearBoundary()
	}
	s.cfg.Metrics.Commit()
	for _, a := range p.actions {
		s.cfg.Metrics.DocumentWritten(a.operation())
	}
	return pw, nil
}

// plannedBatch is one planning pass over a batch.
type plannedBatch struct {
	actions []action
	changes changeList
	// objectRefusals are writes the render refused while planning them (unplaceable,
	// outside the folder, fan-in): they were left out and changed nothing.
	objectRefusals []error
	// refusedActions are the actions of objectRefusals, kept for a retry.
	refusedActions []action
	// refusal is the verification render's refusal of the whole pass, if any.
	refusal error
	// failed is a failure that leaves the pass unusable (the folder index could not follow
	// the edit of failedAction's object): the pass is planned again without that object.
	failed       error
	failedAction action
	// unchanged are the changes that planned to nothing; excluded is, per object left out,
	// the ledger weight of its changes, which its kept change stands for.
	unchanged []action
	excluded  map[string]int
}

// planBatch plans every action of the batch but those of excluded objects on the target's
// folder plan, and verifies the result against the render.
func (s *branchState) planBatch(ctx context.Context, ts *targetState, b *batch, excluded map[string]bool) plannedBatch {
	f := ts.folder
	// Room for as many actions as the batch holds changes and listed objects (a sweep's
	// deletes are added as they are found): a first mirror's are held until its push lands.
	size := len(b.events)
	for _, snap := range b.snapshots {
		size += len(snap.Objects)
	}
	p := plannedBatch{excluded: map[string]int{}, actions: make([]action, 0, size)}
	if ts.first != nil {
		ts.first.written = 0 // a batch planned again counts again
	}
	var ahead map[layout.Identity]reducedAhead // the Reducer's answers asked together
	decideOne := func(a action) {
		if p.failed != nil {
			return
		}
		if excluded[a.id.String()] {
			p.excluded[a.id.String()] += a.changes
			return
		}
		live := a
		if a.op == OpUpsert {
			render := f.render(a.id)
			a.created = render == nil
			ts.fidelity.measure(a.id, render, a.doc)
			a.doc, a.prepared = s.reduced(ctx, ts, a, render, ahead)
		} else {
			ts.fidelity.forget(a.id) // a deleted object holds no value to diverge
		}
		edits, err := f.act(a, ts.cfg.Placement)
		a.prepared = nil // written once; its parse is not held to the commit
		if err != nil && f.broken() {
			p.failed, p.failedAction = err, live
			return
		}
		if err != nil {
			// Nothing of it was applied; it is reported on the target and kept for a retry.
			p.objectRefusals = append(p.objectRefusals, err)
			p.refusedActions = append(p.refusedActions, live)
			return
		}
		if len(edits) == 0 {
			p.unchanged = append(p.unchanged, a)
			return // unchanged object: no action
		}
		a.live = live.doc
		p.actions = append(p.actions, a)
		p.changes.add(a, func() string { return f.path(edits[0].Path) })
	}

	// Decided in chunks: a chunk's upserts are prepared together (the Reducer's questions,
	// the parse), the next chunk's while this one is decided.
	decideAll := func(next actionSource) {
		// A plan that fails stops the chunk being prepared (its answers would be dropped)
		// and waits for it: nothing prepared runs past the plan.
		aheadCtx, cancel := context.WithCancel(ctx)
		coming := next(reduceChunk)
		prepared := s.reduceAhead(aheadCtx, ts, notExcluded(coming, excluded))
		defer func() { cancel(); prepared() }()
		for len(coming) > 0 && p.failed == nil {
			chunk := coming
			coming = next(reduceChunk)
			ahead = prepared()
			prepared = s.reduceAhead(aheadCtx, ts, notExcluded(coming, excluded))
			for _, a := range chunk {
				decideOne(a)
				s.planned(ts)
			}
		}
	}
	actions := make([]action, 0, len(b.events))
	for _, ev := range b.events {
		if ev.Op == OpDelete && !ts.cfg.Prune.deletesOnEvent() {
			// The prune mode keeps the document.
			p.unchanged = append(p.unchanged, action{op: ev.Op, id: ev.ID, changes: ev.changes, seq: ev.seq})
			continue
		}
		actions = append(actions, action{op: ev.Op, typ: ev.Type, id: ev.ID, doc: ev.Doc, shape: ev.Shape, changes: ev.changes, seq: ev.seq})
	}
	decideAll(sliceSource(actions))
	for _, snap := range b.snapshots {
		if p.failed != nil {
			return p // the index is gone: no sweep can be planned on it
		}
		upserts, deletes, retained := f.sweep(snap, ts.cfg.Prune)
		if ts.retained == nil {
			ts.retained = map[Scope]int{}
		}
		ts.retained[snap.Scope] = retained
		decideAll(upserts)
		if p.failed == nil {
			if n := len(p.actions) + len(deletes); n > cap(p.actions) {
				p.actions = append(make([]action, 0, n), p.actions...) // room for exactly these
			}
			decideAll(sliceSource(deletes))
		}
	}
	if p.failed != nil {
		return p
	}
	p.refusal = f.verify()
	return p
}

// notExcluded are the actions of objects the pass does not leave out.
func notExcluded(actions []action, excluded map[string]bool) []action {
	if len(excluded) == 0 {
		return actions
	}
	out := make([]action, 0, len(actions))
	for _, a := range actions {
		if !excluded[a.id.String()] {
			out = append(out, a)
		}
	}
	return out
}

// refusedChanges turns actions of target's write by author back into the changes they came
// from (the live documents, before the reducer), kept for a retry.
func refusedChanges(actions []action, target string, author Author, seq uint64) []refusedChange {
	out := make([]refusedChange, 0, len(actions))
	for _, a := range actions {
		if a.moved {
			continue // kept already, with its weight
		}
		doc := a.doc
		if a.live != nil {
			doc = a.live
		}
		ev := Event{Target: target, Author: author, Op: a.op, Type: a.typ, ID: a.id, Doc: doc, Shape: a.shape, changes: a.changes, seq: a.seq}
		out = append(out, refusedChange{ev: ev, seq: seq})
	}
	return out
}

// weighKept gives each object left out of a batch the weight of all its changes in the
// batch: its last kept change stands for them, the others weigh nothing.
func weighKept(kept []refusedChange, excluded map[string]int) []refusedChange {
	last := map[string]int{}
	for i, c := range kept {
		if _, ok := excluded[c.ev.ID.String()]; ok {
			kept[i].ev.changes = 0
			last[c.ev.ID.String()] = i
		}
	}
	for id, i := range last {
		kept[i].ev.changes = excluded[id]
	}
	return kept
}

// refusedObject names the object of the batch a verification refusal is about, when it is
// one the pass wrote.
func refusedObject(refusal error, actions []action) (string, bool) {
	var r *kustomize.RefusalError
	if !errors.As(refusal, &r) {
		return "", false
	}
	for _, a := range actions {
		if a.id.String() == r.Object {
			return r.Object, true
		}
	}
	return "", false
}

// reportRefusals records refused writes for the target's status and metrics.
func (s *branchState) reportRefusals(ts *targetState, refused []error) {
	for _, err := range refused {
		s.cfg.Metrics.Refused(refusalCode(err))
		s.noteError(fmt.Errorf("GitTarget %s: %w", ts.cfg.Name, err))
	}
	if len(refused) > 0 {
		ts.boundary = refused[0].Error()
	}
}

// refuseBatch turns the render's refusal of a batch into the batch's error, and records
// it for the target's status. It returns nil when there is none.
func (s *branchState) refuseBatch(ts *targetState, target string, refusal error) error {
	if refusal == nil {
		return nil
	}
	ts.boundary = refusal.Error()
	s.cfg.Metrics.Refused(refusalCode(refusal))
	return &writeRefusal{target: target, err: refusal}
}

// commit writes a plan's changes as a commit on the local tip and advances the local tip.
// It returns "" when they change nothing.
func (s *branchState) commit(changes []gitrepo.Change, pw *pendingWrite) (string, error) {
	now := time.Now()
	author := pw.author
	if author.Name == "" {
		author = s.cfg.Committer
	}
	commit, err := s.repo.Commit(s.localTip, changes, gitrepo.CommitSpec{
		Author:    gitrepo.Signature{Name: author.Name, Email: author.Email, When: now},
		Committer: gitrepo.Signature{Name: s.cfg.Committer.Name, Email: s.cfg.Committer.Email, When: now},
		Message:   pw.message,
		Signer:    s.signer,
	})
	if errors.Is(err, gitrepo.ErrNothingToCommit) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("commit for %s: %w", pw.target, err)
	}
	s.localTip = commit
	return commit, nil
}

// replay re-applies a pending write's decided actions on the local tip
// (docs/branch-worker.md#replay). Deletes are applied only while the target's prune mode
// still allows them; nothing is re-swept.
func (s *branchState) replay(pw *pendingWrite) error {
	s.cfg.Metrics.Replay()
	pw.commit, pw.applied = "", false
	ts := s.targets[pw.target]
	if ts == nil {
		return fmt.Errorf("GitTarget %s was removed; its pending write is discarded", pw.target)
	}
	f := ts.folder
	if err := f.begin(s.localTip); err != nil {
		return fmt.Errorf("GitTarget %s: %w", pw.target, err)
	}
	committed := false
	defer func() { f.end(committed) }()
	changed := false
	for i, a := range pw.actions {
		if a.op == OpDelete && ((a.sweep && !ts.cfg.Prune.deletesOnSweep()) || !ts.cfg.Prune.deletesOnEvent()) {
			s.ended(outcomeUnchanged, pw.target, []action{a}, true) // the prune mode now keeps the document
			pw.actions[i].changes, pw.actions[i].seq = 0, 0
			continue
		}
		edits, err := f.act(a, ts.cfg.Placement)
		changed = changed || len(edits) > 0
		if err != nil && f.broken() {
			// The index could not follow the edit: the write is refused on this tip and its
			// changes kept for a retry (rebuildOn), as for a refusal of the render.
			return &writeRefusal{target: pw.target, err: err}
		}
		if err != nil {
			if refusalCode(err) != "object" {
				return s.refuseBatch(ts, pw.target, err)
			}
			// The new tip refuses this object alone: reported, and kept for a retry.
			s.reportRefusals(ts, []error{err})
			s.keepRefused(ts, refusedChanges([]action{a}, pw.target, pw.author, pw.seq))
			pw.actions[i].changes, pw.actions[i].seq, pw.actions[i].moved = 0, 0, true // the kept change stands for it now
		}
	}
	if err := s.refuseBatch(ts, pw.target, f.verify()); err != nil {
		return err
	}
	if !changed && !(pw.bootstrap && f.index.Len() == 0) {
		// The new tip holds everything the write decided: nothing to commit, not even the
		// bootstrap files a write would bring.
		pw.applied, committed = true, true
		return nil
	}
	if err := f.bootstrap(ts.cfg.SOPSRules); err != nil {
		return fmt.Errorf("bootstrap %s: %w", ts.cfg.Name, err)
	}
	commit, err := s.commit(f.changes(), pw)
	if err != nil {
		return err
	}
	pw.commit, pw.applied, committed = commit, true, true
	return nil
}
