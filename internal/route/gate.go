package route

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// gatherTimeout bounds how long a target's first snapshots are gathered: a stream that
// cannot list (forbidden, failing) must not hold the others back for ever.
const gatherTimeout = 30 * time.Second

// retryDelay is how soon a hand-over that failed (a worker being replaced, a full inbox)
// is tried again.
const retryDelay = 2 * time.Second

// errNoWorker is returned when the target's branch has no running worker: the target was
// detached, or its worker is being replaced; its next attach takes fresh snapshots.
var errNoWorker = errors.New("no branch worker for this GitTarget")

// gate sits between a target's sinks and its worker. While it waits for the snapshots of
// newly subscribed streams it gathers them and holds later events back; when the last
// awaited snapshot arrives (or gatherTimeout passes) it hands the snapshots to the worker
// in one Resync, then the held events in arrival order. A snapshot supersedes what its
// stream sent before it: held events of that stream and an earlier snapshot of it are
// dropped, so that nothing older lands after something newer. Streams call the gate from
// their goroutines; its mutex keeps one target's deliveries in order.
type gate struct {
	workerOf func() (*worker.Worker, bool)

	mu sync.Mutex
	// waiting maps each awaited stream to the fingerprint of the subscriber whose
	// snapshot counts (a replaced subscriber's late snapshot does not).
	waiting map[watch.StreamKey]string
	// current is the set of streams the target subscribes to; events and snapshots of
	// others are dropped at hand-over. Nil until the router sets it.
	current map[watch.StreamKey]bool
	snaps   []gathered
	held    []heldEvent
	// retrying is set while a failed hand-over waits to be tried again: everything is
	// held meanwhile, so nothing overtakes it.
	retrying bool
	// round identifies the gathering a timer belongs to.
	round int
	timer *time.Timer
}

type gathered struct {
	key   watch.StreamKey
	snaps []worker.Snapshot
}

type heldEvent struct {
	key watch.StreamKey
	ev  worker.Event
}

func newGate(workerOf func() (*worker.Worker, bool)) *gate {
	return &gate{workerOf: workerOf, waiting: map[watch.StreamKey]string{}}
}

func (g *gate) holding() bool { return len(g.waiting) > 0 || g.retrying }

// setCurrent records the streams the target subscribes to now.
func (g *gate) setCurrent(keys []watch.StreamKey) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.current = make(map[watch.StreamKey]bool, len(keys))
	for _, k := range keys {
		g.current[k] = true
	}
}

// expect makes the gate wait for the next snapshot of each stream from the subscriber
// with the given fingerprint.
func (g *gate) expect(want map[watch.StreamKey]string) {
	if len(want) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, fp := range want {
		g.waiting[k] = fp
	}
	g.arm(gatherTimeout)
}

// arm starts a new round whose timer hands over whatever is gathered after d.
func (g *gate) arm(d time.Duration) {
	if g.timer != nil {
		g.timer.Stop()
	}
	g.round++
	round := g.round
	g.timer = time.AfterFunc(d, func() { g.timeout(round) })
}

func (g *gate) snapshot(ctx context.Context, key watch.StreamKey, fingerprint string, snaps []worker.Snapshot) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.holding() {
		return g.resync(ctx, snaps)
	}
	g.supersede(key)
	g.snaps = append(g.snaps, gathered{key: key, snaps: snaps})
	if fp, ok := g.waiting[key]; ok && fp == fingerprint {
		delete(g.waiting, key)
	}
	if len(g.waiting) == 0 && !g.retrying {
		return g.flush(ctx)
	}
	return nil
}

// supersede drops what stream key sent before its newest snapshot.
func (g *gate) supersede(key watch.StreamKey) {
	g.held = slices.DeleteFunc(g.held, func(h heldEvent) bool { return h.key == key })
	g.snaps = slices.DeleteFunc(g.snaps, func(s gathered) bool { return s.key == key })
}

func (g *gate) submit(ctx context.Context, key watch.StreamKey, ev worker.Event) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holding() {
		g.held = append(g.held, heldEvent{key: key, ev: ev})
		return nil
	}
	w, ok := g.workerOf()
	if !ok {
		return errNoWorker
	}
	return w.Submit(ctx, ev)
}

// timeout hands over what a round gathered when some stream never delivered its snapshot,
// or retries a failed hand-over.
func (g *gate) timeout(round int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if round != g.round || !g.holding() {
		return
	}
	clear(g.waiting)
	g.retrying = false
	ctx, cancel := context.WithTimeout(context.Background(), gatherTimeout)
	defer cancel()
	_ = g.flush(ctx)
}

// flush hands the gathered snapshots and held events to the worker. What it could not hand
// over stays, and is tried again after retryDelay. Called with mu held.
func (g *gate) flush(ctx context.Context) error {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	var snaps []worker.Snapshot
	for _, s := range g.snaps {
		if g.isCurrent(s.key) {
			snaps = append(snaps, s.snaps...)
		}
	}
	if err := g.resync(ctx, snaps); err != nil {
		return g.later(err)
	}
	g.snaps = nil
	w, ok := g.workerOf()
	for len(g.held) > 0 {
		h := g.held[0]
		if g.isCurrent(h.key) {
			if !ok {
				return g.later(errNoWorker)
			}
			if err := w.Submit(ctx, h.ev); err != nil {
				return g.later(err)
			}
		}
		g.held = g.held[1:]
	}
	return nil
}

// later keeps what is left and arms a retry.
func (g *gate) later(err error) error {
	g.retrying = true
	g.arm(retryDelay)
	return err
}

func (g *gate) isCurrent(key watch.StreamKey) bool { return g.current == nil || g.current[key] }

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
