package worker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// blockingReducer holds the worker in the middle of planning a snapshot: its third Minimal
// call waits until released.
type blockingReducer struct {
	mu       sync.Mutex
	calls    int
	reached  chan struct{}
	released chan struct{}
}

func (r *blockingReducer) Reduce(_ context.Context, _ layout.TypeInfo, _, live []byte) ([]byte, error) {
	return live, nil
}

func (r *blockingReducer) Minimal(ctx context.Context, _ layout.TypeInfo, live []byte, _ sanitize.Shape) ([]byte, error) {
	r.mu.Lock()
	r.calls++
	// A call of the second chunk: the first chunk is planned, none of the second (a plan that
	// asked one object at a time would have planned the objects before it).
	blocked := r.calls == reduceChunk+10
	r.mu.Unlock()
	if blocked {
		close(r.reached)
		select {
		case <-r.released:
		case <-ctx.Done():
		}
	}
	return live, nil
}

// A target's first mirror shows its progress while the worker is busy planning it — the
// objects its snapshot listed and how many are planned — then Mirrored once it is pushed
// (docs/controllers.md#progress).
func TestAFirstMirrorShowsItsProgressWhileItIsPlanned(t *testing.T) {
	board := NewProgressBoard()
	red := &blockingReducer{reached: make(chan struct{}), released: make(chan struct{})}
	r := newRig(t, func(c *Config) {
		c.Progress, c.Reducer, c.CommitWindow, c.ProgressEvery = board, red, 0, time.Nanosecond
	})
	r.waitFor("the Waiting phase before any snapshot", func() bool {
		p, _ := board.Get("team/live")
		return p.Phase == ProgressWaiting
	})
	var objects []SnapshotObject
	const objectsListed = reduceChunk + 20
	for i := range objectsListed {
		objects = append(objects, listed(fmt.Sprintf("cm-%02d", i), "v"))
	}
	if err := r.worker.Resync(r.ctx(), teamASnapshot(objects...)); err != nil {
		t.Fatal(err)
	}
	<-red.reached
	// The loop is busy: the board answers anyway. The first chunk is planned, the second
	// waits for its Reducer.
	r.waitFor("the Writing phase with its counts", func() bool {
		p, _ := board.Get("team/live")
		return p == Progress{Phase: ProgressWriting, Seen: objectsListed, Written: reduceChunk}
	})
	close(red.released)
	r.settled()
	if p, _ := board.Get("team/live"); p != (Progress{Phase: ProgressMirrored, Seen: objectsListed, Written: objectsListed}) {
		t.Fatalf("after the push the target shows %+v, want Mirrored %d/%d", p, objectsListed, objectsListed)
	}
	if !r.hasFile(cmPath("team-a", fmt.Sprintf("cm-%02d", objectsListed-1))) {
		t.Fatal("the snapshot was not written")
	}
}
