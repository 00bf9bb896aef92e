package worker

import (
	"bytes"
	"maps"
	"reflect"
	"slices"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// applyGrace keeps an apply window open after the applier answered: its writes can reach
// the watch a little after it reported them.
const applyGrace = 10 * time.Second

// applyWindow is the time an apply of commit may write to the cluster: from the request
// until applyGrace after the answer (until zero while in flight). edited holds the objects
// that changed by anyone but the applier meanwhile (docs/two-way.md#edits-during-an-apply).
type applyWindow struct {
	commit string
	// from is the earliest commit asked for by the windows this one carries over: the
	// applier's late writes of an earlier apply are judged against it too.
	from   string
	until  time.Time
	edited map[layout.Identity]bool
}

// next is the window of a new apply of commit. A window still open (its apply answered
// within applyGrace) is carried over: a late write of its apply is still the applier's
// (judged against every commit from the one it asked for), and the edits recorded in it
// still count.
func (w *applyWindow) next(commit string, now time.Time) *applyWindow {
	nw := &applyWindow{commit: commit, from: commit, edited: map[layout.Identity]bool{}}
	if w.open(now) {
		nw.from = w.commit
		maps.Copy(nw.edited, w.edited)
	}
	return nw
}

// applierManagers are the field managers of an applier's writes, by trigger kind.
func applierManagers(kind string) []string {
	switch kind {
	case KindFluxTrigger:
		return []string{"kustomize-controller"} // server-side apply
	case KindArgoCDTrigger:
		return []string{"argocd-controller"} // client-side apply (operation Update)
	}
	return nil
}

// open reports whether the window still covers now.
func (w *applyWindow) open(now time.Time) bool {
	return w != nil && (w.until.IsZero() || now.Before(w.until))
}

// echo decides an upsert of a triggered target against its apply window (true: not
// mirrored). The applier's write in its window to an object nobody edited is the apply
// landing: it writes what Git held at the applied commit, so it is not mirrored. Planning
// it "to nothing" is not enough: a Git-side push that deleted or changed the document after
// that commit would be reverted by it. An applier's write to an object someone edited in
// the window is the apply overwriting that edit: it is withheld and a Repair apply follows,
// which applies the commit holding the edit. Any other write is mirrored as usual; one by
// the applier outside any window is counted late.
func (s *branchState) echo(ev Event, now time.Time) bool {
	ts := s.targets[ev.Target]
	if ts == nil || ts.cfg.Apply == nil {
		return false
	}
	if ev.Op != OpUpsert {
		// A delete during the window is an edit: the applier recreating the object from
		// an older commit would be an overwrite.
		if w := ts.apply.window; w.open(now) {
			w.edited[ev.ID] = true
		}
		return false
	}
	byApplier := slices.ContainsFunc(applierManagers(ts.cfg.Apply.Kind), func(m string) bool { return slices.Contains(ev.Managers, m) })
	w := ts.apply.window
	switch {
	case !w.open(now) && byApplier:
		s.cfg.Metrics.ApplyEcho("late")
		return false
	case !w.open(now):
		return false
	case !byApplier || !s.applierWrote(ts, w, ev):
		w.edited[ev.ID] = true
		return false
	case w.edited[ev.ID] && !s.newestIs(ts, ev):
		s.cfg.Metrics.ApplyEcho("withheld")
		delete(w.edited, ev.ID)                // the repair answers for the edit; the applier's later writes land it
		s.count(outcomeSuperseded, ev.changes) // by the repair, which writes the edit back
		ts.markApply(applyRepair, now)
		s.cfg.Log.Info("the applier overwrote an edit made during its apply; withheld, and the edit is applied again", "target", ev.Target, "object", ev.ID.String())
		return true
	default:
		s.cfg.Metrics.ApplyEcho("not_mirrored")
		s.count(outcomeUnchanged, ev.changes) // Git holds it: the applied commit's document
		return true
	}
}

// maxAppliedCandidates bounds the commits applierWrote compares a shared write with.
const maxAppliedCandidates = 64

// applierWrote reports whether an upsert the applier's manager took part in is its write:
// it wrote last alone, or, sharing the second with another writer, the document is the one
// of a commit it may have applied. That is the commit asked for, or one after it up to the
// local tip: the applier fetches the branch's tip, which may have moved on since the request
// (it then reports another revision). A newer commit the worker has not fetched yet does
// not count; its document mirrored plans to nothing once fetched.
func (s *branchState) applierWrote(ts *targetState, w *applyWindow, ev Event) bool {
	if len(ev.Managers) == 1 {
		return true
	}
	f := ts.folder
	if f.index == nil {
		return false
	}
	if _, ok := f.index.Lookup(ev.ID); !ok && !f.kustomized {
		// Git no longer holds the object at the tip (a Git-side push removed it after the
		// commit applied): only the applier writes an object Git does not hold at the same
		// second as another writer; mirroring it would write the removed document back.
		// (A kustomized folder's index holds its source documents, not what it renders.)
		return true
	}
	commits, err := s.repo.FirstParents(s.localTip, w.from, maxAppliedCandidates)
	if err != nil {
		s.cfg.Log.Info("could not read the commits an apply may have applied; judging the write by the commit asked for", "error", err.Error())
	}
	if !slices.Contains(commits, w.commit) {
		commits = append(commits, w.commit) // past the bound of the walk
	}
	for _, commit := range commits {
		if s.documentAt(ts, commit, ev) {
			return true
		}
	}
	return false
}

// newestIs reports whether ev's document is the newest state the worker holds for its
// object: its newest change waiting to be planned, else the local tip. The applier writing
// that applied a commit holding the edit: no overwrite (a window carried over still lists
// the object as edited).
func (s *branchState) newestIs(ts *targetState, ev Event) bool {
	batches := slices.Clone(s.closed)
	if s.window != nil {
		batches = append(batches, &s.window.batch)
	}
	for i := len(batches) - 1; i >= 0; i-- {
		b := batches[i]
		if b.target != ts.cfg.Name {
			continue
		}
		for j := len(b.events) - 1; j >= 0; j-- {
			if b.events[j].ID == ev.ID {
				return b.events[j].Op == OpUpsert && sameDocument(b.events[j].Doc, ev.Doc)
			}
		}
		for _, snap := range b.snapshots {
			for _, o := range snap.Objects {
				if o.ID == ev.ID {
					return o.Doc != nil && sameDocument(o.Doc, ev.Doc)
				}
			}
		}
	}
	return s.documentAt(ts, s.localTip, ev)
}

// documentAt reports whether the target's folder holds ev's document at commit.
func (s *branchState) documentAt(ts *targetState, commit string, ev Event) bool {
	f := ts.folder
	if f.index == nil {
		return false
	}
	doc, ok, err := layout.ReadDocument(f.index, func(rel string) ([]byte, bool, error) {
		return s.repo.ReadFile(commit, tree.Join(f.prefix, rel))
	}, ev.ID)
	return err == nil && ok && sameDocument(doc, ev.Doc)
}

// sameDocument compares two YAML documents by their content.
func sameDocument(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if yaml.Unmarshal(a, &x) != nil || yaml.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
