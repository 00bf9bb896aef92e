package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"sync"

	"github.com/go-logr/logr"

	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
)

// Registry holds the one worker of each repository branch, keyed by the normalized URL and
// the branch (docs/branch-worker.md#one-writer-per-branch): two GitProviders that spell one
// repository differently share it. Starting and stopping a branch's worker happens in that
// branch's slot, one caller at a time, so a new worker starts only after the old one
// returned; the registry's mutex guards only the map and is never held while a worker
// starts or stops. Each branch's state belongs to its loop.
type Registry struct {
	ctx     context.Context
	baseDir string

	mu    sync.Mutex
	slots map[ownership.BranchKey]*slot
	// closed is set by StopAll: no worker starts after it.
	closed bool

	live liveCount
}

// slot is one branch's place in the registry. Its turn is held by whoever starts or stops
// the branch's worker (Ensure, Release, StopAll), across the old worker's last push: other
// callers for that branch wait, other branches go on, and Lookup never waits.
type slot struct {
	turn sync.Mutex
	// entry is the running worker; users counts callers holding or waiting for turn.
	// Both are guarded by Registry.mu.
	entry *entry
	users int
}

// ErrRegistryStopped is returned by Ensure once StopAll ran or the registry's context
// ended: no worker may start after the last one stopped.
var ErrRegistryStopped = errors.New("the worker registry is stopped")

// entry is one running worker with what it was started from.
type entry struct {
	worker      *Worker
	cancel      context.CancelFunc
	fingerprint string
	// done is closed once the loop returned and was counted out of live.
	done <-chan struct{}
}

// NewRegistry returns a registry whose workers keep their local copies below baseDir and
// stop when ctx ends.
func NewRegistry(ctx context.Context, baseDir string) *Registry {
	return &Registry{ctx: ctx, baseDir: baseDir, slots: map[ownership.BranchKey]*slot{}}
}

// Ensure returns the worker of cfg's repository branch, starting it when there is none.
// When the branch's worker runs with another configuration (a rotated credential, a new
// committer or window), it is stopped — after its last attempt to push — and replaced:
// replaced is true, and the caller hands the new worker its targets and snapshots, which
// re-derive whatever the old one had not pushed (docs/branch-worker.md#restart). cfg.Dir is
// chosen by the registry. Concurrent calls for one branch take turns: each finds the worker
// the previous one left. After StopAll, or once the registry's context ended, it returns
// ErrRegistryStopped and starts nothing.
func (r *Registry) Ensure(cfg Config) (w *Worker, key ownership.BranchKey, replaced bool, err error) {
	key, err = ownership.KeyFor(cfg.URL, cfg.Branch)
	if err != nil {
		return nil, ownership.BranchKey{}, false, err
	}
	cfg.Dir = filepath.Join(r.baseDir, dirName(key))
	fp := fingerprint(cfg)
	s, err := r.claim(key, false)
	if err != nil {
		return nil, key, false, err
	}
	defer r.unclaim(key, s)
	if e := r.entryOf(s); e != nil && e.fingerprint == fp && !stopped(e.worker) {
		return e.worker, key, false, nil
	}
	if old := r.takeEntry(s); old != nil {
		// In the branch's turn, outside the registry's lock: the new worker starts only
		// after the old one made its last push and left the local copy, and lookups of
		// other branches do not wait for that push.
		old.stop()
		replaced = true
	}
	w, err = r.startIn(s, key, cfg, fp)
	if err != nil {
		return nil, key, replaced, err
	}
	cfg.Log.Info("branch worker started", "branch", key.String(), "replaced", replaced)
	return w, key, replaced, nil
}

// startIn starts key's worker and puts it in s, whose turn the caller holds. StopAll waits
// for that turn, so it stops what is started here; claim refused to start after StopAll.
func (r *Registry) startIn(s *slot, key ownership.BranchKey, cfg Config, fp string) (*Worker, error) {
	if r.ctx.Err() != nil {
		return nil, ErrRegistryStopped
	}
	ctx, cancel := context.WithCancel(r.ctx)
	w, done, err := r.start(ctx, key, cfg)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("start worker for %s: %w", key, err)
	}
	r.mu.Lock()
	s.entry = &entry{worker: w, cancel: cancel, fingerprint: fp, done: done}
	r.mu.Unlock()
	return w, nil
}

// Lookup returns the running worker of key. It never waits for a worker to start or stop:
// while one is being replaced there is none.
func (r *Registry) Lookup(key ownership.BranchKey) (*Worker, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.slots[key]
	if s == nil || s.entry == nil || stopped(s.entry.worker) {
		return nil, false
	}
	return s.entry.worker, true
}

// Release stops the worker of key after its last attempt to push, when no GitTarget
// writes the branch any more.
func (r *Registry) Release(key ownership.BranchKey) {
	s, _ := r.claim(key, true)
	defer r.unclaim(key, s)
	if e := r.takeEntry(s); e != nil {
		e.stop()
	}
}

// StopAll stops every worker, each after its last attempt to push, and returns once all
// have stopped; no worker starts after it. The operator calls it before it gives up
// leadership, so that a successor never pushes while the old leader still does.
func (r *Registry) StopAll() {
	r.mu.Lock()
	r.closed = true
	claimed := make(map[ownership.BranchKey]*slot, len(r.slots))
	for key, s := range r.slots {
		s.users++
		claimed[key] = s
		if s.entry != nil {
			s.entry.cancel() // every worker begins its last push now, not one after another
		}
	}
	r.mu.Unlock()
	for key, s := range claimed {
		s.turn.Lock() // an Ensure or Release of key in progress finishes first
		if e := r.takeEntry(s); e != nil {
			e.stop()
		}
		r.unclaim(key, s)
	}
}

// Len is the number of workers started and not replaced.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.slots {
		if s.entry != nil {
			n++
		}
	}
	return n
}

// claim takes key's turn, creating its slot if needed. Unless force is set it refuses once
// the registry is stopped.
func (r *Registry) claim(key ownership.BranchKey, force bool) (*slot, error) {
	r.mu.Lock()
	if r.closed && !force {
		r.mu.Unlock()
		return nil, ErrRegistryStopped
	}
	s := r.slots[key]
	if s == nil {
		s = &slot{}
		r.slots[key] = s
	}
	s.users++
	r.mu.Unlock()
	s.turn.Lock()
	if !force && r.stopped() {
		// StopAll ran while this caller waited for the turn: it starts nothing.
		r.unclaim(key, s)
		return nil, ErrRegistryStopped
	}
	return s, nil
}

func (r *Registry) stopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// unclaim gives key's turn back; a slot that holds no worker and that nobody waits for is
// forgotten.
func (r *Registry) unclaim(key ownership.BranchKey, s *slot) {
	s.turn.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	s.users--
	if s.users == 0 && s.entry == nil {
		delete(r.slots, key)
	}
}

func (r *Registry) entryOf(s *slot) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return s.entry
}

// takeEntry removes s's worker from the registry (the caller holds s's turn and stops it).
func (r *Registry) takeEntry(s *slot) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := s.entry
	s.entry = nil
	return e
}

func (e *entry) stop() {
	e.cancel()
	<-e.done
}

func stopped(w *Worker) bool {
	select {
	case <-w.Done():
		return true
	default:
		return false
	}
}

// fingerprint summarizes what a worker was started from, so that a change is noticed.
// It is a hash: the credentials in it never leave the process.
// The URL's spelling is left out: two spellings of one repository share a worker.
func fingerprint(cfg Config) string {
	cfg.Log, cfg.Reducer, cfg.URL = logr.Logger{}, nil, ""
	b, err := json.Marshal(cfg)
	if err != nil {
		return "" // never equal to a real fingerprint: the worker is replaced
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// dirName gives each key its own folder without putting the URL on disk in clear.
func dirName(key ownership.BranchKey) string {
	sum := sha256.Sum256([]byte(key.String()))
	return hex.EncodeToString(sum[:12])
}

// start creates the worker of key and runs its loop, counted in live from before it starts
// until after it returned. The channel is closed once the loop is counted out.
func (r *Registry) start(ctx context.Context, key ownership.BranchKey, cfg Config) (*Worker, <-chan struct{}, error) {
	w, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	if r.live.begin(key) {
		cfg.Log.Error(nil, "a second worker started on a branch whose worker still runs", "branch", key.String())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer r.live.end(key)
		w.Run(ctx)
	}()
	return w, done, nil
}

// Running is the number of worker loops running now (started and not returned).
func (r *Registry) Running() int { return r.live.total() }

// Overlaps is how many times a worker started while another worker of its branch still
// ran: two writers on one branch. It must stay 0; tests read it.
func (r *Registry) Overlaps() int { return r.live.overlapCount() }

// liveCount counts the running loops of each branch. Its lock is a leaf: nothing is called
// while it is held.
type liveCount struct {
	mu       sync.Mutex
	running  map[ownership.BranchKey]int
	overlaps int
}

// begin counts a loop of key in and reports whether another one of key was running.
func (l *liveCount) begin(key ownership.BranchKey) (overlap bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running == nil {
		l.running = map[ownership.BranchKey]int{}
	}
	l.running[key]++
	if l.running[key] > 1 {
		l.overlaps++
		return true
	}
	return false
}

func (l *liveCount) end(key ownership.BranchKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running[key]--
	if l.running[key] == 0 {
		delete(l.running, key)
	}
}

func (l *liveCount) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.running {
		n += c
	}
	return n
}

func (l *liveCount) overlapCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.overlaps
}
