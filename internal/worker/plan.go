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
)

// action is one decision of a plan. A replay applies exactly these, never a new picture
// of the cluster (docs/branch-worker.md#decide-once, docs/branch-worker.md#replay).
type action struct {
	op    Op
	typ   layout.TypeInfo
	id    layout.Identity
	doc   []byte
	sweep bool // a delete found by a snapshot's sweep, not a DELETE event
	// live is the live document before the reducer took server defaults out of doc; a
	// retry starts from it.
	live []byte
	// changes is the action's weight in the ledger: the changes received it stands for (0
	// for a sweep's delete, which no change asked for).
	changes int
	// seq is the journal order of the change it comes from (journal.go).
	seq uint64
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
}

// targetState is the worker's knowledge of one GitTarget writing its branch.
type targetState struct {
	cfg    TargetConfig
	prefix string
	// index maps identities to files at the local tip; nil means rebuild before use.
	index *layout.Index
	// refused is set while the folder holds content the writer cannot understand.
	refused error
	// retained counts documents kept by suppressed sweeps, per scope.
	retained map[Scope]int

	// kust is the folder's kustomize view during one plan; nil when the folder holds no
	// kustomization or no plan is being made. kustomized remembers that it has one.
	kust       *kustomize.Folder
	kustomized bool
	// expect maps the objects the plan edited through the render to their live documents
	// (nil: deleted), for the verification render.
	expect map[layout.Identity][]byte
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
	// journalDue is set until the target's recorded deletes were queued (journal.go).
	journalDue bool
}

// ensureIndex builds the target's index at the local tip when it has none.
func (s *branchState) ensureIndex(ts *targetState) error {
	if ts.index != nil {
		return nil
	}
	files, err := s.repo.ReadFiles(s.localTip, ts.prefix)
	if err != nil {
		return err
	}
	lf := make([]layout.File, len(files))
	for i, f := range files {
		lf[i] = layout.File{Path: f.Path, Content: f.Content, Mode: layoutMode(f.Mode)}
	}
	kz, err := s.loadKustomize(ts, files)
	if err != nil {
		if _, unsupported := err.(*layout.UnsupportedContentError); unsupported {
			ts.refused = err
		}
		return err
	}
	var context []string
	if kz != nil {
		context = kz.ContextFiles()
	}
	ix, err := layout.BuildIndexWithContext(lf, context)
	if err != nil {
		ts.refused = err
		return err
	}
	if kz != nil {
		ix.SetRenderRoots(kz.Roots())
	}
	ts.index, ts.refused, ts.kust, ts.kustomized = ix, nil, kz, kz != nil
	return nil
}

// layoutMode maps a tree entry's kind to the layout's; the two packages keep their own
// types so that the layout stays free of Git.
func layoutMode(m gitrepo.FileMode) layout.FileMode {
	switch m {
	case gitrepo.ModeExecutable:
		return layout.ModeExecutable
	case gitrepo.ModeSymlink:
		return layout.ModeSymlink
	case gitrepo.ModeSubmodule:
		return layout.ModeSubmodule
	default:
		return layout.ModeRegular
	}
}

// applyAction runs one action through the layout and lays its edits over the view.
func (s *branchState) applyAction(v *treeView, ts *targetState, a action) ([]layout.FileEdit, error) {
	if ts.index == nil {
		return nil, fmt.Errorf("%s %s: the folder index was dropped by an earlier failure in this batch", a.op, a.id)
	}
	var edits []layout.FileEdit
	var err error
	handled := false
	if ts.kust != nil {
		edits, handled, err = s.planKustomize(v, ts, a)
	}
	switch {
	case handled:
	case a.op == OpDelete:
		edits, err = layout.Delete(ts.index, v.read, a.id)
	default:
		edits, err = layout.Upsert(ts.index, v.read, a.typ, a.doc, ts.cfg.Placement)
	}
	if err == nil {
		err = s.noteKustomizeEdits(ts, a, edits)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", a.op, a.id, err)
	}
	if err := v.apply(edits, ts.index); err != nil {
		ts.index = nil // rebuilt from the tree on next use
		return nil, fmt.Errorf("%s %s: %w", a.op, a.id, err)
	}
	return edits, nil
}

// decide plans a batch once, on the local tip, and commits it. It returns nil when the
// batch changes nothing: such a write is neither committed nor pushed
// (docs/branch-worker.md#decide-once). A write the render refuses
// (docs/kustomize.md#verification-render, docs/kustomize.md#unplaceable-edits) is left out
// and reported, and the rest of the batch is planned again without it: dropping the others
// would drop changes that reached the API. When a refusal cannot be pinned to one object of the batch, or the
// fidelity gate holds the target back (docs/kustomize.md#render-fidelity), the batch writes
// nothing and returns the reason.
func (s *branchState) decide(ctx context.Context, b *batch) (_ *pendingWrite, err error) {
	ts := s.targets[b.target]
	if ts == nil {
		return nil, fmt.Errorf("GitTarget %s is not configured on this branch", b.target)
	}
	if err := s.ensureIndex(ts); err != nil {
		return nil, fmt.Errorf("GitTarget %s: %w", b.target, err)
	}
	// The plan moved the index along its edits; when it is not committed, the index no
	// longer matches the local tip and is rebuilt on next use.
	defer func() {
		if err != nil {
			ts.index = nil
		}
		ts.endPlan()
	}()
	if b.author.Name == "" {
		// Without attribution the committer is the author, in the message as in the commit.
		b.author = s.cfg.Committer
	}
	s.forgetRefused(ts, b)
	s.seq++
	seq := s.seq
	tip := newTreeView(s.repo, s.localTip, ts.prefix)
	ts.fidelity.remeasure(func(id layout.Identity) []byte { return s.renderOf(tip, ts, id) })
	for _, snap := range b.snapshots {
		ts.fidelity.rescope(snap.Scope)
	}
	excluded := map[string]bool{}
	var refusals []error // the verification's refusals, one per object left out
	var kept []refusedChange
	var p plannedBatch
	for {
		p = s.planBatch(ctx, ts, b, excluded)
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
			ts.index, ts.kust, ts.expect = nil, nil, nil
			if err := s.ensureIndex(ts); err != nil {
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
		ts.index, ts.kust, ts.expect = nil, nil, nil // plan again from the tip
		if err := s.ensureIndex(ts); err != nil {
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
	consume := func() {
		s.reportRefusals(ts, refusals)
		s.keepRefused(ts, kept)
		s.ended(outcomeUnchanged, b.target, p.unchanged)
	}
	if len(p.actions) == 0 {
		consume()
		if len(p.v.order) > 0 {
			ts.index = nil
		}
		if len(refusals) > 0 {
			return nil, &writeRefusal{target: b.target, err: refusals[0], kept: true}
		}
		ts.clearBoundary()
		return nil, nil
	}
	if err := s.bootstrap(p.v, ts); err != nil {
		return nil, err
	}
	pw := &pendingWrite{target: b.target, author: b.author, actions: p.actions, waiters: b.waiters, received: b.received, seq: seq}
	pw.message = s.messages.render(b, p.lines)
	commit, err := s.commit(p.v, pw)
	if err != nil {
		return nil, err
	}
	consume()
	if commit == "" {
		s.ended(outcomeUnchanged, b.target, p.actions)
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
	v       *treeView
	actions []action
	lines   []changeLine
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

// planBatch plans every action of the batch but those of excluded objects, on the local
// tip, and verifies the result against the render.
func (s *branchState) planBatch(ctx context.Context, ts *targetState, b *batch, excluded map[string]bool) plannedBatch {
	p := plannedBatch{v: newTreeView(s.repo, s.localTip, ts.prefix), excluded: map[string]int{}}
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
			render := s.renderOf(p.v, ts, a.id)
			ts.fidelity.measure(a.id, render, a.doc)
			a.doc = s.reduce(ctx, ts, a, render)
		} else {
			ts.fidelity.forget(a.id) // a deleted object holds no value to diverge
		}
		edits, err := s.applyAction(p.v, ts, a)
		if err != nil && ts.index == nil {
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
		op := a.op.String()
		if a.sweep {
			op = "prune"
		}
		p.lines = append(p.lines, changeLine{Operation: op, Object: a.id.String(), Path: p.v.full(edits[0].Path)})
	}
	for _, ev := range b.events {
		if ev.Op == OpDelete && !ts.cfg.Prune.deletesOnEvent() {
			// The prune mode keeps the document.
			p.unchanged = append(p.unchanged, action{op: ev.Op, id: ev.ID, changes: ev.changes, seq: ev.seq})
			continue
		}
		decideOne(action{op: ev.Op, typ: ev.Type, id: ev.ID, doc: ev.Doc, changes: ev.changes, seq: ev.seq})
	}
	for _, snap := range b.snapshots {
		if p.failed != nil {
			return p // the index is gone: no sweep can be planned on it
		}
		for _, a := range s.sweepActions(ts, snap) {
			decideOne(a)
		}
	}
	if p.failed != nil {
		return p
	}
	p.refusal = s.verifyKustomize(ts)
	return p
}

// refusedChanges turns actions of target's write by author back into the changes they came
// from (the live documents, before the reducer), kept for a retry.
func refusedChanges(actions []action, target string, author Author, seq uint64) []refusedChange {
	out := make([]refusedChange, 0, len(actions))
	for _, a := range actions {
		doc := a.doc
		if a.live != nil {
			doc = a.live
		}
		ev := Event{Target: target, Author: author, Op: a.op, Type: a.typ, ID: a.id, Doc: doc, changes: a.changes, seq: a.seq}
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

// sweepActions turns a snapshot into upserts of every listed object and, where the prune
// mode allows, deletes of the scope's documents whose object is gone.
func (s *branchState) sweepActions(ts *targetState, snap *Snapshot) []action {
	var actions []action
	listed := map[layout.Identity]bool{}
	for _, obj := range snap.Objects {
		listed[obj.ID] = true
		if obj.Doc == nil {
			continue // exists, but unreadable: its document stays as it is
		}
		actions = append(actions, action{op: OpUpsert, typ: snap.Type, id: obj.ID, doc: obj.Doc, changes: 1, seq: snap.seq})
	}
	retained := 0
	known := ts.index.Identities()
	if ts.kust != nil {
		known = ts.kust.Identities(known)
	}
	for _, id := range known {
		if !snap.Scope.contains(id) || listed[id] {
			continue
		}
		if !ts.cfg.Prune.deletesOnSweep() {
			retained++
			continue
		}
		actions = append(actions, action{op: OpDelete, typ: snap.Type, id: id, sweep: true, seq: snap.seq})
	}
	if ts.retained == nil {
		ts.retained = map[Scope]int{}
	}
	ts.retained[snap.Scope] = retained
	return actions
}

// bootstrap adds the folder's README.md (and .sops.yaml when the target encrypts) when it
// is missing (docs/layout.md#the-first-write).
func (s *branchState) bootstrap(v *treeView, ts *targetState) error {
	edits, err := layout.Bootstrap(v.read)
	if err != nil {
		return fmt.Errorf("bootstrap %s: %w", ts.cfg.Name, err)
	}
	if ts.cfg.SOPSRules != nil {
		_, ok, err := v.read(sopsConfigName)
		if err != nil {
			return fmt.Errorf("bootstrap %s: %w", ts.cfg.Name, err)
		}
		if !ok {
			edits = append(edits, layout.FileEdit{Path: sopsConfigName, Content: ts.cfg.SOPSRules})
		}
	}
	return v.apply(edits, nil)
}

// sopsConfigName is the creation-rules file of SOPS, at the folder's root.
const sopsConfigName = ".sops.yaml"

// commit writes the view's edits as a commit on the local tip and advances the local tip.
// It returns "" when the edits change nothing.
func (s *branchState) commit(v *treeView, pw *pendingWrite) (string, error) {
	now := time.Now()
	author := pw.author
	if author.Name == "" {
		author = s.cfg.Committer
	}
	commit, err := s.repo.Commit(s.localTip, v.changes(), gitrepo.CommitSpec{
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
func (s *branchState) replay(pw *pendingWrite) (err error) {
	s.cfg.Metrics.Replay()
	pw.commit, pw.applied = "", false
	ts := s.targets[pw.target]
	if ts == nil {
		return fmt.Errorf("GitTarget %s was removed; its pending write is discarded", pw.target)
	}
	if err := s.ensureIndex(ts); err != nil {
		return fmt.Errorf("GitTarget %s: %w", pw.target, err)
	}
	defer func() {
		if err != nil {
			ts.index = nil
		}
		ts.endPlan()
	}()
	v := newTreeView(s.repo, s.localTip, ts.prefix)
	changed := false
	for i, a := range pw.actions {
		if a.op == OpDelete && ((a.sweep && !ts.cfg.Prune.deletesOnSweep()) || !ts.cfg.Prune.deletesOnEvent()) {
			s.ended(outcomeUnchanged, pw.target, []action{a}) // the prune mode now keeps the document
			pw.actions[i].changes, pw.actions[i].seq = 0, 0
			continue
		}
		edits, err := s.applyAction(v, ts, a)
		changed = changed || len(edits) > 0
		if err != nil && ts.index == nil {
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
			pw.actions[i].changes, pw.actions[i].seq = 0, 0 // the kept change stands for it now
		}
	}
	if err := s.refuseBatch(ts, pw.target, s.verifyKustomize(ts)); err != nil {
		return err
	}
	if !changed {
		// The new tip holds everything the write decided: nothing to commit, not even the
		// bootstrap files a write would bring.
		pw.applied = true
		return nil
	}
	if err := s.bootstrap(v, ts); err != nil {
		return err
	}
	commit, err := s.commit(v, pw)
	if err != nil {
		return err
	}
	pw.commit, pw.applied = commit, true
	return nil
}
