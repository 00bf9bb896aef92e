package route

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// A snapshot or a change handed to a gate while its branch has no worker (the worker is
// being replaced) is kept and handed over once the worker is there, without a new snapshot.
func TestASnapshotWaitsForTheBranchWorkerInsteadOfBeingLost(t *testing.T) {
	w, g := startWorker(t)
	var present atomic.Bool
	gate := newGate(func(ownership.BranchKey) (*worker.Worker, bool) { return w, present.Load() })
	gate.apply(view{version: 1, attached: true})
	cms := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a"), fingerprint: "0/1", gate: gate}
	gate.expect(map[watch.StreamKey]string{cms.sub.Key: "0/1"})

	// No worker: the hand-over fails and the gate keeps the snapshot for a retry.
	_ = cms.Snapshot(context.Background(), configMaps, []watch.Object{configMapWith("a", "x", "1")})
	present.Store(true)

	waitFor(t, func() bool {
		b, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/x.yaml")
		return err == nil && strings.Contains(string(b), `v: "1"`)
	})

	// Outside a gathering too: a delete that finds no worker is kept, not lost.
	present.Store(false)
	_ = cms.Change(context.Background(), configMaps, watch.Change{Type: watch.Deleted, Object: configMapWith("a", "x", "1")})
	present.Store(true)
	waitFor(t, func() bool {
		b, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/x.yaml")
		return err != nil || len(b) == 0
	})
}
