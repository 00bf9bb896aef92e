package worker

import "strings"

// An object another applier applies — another Flux Kustomization's or Argo CD
// Application's — belongs to that applier's folder, not to a triggered target's: it is
// neither mirrored into nor swept from it (F4, docs/two-way.md#another-appliers-objects).
// The owner is read from the marks each applier sets on what it applies, which sanitizing
// strips from the document: Flux's labels, Argo CD's tracking annotation.

// Flux's labels on the objects a Kustomization applies.
const (
	fluxNameLabel      = "kustomize.toolkit.fluxcd.io/name"
	fluxNamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// ApplierOf names the applier object that applied an object with these labels and Argo
// CD tracking annotation (watch.TrackingAnnotation): "FluxTrigger <namespace>/<name>" of
// a Kustomization, "ArgoCDTrigger <namespace>/<name>" of an Application, "" for none.
// Argo CD marks the objects of an Application in its own namespace with the bare name:
// that is "ArgoCDTrigger <name>".
func ApplierOf(labels map[string]string, trackingID string) string {
	if name, ns := labels[fluxNameLabel], labels[fluxNamespaceLabel]; name != "" && ns != "" {
		return KindFluxTrigger + " " + ns + "/" + name
	}
	// "<instance>:<group>/<kind>:<namespace>/<name>"; the instance is "<namespace>_<name>"
	// of an Application outside Argo CD's namespace.
	parts := strings.SplitN(trackingID, ":", 3)
	if len(parts) != 3 || parts[0] == "" || !strings.Contains(parts[1], "/") || !strings.Contains(parts[2], "/") {
		return ""
	}
	instance := parts[0]
	if ns, name, qualified := strings.Cut(instance, "_"); qualified {
		return KindArgoCDTrigger + " " + ns + "/" + name
	}
	return KindArgoCDTrigger + " " + instance
}

// ownedElsewhere reports whether an object applied by applier belongs to another applier
// than the target's. A bare Argo CD mark counts as the target's Application's when the
// names agree: the operator does not know which namespace Argo CD runs in.
func (ts *targetState) ownedElsewhere(applier string) bool {
	a := ts.cfg.Apply
	if a == nil || applier == "" {
		return false
	}
	return applier != a.Kind+" "+a.Namespace+"/"+a.Name && applier != a.Kind+" "+a.Name
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
