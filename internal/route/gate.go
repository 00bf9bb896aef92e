package route

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
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
// dropped, so that nothing older lands after something newer.
//
// Locking: mu guards the gate's state and is never held while anything is handed to the
// worker or while anything outside the gate is called. The order of one target's
// hand-overs is kept by turn: a delivery takes it (giving up when its context ends),
// decides under mu, and hands over after unlocking mu. Only this target's own deliveries
// wait for the turn; the router (apply, expect) and other targets never do, so a worker
// whose inbox is full holds up nobody but its own streams. The gate never calls the
// router: the router hands it what it decided (apply), and the gate finds the worker in
// the registry below it.
type gate struct {
	// lookup finds the running worker of a branch (the registry's Lookup).
	lookup func(ownership.BranchKey) (*worker.Worker, bool)
	// turn holds one token: whoever holds it is the only one handing this target's
	// snapshots and events to the worker.
	turn chan struct{}

	mu sync.Mutex
	// route is the router's latest decision for the target.
	route view
	// epochs counts the snapshots of each stream: a change read before its stream's
	// latest snapshot (one still being attributed) is dropped at hand-over, unless it is a
	// delete the snapshot does not contradict (stale).
	epochs map[watch.StreamKey]int
	// listed holds the objects each stream's latest snapshot lists.
	listed map[watch.StreamKey]map[layout.Identity]bool
	// waiting maps each awaited stream to the fingerprint of the subscriber whose
	// snapshot counts (a replaced subscriber's late snapshot does not).
	waiting map[watch.StreamKey]string
	snaps   []gathered
	held    []heldEvent
	// retrying is set while a failed hand-over waits to be tried again: everything is
	// held meanwhile, so nothing overtakes it.
	retrying bool
	// round identifies the gathering a timer belongs to; gatherEnd is when the open
	// gathering gives up waiting (gatherTimeout after its last expect).
	round     int
	gatherEnd time.Time
	// fireAt is when the armed timer fires.
	fireAt time.Time
	// detached is set once the target was detached: the router never uses this gate again,
	// and a hand-over begun before lets go of what it took and arms no retry.
	detached bool
	timer    *time.Timer
}

type gathered struct {
	key   watch.StreamKey
	snaps []worker.Snapshot
}

type heldEvent struct {
	key watch.StreamKey
	ev  worker.Event
}

// view is what the router decided for one target: the branch it writes and the streams it
// subscribes to. The router builds a new view under its lock and hands it to the gate
// after unlocking; version orders views handed over concurrently.
type view struct {
	version  int
	attached bool
	key      ownership.BranchKey
	// current holds the streams the target subscribes to (the router's subscriptions, by
	// stream); events and snapshots of others are dropped at hand-over. Nil until the first
	// Wanted: every stream counts. Never changed once in a view.
	current map[watch.StreamKey]revisioned
}

func newGate(lookup func(ownership.BranchKey) (*worker.Worker, bool)) *gate {
	return &gate{lookup: lookup, turn: make(chan struct{}, 1), epochs: map[watch.StreamKey]int{},
		listed: map[watch.StreamKey]map[layout.Identity]bool{}, waiting: map[watch.StreamKey]string{}}
}

func (g *gate) holding() bool { return len(g.waiting) > 0 || g.retrying }

// apply takes the router's decision unless a newer one arrived first. A detached target
// writes nowhere: what it gathered or held is let go and its retries stop (it attaches again
// with fresh snapshots).
func (g *gate) apply(v view) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v.version <= g.route.version {
		return
	}
	g.route = v
	if !v.attached {
		g.held, g.snaps, g.retrying = nil, nil, false
		clear(g.waiting)
		g.stopTimer()
		g.detached = true
	}
}

// take waits for the turn to hand this target's deliveries over, or for ctx to end.
func (g *gate) take(ctx context.Context) error {
	select {
	case g.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) give() { <-g.turn }

// epoch is the number of snapshots stream key delivered so far; a change carries the epoch
// it was read in.
func (g *gate) epoch(key watch.StreamKey) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.epochs[key]
}

// workerFor returns the worker a view routes to: none while the target is detached or its
// branch's worker is being replaced.
func (g *gate) workerFor(v view) (*worker.Worker, error) {
	if !v.attached {
		return nil, errNoWorker
	}
	w, ok := g.lookup(v.key)
	if !ok {
		return nil, errNoWorker
	}
	return w, nil
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
	g.gatherEnd = time.Now().Add(gatherTimeout)
	g.arm(gatherTimeout)
}

// arm starts a new round whose timer hands over whatever is gathered after d.
func (g *gate) arm(d time.Duration) {
	if g.timer != nil {
		g.timer.Stop()
	}
	g.round++
	round := g.round
	g.fireAt = time.Now().Add(d)
	g.timer = time.AfterFunc(d, func() { g.timeout(round) })
}

func (g *gate) snapshot(ctx context.Context, key watch.StreamKey, fingerprint string, snaps []worker.Snapshot) error {
	if err := g.take(ctx); err != nil {
		return err
	}
	defer g.give()
	g.mu.Lock()
	if g.detached {
		g.mu.Unlock()
		return nil // its sinks deliver nothing more
	}
	g.epochs[key]++
	g.listed[key] = listedBy(snaps)
	// Outside a gathering the snapshot is handed over at once (complete below), and kept
	// for a retry when that fails, as within one.
	g.supersede(key)
	g.snaps = append(g.snaps, gathered{key: key, snaps: snaps})
	awaited := false
	if fp, ok := g.waiting[key]; ok && fp == fingerprint {
		delete(g.waiting, key)
		awaited = true
	}
	// The last awaited snapshot ends a gathering, and hands over everything with it even
	// when a retry is due (the retry is this flush); outside a gathering a due retry waits
	// for its timer.
	complete := len(g.waiting) == 0 && (!g.retrying || awaited)
	g.mu.Unlock()
	if complete {
		return g.flush(ctx)
	}
	return nil
}

// supersede drops what stream key sent before its newest snapshot.
func (g *gate) supersede(key watch.StreamKey) {
	g.held = slices.DeleteFunc(g.held, func(h heldEvent) bool { return h.key == key && g.stale(key, h.ev) })
	g.snaps = slices.DeleteFunc(g.snaps, func(s gathered) bool { return s.key == key })
}

// stale reports whether the latest snapshot of stream key makes ev, read before it, stale.
// A delete of an object the snapshot does not list is not: under prune OnEvent the
// snapshot does not sweep, and dropping the delete would leave the document in Git.
func (g *gate) stale(key watch.StreamKey, ev worker.Event) bool {
	return ev.Op != worker.OpDelete || g.listed[key][ev.ID]
}

// listedBy returns the objects the snapshots list.
func listedBy(snaps []worker.Snapshot) map[layout.Identity]bool {
	listed := map[layout.Identity]bool{}
	for _, s := range snaps {
		for _, o := range s.Objects {
			listed[o.ID] = true
		}
	}
	return listed
}

// submit hands one event of stream key, read in the given epoch, to the worker: held while
// the gate gathers, dropped when a later snapshot of its stream superseded it.
func (g *gate) submit(ctx context.Context, key watch.StreamKey, epoch int, ev worker.Event) error {
	if err := g.take(ctx); err != nil {
		if ev.Op == worker.OpDelete {
			// The stream gave up the hand-over (it stopped, its subscription was replaced):
			// no snapshot brings a delete back. Its own stream waits for this call, so
			// nothing of it can overtake the delete, which waits for the retry.
			return g.keep(heldEvent{key: key, ev: ev}, err)
		}
		return err
	}
	defer g.give()
	g.mu.Lock()
	if g.detached {
		g.mu.Unlock()
		return nil // its sinks deliver nothing more
	}
	if epoch < g.epochs[key] && g.stale(key, ev) {
		g.mu.Unlock()
		return nil // the snapshot holds the object's newer state
	}
	if g.holding() {
		g.held = append(g.held, heldEvent{key: key, ev: ev})
		g.mu.Unlock()
		return nil
	}
	v := g.route
	g.mu.Unlock()
	w, err := g.workerFor(v)
	if err == nil {
		err = w.Submit(ctx, ev)
	}
	if err == nil || (ctx.Err() != nil && ev.Op != worker.OpDelete) {
		return err
	}
	// No worker now (its branch's worker is being replaced or stopped), or, for a delete, the
	// stream gave up the hand-over: the event is kept for the retry, so that a delete is not
	// lost (a snapshot does not bring it back), and what follows waits behind it.
	return g.keep(heldEvent{key: key, ev: ev}, err)
}

// keep holds h for the retry and arms it, unless the target was detached meanwhile (then
// it is let go, as apply did with the rest).
func (g *gate) keep(h heldEvent, err error) error {
	g.mu.Lock()
	if !g.detached {
		g.held = append(g.held, h)
	}
	g.mu.Unlock()
	return g.later(err)
}

// timeout hands over what a round gathered when some stream never delivered its snapshot,
// or retries a failed hand-over. When the turn stays taken (the worker's inbox is full), the
// round is tried again later rather than given up.
func (g *gate) timeout(round int) {
	ctx, cancel := context.WithTimeout(context.Background(), gatherTimeout)
	defer cancel()
	if err := g.take(ctx); err != nil {
		g.mu.Lock()
		if round == g.round {
			g.arm(retryDelay)
		}
		g.mu.Unlock()
		return
	}
	defer g.give()
	g.mu.Lock()
	if round != g.round || !g.holding() {
		g.mu.Unlock()
		return
	}
	clear(g.waiting)
	g.retrying = false
	g.mu.Unlock()
	_ = g.flush(ctx)
}

// flush hands the gathered snapshots and then the held events to the worker, one at a time
// and never under mu. What it could not hand over stays, and is tried again after
// retryDelay. The caller holds the turn, so nothing else adds snapshots or held events
// meanwhile; expect may start a new gathering, which holds what comes after.
func (g *gate) flush(ctx context.Context) error {
	g.mu.Lock()
	if len(g.waiting) == 0 {
		g.stopTimer() // else expect opened a new gathering meanwhile: its timer stays
	}
	g.retrying = false // this is the retry; a failure below arms the next one
	var snaps []worker.Snapshot
	for _, s := range g.snaps {
		if g.isCurrent(s.key) {
			snaps = append(snaps, s.snaps...)
		}
	}
	v := g.route
	g.mu.Unlock()
	if err := g.resync(ctx, v, snaps); err != nil {
		return g.later(err)
	}
	g.mu.Lock()
	g.snaps = nil
	g.mu.Unlock()
	for {
		h, current, v, ok := g.nextHeld()
		if !ok {
			return nil
		}
		if current {
			w, err := g.workerFor(v)
			if err == nil {
				err = w.Submit(ctx, h.ev)
			}
			if err != nil {
				return g.later(err)
			}
		}
		g.mu.Lock()
		if !g.detached && len(g.held) > 0 {
			g.held = g.held[1:]
		}
		g.mu.Unlock()
	}
}

// nextHeld returns the first held event, whether its stream is still subscribed, and the
// route to hand it over on.
func (g *gate) nextHeld() (heldEvent, bool, view, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.held) == 0 || g.detached {
		return heldEvent{}, false, view{}, false
	}
	h := g.held[0]
	return h, g.isCurrent(h.key), g.route, true
}

func (g *gate) stopTimer() {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

// later keeps what is left and arms a retry, unless the target was detached meanwhile.
// While a gathering is open the retry waits for its end: the flush that ends it is the
// retry, and an earlier one would hand over what it gathered before the rest of its
// snapshots arrived. A timer is always armed, so that nothing waits for ever.
func (g *gate) later(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.detached {
		return err
	}
	g.retrying = true
	wait := retryDelay
	if len(g.waiting) > 0 {
		wait = max(wait, time.Until(g.gatherEnd))
	}
	g.arm(wait)
	return err
}

func (g *gate) isCurrent(key watch.StreamKey) bool {
	if g.route.current == nil {
		return true
	}
	_, ok := g.route.current[key]
	return ok
}

func (g *gate) resync(ctx context.Context, v view, snaps []worker.Snapshot) error {
	if len(snaps) == 0 {
		return nil
	}
	w, err := g.workerFor(v)
	if err != nil {
		return err
	}
	return w.Resync(ctx, snaps...)
}
