package route

import (
	"context"
	"errors"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// sink is one GitTarget's subscriber on one stream: it keeps what the target's claims
// select and hands it to the target's gate.
type sink struct {
	target      string // "namespace/name"
	sub         watch.Subscription
	fingerprint string
	gate        *gate
	// sealer encrypts the documents of a sensitive type; nil for other types.
	sealer Sealer
	// attributed resolves authors when attribution is on; nil hands changes on at once,
	// authored by the committer.
	attributed *attributed
	// sensitive: the type's documents are sealed before anything else sees them.
	sensitive bool
}

// Sealer encrypts the documents of sensitive types (Secrets) for one GitTarget.
type Sealer interface {
	Seal(plainDoc []byte) ([]byte, error)
	// Fingerprint changes when what Seal produces would (other recipients).
	Fingerprint() string
}

// errNoSealer refuses a sensitive document without encryption: never plaintext.
var errNoSealer = errors.New("a Secret reached a GitTarget without encryption; it is not written")

// seal returns the document to hand to the worker: sealed for a sensitive type. A document
// that cannot be sealed is returned nil (unreadable: neither written nor swept).
func (s *sink) seal(res watch.Resource, doc []byte) ([]byte, error) {
	if !s.sensitive || doc == nil {
		return doc, nil
	}
	if s.sealer == nil {
		return nil, errNoSealer
	}
	sealed, err := s.sealer.Seal(doc)
	if err != nil {
		return nil, err
	}
	return sealed, nil
}

// Snapshot turns a stream's listing into one worker snapshot per scope the target covers,
// each holding only the objects its claims select.
func (s *sink) Snapshot(ctx context.Context, res watch.Resource, objects []watch.Object) error {
	snaps := s.snapshots(res, objects)
	for i := range snaps {
		for j := range snaps[i].Objects {
			obj := &snaps[i].Objects[j]
			sealed, err := s.seal(res, obj.Doc)
			if errors.Is(err, errNoSealer) {
				return err
			}
			obj.Doc = sealed // nil when sealing failed: kept, not swept
		}
	}
	return s.gate.snapshot(ctx, s.sub.Key, s.fingerprint, snaps)
}

func (s *sink) snapshots(res watch.Resource, objects []watch.Object) []worker.Snapshot {
	byScope := make(map[string]*worker.Snapshot, len(s.sub.Scopes))
	snaps := make([]worker.Snapshot, len(s.sub.Scopes))
	takenAt := time.Now()
	for i, ns := range s.sub.Scopes {
		snaps[i] = worker.Snapshot{
			Target:  s.target,
			Scope:   worker.Scope{Group: res.GVR.Group, Kind: res.Kind, Namespace: ns},
			Type:    res.TypeInfo(),
			TakenAt: takenAt,
		}
		byScope[ns] = &snaps[i]
	}
	for _, obj := range objects {
		if !s.sub.InSnapshot(obj) {
			continue
		}
		snap := byScope[obj.ID.Namespace]
		if snap == nil {
			snap = byScope[""] // a cluster-scoped type
		}
		if snap == nil {
			continue
		}
		snap.Objects = append(snap.Objects, worker.SnapshotObject{ID: obj.ID, Doc: obj.Doc, Shape: obj.Shape, Applier: worker.ApplierOf(obj.Labels, obj.TrackingID)})
	}
	return snaps
}

// Change hands one event the target's claims select to its worker. An update that makes
// an object stop matching (its labels left the selector) deletes its document, as if the
// object had left: Git shows what the claims select.
func (s *sink) Change(ctx context.Context, res watch.Resource, ch watch.Change) error {
	ev := worker.Event{Target: s.target, Type: res.TypeInfo(), ID: ch.Object.ID, Op: worker.OpUpsert, Doc: ch.Object.Doc, Shape: ch.Object.Shape,
		Managers: ch.Object.Managers, Applier: worker.ApplierOf(ch.Object.Labels, ch.Object.TrackingID)}
	switch {
	case s.sub.Matches(ch.Object, ch.Type):
		if ch.Type == watch.Deleted {
			ev.Op, ev.Doc = worker.OpDelete, nil
		}
	case ch.Type == watch.Updated && ch.Previous != nil && s.sub.Matches(*ch.Previous, watch.Deleted):
		ev.Op, ev.Doc = worker.OpDelete, nil
	default:
		return nil
	}
	if ev.Op == worker.OpUpsert {
		sealed, err := s.seal(res, ev.Doc)
		if err != nil {
			return err // never written in plaintext; the next snapshot tries again
		}
		ev.Doc = sealed
	}
	// The epoch this change was read in: should a snapshot of the stream reach the gate
	// before the change does (it waited for its author), the gate drops it.
	epoch := s.gate.epoch(s.sub.Key)
	if s.attributed != nil {
		s.attributed.enqueue(ctx, res, ch, ev, func(ctx context.Context, ev worker.Event) error {
			return s.gate.submit(ctx, s.sub.Key, epoch, ev)
		})
		return nil
	}
	return s.gate.submit(ctx, s.sub.Key, epoch, ev)
}
