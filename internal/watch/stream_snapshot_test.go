//go:build e2e

package watch

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func TestStreamDeliversSnapshotThenChangesInOrder(t *testing.T) {
	ns := newNamespace(t, sharedCP.Config, "stream-order")
	cms := newCMClient(t, sharedCP.Config, ns)
	cms.create("a", "a1")
	cms.create("b", "b1")

	s := startConfigMapStream(t, sharedCP.Config, ns, nil)
	first := newStreamRecorder()
	s.Subscribe("first", first)
	waitUntil(t, "the first snapshot", func() bool { return len(first.Events()) > 0 })
	if got := first.Events(); len(got) != 1 || !slices.Equal(got[0].Snapshot, []string{"a", "b"}) {
		t.Fatalf("deliveries %v, want one snapshot of a and b", got)
	}
	waitUntil(t, "the stream is synced", func() bool { return s.Status().Synced })
	if st := s.Status(); !st.WatchList || st.Snapshots != 1 || st.Objects != 2 {
		t.Fatalf("status %+v, want a watch-list snapshot of 2 objects (WatchList is on by default on 1.36)", st)
	}

	cms.create("c", "c1")
	cms.set("a", "a2")
	cms.delete("b")
	cms.edit("c", func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"tier": "x"} })
	want := []string{"CREATE c=c1", "UPDATE a=a2", "DELETE b=b1", "UPDATE c=c1"}
	waitUntil(t, "four changes", func() bool { return len(first.Since(1)) >= len(want) })
	if got := changesOf(first.Since(1)); !slices.Equal(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}

	// Bookkeeping that the sanitizer strips, and a no-op update, deliver nothing: the
	// next delivery is the sentinel's creation.
	annotated := cms.edit("a", func(cm *corev1.ConfigMap) { cm.Annotations = map[string]string{"note": "x"} })
	cms.edit("c", func(*corev1.ConfigMap) {})
	cms.create("sentinel", "s")
	waitUntil(t, "the sentinel", func() bool { return len(first.Since(1+len(want))) > 0 })
	if got := changesOf(first.Since(1 + len(want))); !slices.Equal(got, []string{"CREATE sentinel=s"}) {
		t.Fatalf("after bookkeeping changes got %q, want only the sentinel's creation", got)
	}
	if rv := s.Status().ResourceVersion; rvLess(rv, annotated.ResourceVersion) {
		t.Fatalf("stream position %s did not move past the suppressed update %s", rv, annotated.ResourceVersion)
	}

	// A subscriber added later gets a snapshot from the cache, not from a new listing.
	second := newStreamRecorder()
	s.Subscribe("second", second)
	if got := second.Events(); len(got) != 1 || !slices.Equal(got[0].Snapshot, []string{"a", "c", "sentinel"}) {
		t.Fatalf("late subscriber got %v, want one snapshot of a, c, sentinel", got)
	}
	if got, want := second.State(), cms.live(); !maps.Equal(got, want) {
		t.Fatalf("late subscriber's snapshot %v, cluster %v", got, want)
	}
	if n := s.Status().Snapshots; n != 1 {
		t.Fatalf("snapshots taken = %d, want 1: the late subscriber must be served from the cache", n)
	}

	// Both subscribers receive what follows; an unsubscribed one nothing.
	s.Unsubscribe("first")
	cms.set("a", "a3")
	waitUntil(t, "the second subscriber sees a3", func() bool { return second.State()["a"] == "a3" })
	if got := changesOf(first.Since(1 + len(want) + 1)); len(got) != 0 {
		t.Fatalf("an unsubscribed subscriber received %q", got)
	}
}

// rvLess compares resourceVersions as the numbers etcd makes them (tests only: clients must
// treat them as opaque).
func rvLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func TestStreamInterruptedWatchListSnapshotIsNotDelivered(t *testing.T) {
	const objects, size = 150, 2048
	ns := newNamespace(t, sharedCP.Config, "stream-cut-watchlist")
	cms := newCMClient(t, sharedCP.Config, ns)
	cms.createMany(objects, size)

	proxy, cfg := testenv.StartAPIServerProxy(t, sharedCP.Config)
	// The listing is about objects*size bytes; cut it when a third has gone through.
	proxy.CutAfter(objects * size / 3)
	s := startConfigMapStream(t, cfg, ns, nil)
	rec := newStreamRecorder()
	s.Subscribe("r", rec)

	waitUntil(t, "a complete snapshot", func() bool { return s.Status().Snapshots > 0 })
	st := s.Status()
	if proxy.Cuts() != 1 || st.Failures == 0 || !strings.Contains(st.LastError, "before the initial events ended") {
		t.Fatalf("the snapshot was not interrupted (cuts %d, status %+v)", proxy.Cuts(), st)
	}
	if !st.WatchList {
		t.Fatalf("status %+v, want a watch-list snapshot", st)
	}
	for _, snap := range rec.Snapshots() {
		if len(snap) != objects {
			t.Fatalf("a snapshot of %d objects was delivered, want only complete ones (%d)", len(snap), objects)
		}
	}
	if n := len(rec.Snapshots()); n != 1 {
		t.Fatalf("%d snapshots delivered, want 1", n)
	}
	t.Logf("interrupted attempt: %s", st.LastError)
}

func TestStreamResumesAfterACutConnectionWithoutLosingEvents(t *testing.T) {
	ns := newNamespace(t, sharedCP.Config, "stream-cut")
	cms := newCMClient(t, sharedCP.Config, ns)
	cms.create("a", "a1")
	cms.create("b", "b1")

	proxy, cfg := testenv.StartAPIServerProxy(t, sharedCP.Config)
	s := startConfigMapStream(t, cfg, ns, nil)
	rec := newStreamRecorder()
	s.Subscribe("r", rec)
	waitUntil(t, "the stream is synced", func() bool { return s.Status().Synced })

	proxy.Cut()
	cms.set("a", "a2")
	cms.create("c", "c1")
	cms.delete("b")
	want := []string{"UPDATE a=a2", "CREATE c=c1", "DELETE b=b1"}
	waitUntil(t, "three changes", func() bool { return len(rec.Since(1)) >= len(want) })
	if got := changesOf(rec.Since(1)); !slices.Equal(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
	if got, live := rec.State(), cms.live(); !maps.Equal(got, live) {
		t.Fatalf("subscriber holds %v, cluster %v", got, live)
	}
	if n := s.Status().Snapshots; n != 1 {
		t.Fatalf("snapshots = %d, want 1: a cut watch resumes from its resourceVersion", n)
	}
}

func TestStreamStatusAnswersAfterTheStreamEnds(t *testing.T) {
	ns := newNamespace(t, sharedCP.Config, "stream-stop")
	s := startConfigMapStream(t, sharedCP.Config, ns, nil)
	blocked := make(chan struct{})
	s.Subscribe("blocker", blockingSubscriber{entered: blocked})
	<-blocked // the stream goroutine is inside a delivery now
	answered := make(chan StreamStatus)
	go func() { answered <- s.Status() }()
	go s.Stop()
	select {
	case <-answered:
	case <-time.After(time.Minute):
		t.Fatal("Status did not return after the stream was stopped")
	}
	<-s.Done()
	s.Subscribe("late", newStreamRecorder()) // must not block
}

// blockingSubscriber blocks in Snapshot until its stream's context ends.
type blockingSubscriber struct {
	entered chan struct{}
}

func (b blockingSubscriber) Snapshot(ctx context.Context, _ Resource, _ []Object) error {
	close(b.entered)
	<-ctx.Done()
	return ctx.Err()
}

func (blockingSubscriber) Change(context.Context, Resource, Change) error { return nil }
