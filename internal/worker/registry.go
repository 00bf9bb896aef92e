package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/go-logr/logr"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
)

// Registry holds the one worker of each repository branch, keyed by the normalized URL and
// the branch (docs/branch-worker.md#one-writer-per-branch): two GitProviders that spell one
// repository differently share it. The mutex guards only the map of handles and is never
// held while a worker stops; each branch's state belongs to its loop.
type Registry struct {
	ctx     context.Context
	baseDir string

	mu      sync.Mutex
	workers map[ownership.BranchKey]*entry
}

// entry is one running worker with what it was started from.
type entry struct {
	worker      *Worker
	cancel      context.CancelFunc
	fingerprint string
}

// NewRegistry returns a registry whose workers keep their local copies below baseDir and
// stop when ctx ends.
func NewRegistry(ctx context.Context, baseDir string) *Registry {
	return &Registry{ctx: ctx, baseDir: baseDir, workers: map[ownership.BranchKey]*entry{}}
}

// Ensure returns the worker of cfg's repository branch, starting it when there is none.
// When the branch's worker runs with another configuration (a rotated credential, a new
// committer or window), it is stopped — after its last attempt to push — and replaced:
// replaced is true, and the caller hands the new worker its targets and snapshots, which
// re-derive whatever the old one had not pushed (docs/branch-worker.md#restart). cfg.Dir is
// chosen by the registry.
func (r *Registry) Ensure(cfg Config) (w *Worker, key ownership.BranchKey, replaced bool, err error) {
	key, err = ownership.KeyFor(cfg.URL, cfg.Branch)
	if err != nil {
		return nil, ownership.BranchKey{}, false, err
	}
	cfg.Dir = filepath.Join(r.baseDir, dirName(key))
	fp := fingerprint(cfg)
	r.mu.Lock()
	e, ok := r.workers[key]
	if ok && e.fingerprint == fp && !stopped(e.worker) {
		r.mu.Unlock()
		return e.worker, key, false, nil
	}
	if ok {
		delete(r.workers, key)
		replaced = true
	}
	r.mu.Unlock()
	if replaced {
		// Outside the lock: the last push of the old worker must not hold up every lookup.
		// The new worker starts only after the old one left the local copy.
		e.stop()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.workers[key]; ok && e.fingerprint == fp && !stopped(e.worker) {
		return e.worker, key, replaced, nil // started meanwhile by another caller
	}
	ctx, cancel := context.WithCancel(r.ctx)
	w, err = Start(ctx, cfg)
	if err != nil {
		cancel()
		return nil, key, replaced, fmt.Errorf("start worker for %s: %w", key, err)
	}
	r.workers[key] = &entry{worker: w, cancel: cancel, fingerprint: fp}
	cfg.Log.Info("branch worker started", "branch", key.String(), "replaced", replaced)
	return w, key, replaced, nil
}

// Lookup returns the running worker of key.
func (r *Registry) Lookup(key ownership.BranchKey) (*Worker, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.workers[key]
	if !ok || stopped(e.worker) {
		return nil, false
	}
	return e.worker, true
}

// Release stops the worker of key after its last attempt to push, when no GitTarget
// writes the branch any more.
func (r *Registry) Release(key ownership.BranchKey) {
	r.mu.Lock()
	e, ok := r.workers[key]
	delete(r.workers, key)
	r.mu.Unlock()
	if ok {
		e.stop()
	}
}

// StopAll stops every worker, each after its last attempt to push, and returns once all
// have stopped. The operator calls it before it gives up leadership, so that a successor
// never pushes while the old leader still does.
func (r *Registry) StopAll() {
	r.mu.Lock()
	entries := make([]*entry, 0, len(r.workers))
	for key, e := range r.workers {
		entries = append(entries, e)
		delete(r.workers, key)
	}
	r.mu.Unlock()
	for _, e := range entries {
		e.cancel()
	}
	for _, e := range entries {
		<-e.worker.Done()
	}
}

// Len is the number of workers started and not replaced.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.workers)
}

func (e *entry) stop() {
	e.cancel()
	<-e.worker.Done()
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
