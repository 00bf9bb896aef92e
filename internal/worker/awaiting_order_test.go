package worker

import (
	"testing"
	"time"
)

// Batches of a target that waited for it to be set are older than the target's batches
// that closed meanwhile: they are planned first, so that a delete is never planned before
// the upsert it follows (which would leave the document in Git).
func TestBatchesThatWaitedForTheirTargetArePlannedFirst(t *testing.T) {
	s := &branchState{cfg: Config{PushCooldown: time.Second}, targets: map[string]*targetState{}, ready: true}
	older := heldWindow("alice", upsert("alice", "team-a", "x", "1"))
	s.awaitTarget(older) // planned while the target was not set: it waits
	newer := heldWindow("alice", deleteEvent("alice", "team-a", "x"))
	s.closed = append(s.closed, newer) // closed before the target is set

	s.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent}, false)
	if len(s.closed) != 2 || s.closed[0] != older || s.closed[1] != newer {
		t.Fatalf("planning order %v, want the upsert that waited before the later delete", batchOps(s.closed))
	}
}

func batchOps(batches []*batch) []string {
	var out []string
	for _, b := range batches {
		for _, ev := range b.events {
			out = append(out, ev.Op.String()+" "+ev.ID.Name)
		}
	}
	return out
}
