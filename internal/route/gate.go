package route

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// gatherTimeout bounds how long a target's first snapshots are gathered: a stream that
// cannot list (forbidden, failing) must not hold the others back for ever.
const gatherTimeout = 30 * time.Second

// errNoWorker is returned when the target's branch has no running worker: the target was
// detached; its next attach takes fresh snapshots.
var errNoWorker = errors.New("no branch worker for this GitTarget")

// gate sits between a target's sinks and its worker. While it waits for the snapshots of
// newly subscribed streams it gathers them and holds later events back, in arrival order;
// when the last awaited snapshot arrives (or gatherTimeout passes) it hands the snapshots to
// the worker in one Resync, then the held events. Streams call it from their goroutines; the
// mutex keeps one target's deliveries in order.
type gate struct {
	workerOf func() (*worker.Worker, bool)

	mu      sync.Mutex
	waiting map[watch.StreamKey]bool
	snaps   []worker.Snapshot
	held    []worker.Event
	timer   *time.Timer
}

func newGate(workerOf func() (*worker.Worker, bool)) *gate {
	return &gate{workerOf: workerOf, waiting: map[watch.StreamKey]bool{}}
}

// expect makes the gate wait for the next snapshot of each key.
func (g *gate) expect(keys []watch.StreamKey) {
	if len(keys) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		g.waiting[k] = true
	}
	if g.timer == nil {
		g.timer = time.AfterFunc(gatherTimeout, g.timeout)
	}
}

func (g *gate) snapshot(ctx context.Context, key watch.StreamKey, snaps []worker.Snapshot) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) == 0 {
		return g.resync(ctx, snaps)
	}
	g.snaps = append(g.snaps, snaps...)
	delete(g.waiting, key)
	if len(g.waiting) == 0 {
		return g.flush(ctx)
	}
	return nil
}

func (g *gate) submit(ctx context.Context, ev worker.Event) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) > 0 {
		g.held = append(g.held, ev)
		return nil
	}
	w, ok := g.workerOf()
	if !ok {
		return errNoWorker
	}
	return w.Submit(ctx, ev)
}

// timeout hands over what was gathered when some stream never delivered its snapshot.
func (g *gate) timeout() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) == 0 {
		return
	}
	clear(g.waiting)
	ctx, cancel := context.WithTimeout(context.Background(), gatherTimeout)
	defer cancel()
	_ = g.flush(ctx)
}

// flush hands the gathered snapshots and held events to the worker. Called with mu held.
func (g *gate) flush(ctx context.Context) error {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	snaps, held := g.snaps, g.held
	g.snaps, g.held = nil, nil
	if err := g.resync(ctx, snaps); err != nil {
		return err
	}
	w, ok := g.workerOf()
	if !ok {
		return errNoWorker
	}
	for _, ev := range held {
		if err := w.Submit(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

func (g *gate) resync(ctx context.Context, snaps []worker.Snapshot) error {
	if len(snaps) == 0 {
		return nil
	}
	w, ok := g.workerOf()
	if !ok {
		return errNoWorker
	}
	return w.Resync(ctx, snaps...)
}
