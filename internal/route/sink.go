package route

import (
	"context"

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
}

// Snapshot turns a stream's listing into one worker snapshot per scope the target covers,
// each holding only the objects its claims select.
func (s *sink) Snapshot(ctx context.Context, res watch.Resource, objects []watch.Object) error {
	return s.gate.snapshot(ctx, s.sub.Key, s.fingerprint, s.snapshots(res, objects))
}

func (s *sink) snapshots(res watch.Resource, objects []watch.Object) []worker.Snapshot {
	byScope := make(map[string]*worker.Snapshot, len(s.sub.Scopes))
	snaps := make([]worker.Snapshot, len(s.sub.Scopes))
	for i, ns := range s.sub.Scopes {
		snaps[i] = worker.Snapshot{
			Target: s.target,
			Scope:  worker.Scope{Group: res.GVR.Group, Kind: res.Kind, Namespace: ns},
			Type:   res.TypeInfo(),
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
		snap.Objects = append(snap.Objects, worker.SnapshotObject{ID: obj.ID, Doc: obj.Doc})
	}
	return snaps
}

// Change hands one event the target's claims select to its worker. An update that makes
// an object stop matching (its labels left the selector) deletes its document, as if the
// object had left: Git shows what the claims select.
func (s *sink) Change(ctx context.Context, res watch.Resource, ch watch.Change) error {
	ev := worker.Event{Target: s.target, Type: res.TypeInfo(), ID: ch.Object.ID, Op: worker.OpUpsert, Doc: ch.Object.Doc}
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
	return s.gate.submit(ctx, s.sub.Key, ev)
}
