package route

import (
	"context"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// Attributor names who made a change (the attribution join). It may wait a while for the
// audit event behind it; callers wait per object, never for other objects.
type Attributor interface {
	Author(ctx context.Context, res watch.Resource, ch watch.Change) (worker.Author, []string)
}

// attributed carries one target's changes through the attribution join: each object's
// changes are resolved and handed on in order, different objects concurrently. A snapshot
// starts a new epoch: a change from before it that is still being resolved is dropped,
// since the snapshot holds the object's newer state (as the gate drops held events).
type attributed struct {
	attr Attributor

	// mu orders hand-overs against snapshots: a change is handed on, or dropped, entirely
	// before or after a snapshot.
	mu      sync.Mutex
	epoch   int
	pending map[layout.Identity][]queued
}

type queued struct {
	ctx   context.Context
	res   watch.Resource
	ch    watch.Change
	ev    worker.Event
	epoch int
}

func newAttributed(attr Attributor) *attributed {
	return &attributed{attr: attr, pending: map[layout.Identity][]queued{}}
}

// newEpoch is called before a snapshot is handed on.
func (a *attributed) newEpoch() {
	a.mu.Lock()
	a.epoch++
	a.mu.Unlock()
}

// enqueue queues one change; the first change of an idle object starts its resolver.
func (a *attributed) enqueue(ctx context.Context, res watch.Resource, ch watch.Change, ev worker.Event, handOn func(context.Context, worker.Event) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := ch.Object.ID
	q := queued{ctx: ctx, res: res, ch: ch, ev: ev, epoch: a.epoch}
	busy := len(a.pending[id]) > 0
	a.pending[id] = append(a.pending[id], q)
	if !busy {
		go a.resolve(id, handOn)
	}
}

// resolve works through one object's queue until it is empty.
func (a *attributed) resolve(id layout.Identity, handOn func(context.Context, worker.Event) error) {
	for {
		a.mu.Lock()
		q := a.pending[id][0]
		a.mu.Unlock()

		q.ev.Author, q.ev.Trailers = a.attr.Author(q.ctx, q.res, q.ch)

		a.mu.Lock()
		if q.epoch == a.epoch {
			_ = handOn(q.ctx, q.ev) // a failure is re-derived by the next snapshot
		}
		rest := a.pending[id][1:]
		if len(rest) == 0 {
			delete(a.pending, id)
			a.mu.Unlock()
			return
		}
		a.pending[id] = rest
		a.mu.Unlock()
	}
}

// pendingFor returns the objects with changes still being attributed (tests).
func (a *attributed) pendingFor() []layout.Identity {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]layout.Identity, 0, len(a.pending))
	for id := range a.pending {
		ids = append(ids, id)
	}
	return ids
}
