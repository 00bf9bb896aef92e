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
// changes are resolved and handed on in order (one resolver goroutine per object),
// different objects concurrently. A change still being resolved when a snapshot of its
// stream arrives is dropped by the gate, which knows the epoch it was read in: the
// snapshot holds the object's newer state (as the gate drops held events).
type attributed struct {
	attr Attributor
	// slots bounds the changes queued or being resolved: when a branch's inbox is full and
	// hand-overs wait, enqueue waits too, so the stream feels the back-pressure instead of
	// the queues growing with the event rate.
	slots chan struct{}

	// mu guards pending only; it is never held while a change is resolved or handed on.
	mu      sync.Mutex
	pending map[layout.Identity][]queued
}

type queued struct {
	ctx    context.Context
	res    watch.Resource
	ch     watch.Change
	ev     worker.Event
	handOn func(context.Context, worker.Event) error
}

// maxAttributing is how many changes of one subscription of a target may wait for their
// author or their hand-over at once.
const maxAttributing = 4096

func newAttributed(attr Attributor) *attributed {
	return &attributed{attr: attr, slots: make(chan struct{}, maxAttributing), pending: map[layout.Identity][]queued{}}
}

// enqueue queues one change; the first change of an idle object starts its resolver. It
// waits while maxAttributing changes are queued, and gives up when ctx ends.
func (a *attributed) enqueue(ctx context.Context, res watch.Resource, ch watch.Change, ev worker.Event, handOn func(context.Context, worker.Event) error) {
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	id := ch.Object.ID
	q := queued{ctx: ctx, res: res, ch: ch, ev: ev, handOn: handOn}
	busy := len(a.pending[id]) > 0
	a.pending[id] = append(a.pending[id], q)
	if !busy {
		go a.resolve(id)
	}
}

// resolve works through one object's queue until it is empty. The change stays first in
// the queue until it was handed on, so a later change of the object waits behind it.
func (a *attributed) resolve(id layout.Identity) {
	for {
		a.mu.Lock()
		q := a.pending[id][0]
		a.mu.Unlock()

		q.ev.Author, q.ev.Trailers = a.attr.Author(q.ctx, q.res, q.ch)
		// Nothing to do with an error: the gate keeps what finds no worker and retries it
		// (the error only says so), and otherwise the stream stopped, whose next snapshot
		// re-derives the object.
		_ = q.handOn(q.ctx, q.ev)
		<-a.slots

		a.mu.Lock()
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
