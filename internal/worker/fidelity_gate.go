package worker

import (
	"bytes"
	"sort"

	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// fidelityGate is RenderMatchesLive for one target (docs/kustomize.md#render-fidelity).
// Every rendered value holding a ${...} token must equal the live value; one that does not
// means something outside the folder substituted it (a Flux postBuild), and writing the
// live value back would replace the folder's variable with one environment's value. A
// divergence holds the target's writes back (they are kept, not dropped) until the divergent
// objects measure clean: again at every plan of the target (a recheck on its schedule, or a
// fetch that changed the folder), with their last live documents against the render of the
// new tip, or by a snapshot of their scope or a later live change of the object.
type fidelityGate struct {
	// measured is set once a snapshot was planned: before that the state is unknown.
	measured bool
	// divergent holds the objects measured divergent, by identity, with the live document
	// they were measured with.
	divergent map[layout.Identity]divergentObject
}

type divergentObject struct {
	d    *kustomize.Divergence
	live []byte
}

// FidelityState is the RenderMatchesLive condition's status: "True", "False" or "Unknown".
type FidelityState string

// The states of RenderMatchesLive.
const (
	FidelityTrue    FidelityState = "True"
	FidelityFalse   FidelityState = "False"
	FidelityUnknown FidelityState = "Unknown"
)

// Fidelity is a target's RenderMatchesLive for status.
type Fidelity struct {
	State FidelityState
	// Divergence names the first divergent object, field and token when False.
	Divergence string
}

// rescope forgets the measurements of a scope a snapshot is about to measure again.
func (g *fidelityGate) rescope(scope Scope) {
	g.measured = true
	for id := range g.divergent {
		if scope.contains(id) {
			delete(g.divergent, id)
		}
	}
}

// measure compares an object's render (its document in Git, or its kustomize render) with
// its live document; the object's earlier measurement is replaced.
func (g *fidelityGate) measure(id layout.Identity, render, live []byte) {
	delete(g.divergent, id)
	if render == nil || !bytes.Contains(render, []byte("${")) {
		return
	}
	d, err := kustomize.RenderDivergence(id.String(), render, live)
	if err != nil || d == nil {
		return
	}
	if g.divergent == nil {
		g.divergent = map[layout.Identity]divergentObject{}
	}
	g.divergent[id] = divergentObject{d: d, live: live}
}

// forget drops the measurement of an object that was deleted.
func (g *fidelityGate) forget(id layout.Identity) { delete(g.divergent, id) }

// remeasure measures every divergent object again, with its last live document, against
// renderOf (the render at the tip being planned on): a fix of the folder in Git reopens the
// gate without waiting for a snapshot.
func (g *fidelityGate) remeasure(renderOf func(layout.Identity) []byte) {
	for id, o := range g.divergent {
		g.measure(id, renderOf(id), o.live)
	}
}

// blocked reports whether the target's writes are held back.
func (g *fidelityGate) blocked() bool { return len(g.divergent) > 0 }

// first returns the first divergence, in identity order.
func (g *fidelityGate) first() *kustomize.Divergence {
	ids := make([]layout.Identity, 0, len(g.divergent))
	for id := range g.divergent {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	return g.divergent[ids[0]].d
}

func (g *fidelityGate) status() Fidelity {
	switch {
	case g.blocked():
		return Fidelity{State: FidelityFalse, Divergence: g.first().String()}
	case !g.measured:
		return Fidelity{State: FidelityUnknown}
	}
	return Fidelity{State: FidelityTrue}
}

// blockedError is returned for a batch the gate held back.
type blockedError struct{ d *kustomize.Divergence }

func (e *blockedError) Error() string {
	return "render does not match live: " + e.d.String() + "; the target's changes are held until every value measures clean again"
}
