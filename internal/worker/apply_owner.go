package worker

// An object another applier applies — another Flux Kustomization's — belongs to that
// applier's folder, not to a triggered target's: it is neither mirrored into nor swept from
// it (F4, docs/two-way.md#another-appliers-objects). The owner is read from the labels Flux
// sets on what it applies, which sanitizing strips from the document.

// Flux's labels on the objects a Kustomization applies.
const (
	fluxNameLabel      = "kustomize.toolkit.fluxcd.io/name"
	fluxNamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// ApplierOf names the applier object that applied an object with these labels:
// "FluxTrigger <namespace>/<name>" of a Kustomization, "" for none.
func ApplierOf(labels map[string]string) string {
	name, ns := labels[fluxNameLabel], labels[fluxNamespaceLabel]
	if name == "" || ns == "" {
		return ""
	}
	return "FluxTrigger " + ns + "/" + name
}

// ownedElsewhere reports whether an object applied by applier belongs to another applier
// than the target's.
func (ts *targetState) ownedElsewhere(applier string) bool {
	a := ts.cfg.Apply
	return a != nil && applier != "" && applier != a.Kind+" "+a.Namespace+"/"+a.Name
}

// foreignEvent reports an event of an object another applier owns: it is not mirrored.
func (s *branchState) foreignEvent(ev Event) bool {
	ts := s.targets[ev.Target]
	if ts == nil || !ts.ownedElsewhere(ev.Applier) {
		return false
	}
	s.cfg.Metrics.ApplyOwnershipConflict()
	s.count(outcomeUnchanged, ev.changes) // its applier's folder holds it
	return true
}

// withoutForeign leaves the objects another applier owns listed without a document: they
// are neither written nor swept (as an object that could not be sanitized).
func (s *branchState) withoutForeign(target string, snaps []Snapshot) {
	ts := s.targets[target]
	if ts == nil || ts.cfg.Apply == nil {
		return
	}
	for i := range snaps {
		for j := range snaps[i].Objects {
			if o := &snaps[i].Objects[j]; ts.ownedElsewhere(o.Applier) && o.Doc != nil {
				o.Doc = nil
				s.cfg.Metrics.ApplyOwnershipConflict()
			}
		}
	}
}
