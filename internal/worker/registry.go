package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
)

// Registry holds the one worker of each repository branch, keyed by the normalized URL
// and the branch (G1): two GitProviders that spell one repository differently share it.
// The mutex guards only the map of handles; each branch's state belongs to its loop.
type Registry struct {
	ctx     context.Context
	baseDir string

	mu      sync.Mutex
	workers map[ownership.BranchKey]*Worker
}

// NewRegistry returns a registry whose workers keep their local copies below baseDir and
// stop when ctx ends.
func NewRegistry(ctx context.Context, baseDir string) *Registry {
	return &Registry{ctx: ctx, baseDir: baseDir, workers: map[ownership.BranchKey]*Worker{}}
}

// Ensure returns the worker of cfg's repository branch, starting it when there is none.
// cfg.Dir is chosen by the registry.
func (r *Registry) Ensure(cfg Config) (*Worker, ownership.BranchKey, error) {
	key, err := ownership.KeyFor(cfg.URL, cfg.Branch)
	if err != nil {
		return nil, ownership.BranchKey{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.workers[key]; ok {
		select {
		case <-w.Done():
		default:
			return w, key, nil
		}
	}
	cfg.Dir = filepath.Join(r.baseDir, dirName(key))
	w, err := Start(r.ctx, cfg)
	if err != nil {
		return nil, key, fmt.Errorf("start worker for %s: %w", key, err)
	}
	r.workers[key] = w
	return w, key, nil
}

// Len is the number of workers started and not replaced.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.workers)
}

// dirName gives each key its own folder without putting the URL on disk in clear.
func dirName(key ownership.BranchKey) string {
	sum := sha256.Sum256([]byte(key.String()))
	return hex.EncodeToString(sum[:12])
}
