package worker

import (
	"bytes"
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
	until  time.Time
	edited map[layout.Identity]bool
}

// applierManagers are the field managers of an applier's writes, by trigger kind.
func applierManagers(kind string) []string {
	switch kind {
	case "FluxTrigger":
		return []string{"kustomize-controller"}
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
	case w.edited[ev.ID]:
		s.cfg.Metrics.ApplyEcho("withheld")
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

// applierWrote reports whether an upsert the applier's manager took part in is its write:
// it wrote last alone, or, sharing the second with another writer, the document is the one
// of the commit it applies.
func (s *branchState) applierWrote(ts *targetState, w *applyWindow, ev Event) bool {
	if len(ev.Managers) == 1 {
		return true
	}
	f := ts.folder
	if f.index == nil {
		return false
	}
	applied, ok, err := layout.ReadDocument(f.index, func(rel string) ([]byte, bool, error) {
		return s.repo.ReadFile(w.commit, tree.Join(f.prefix, rel))
	}, ev.ID)
	return err == nil && ok && sameDocument(applied, ev.Doc)
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
