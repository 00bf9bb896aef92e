package route

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// nobody names every author at once.
type nobody struct{}

func (nobody) Author(context.Context, watch.Resource, watch.Change) (worker.Author, []string) {
	return worker.Author{}, nil
}

// While hand-overs wait (a branch whose inbox is full), the attribution join queues at most
// maxAttributing changes: the next one waits, so the stream feels the back-pressure, and
// gives up when its stream stops, queueing nothing.
func TestTheAttributionJoinQueuesABoundedNumberOfChanges(t *testing.T) {
	a := newAttributed(nobody{})
	stalled := make(chan struct{})
	defer close(stalled)
	handOn := func(ctx context.Context, _ worker.Event) error {
		select {
		case <-stalled:
		case <-ctx.Done():
		}
		return nil
	}
	ctx := context.Background()
	for i := 0; i < maxAttributing; i++ {
		o := object("ConfigMap", "a", fmt.Sprintf("cm-%d", i), nil)
		a.enqueue(ctx, configMaps, watch.Change{Type: watch.Updated, Object: o}, worker.Event{ID: o.ID}, handOn)
	}
	over := object("ConfigMap", "a", "one-too-many", nil)
	stopped, stop := context.WithCancel(ctx)
	stop() // its stream has stopped: the wait ends at once
	a.enqueue(stopped, configMaps, watch.Change{Type: watch.Updated, Object: over}, worker.Event{ID: over.ID}, handOn)
	if slices.Contains(a.pendingFor(), over.ID) {
		t.Fatalf("a change beyond %d was queued while every hand-over waits", maxAttributing)
	}
}
