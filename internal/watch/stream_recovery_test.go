//go:build e2e

package watch

import (
	"context"
	"maps"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// Without the watch cache, a watch goes to etcd, which answers 410 for a compacted revision;
// compaction every second makes a stream's old position expire quickly.
func TestStreamRecoversFromGoneWithANewSnapshot(t *testing.T) {
	cp := testenv.NewControlPlane(t,
		testenv.WithAPIServerFlag("watch-cache", "false"),
		testenv.WithAPIServerFlag("etcd-compaction-interval", "1s"))
	ns := newNamespace(t, cp.Config, "gone")
	cms := newCMClient(t, cp.Config, ns)
	cms.create("a", "a1")
	cms.create("b", "b1")
	cms.create("c", "c1")

	proxy, cfg := testenv.StartAPIServerProxy(t, cp.Config)
	s := startConfigMapStream(t, cfg, ns, nil)
	rec := newStreamRecorder()
	s.Subscribe("r", rec)
	waitUntil(t, "the stream is synced", func() bool { return s.Status().Synced })
	if got := rec.Snapshots(); len(got) != 1 || !slices.Equal(got[0], []string{"a", "b", "c"}) {
		t.Fatalf("snapshots %v, want one of a, b, c", got)
	}

	proxy.SetDown(true)
	proxy.Cut()
	waitUntil(t, "the stream notices the cut", func() bool { return !s.Status().Synced })

	cms.create("d", "d1")
	cms.set("a", "a2")
	gapRV := cms.set("a", "a3").ResourceVersion
	cms.delete("b")

	// Wait until the gap is compacted away, not only the stream's position: a watch resumed
	// from a revision reads from the next one on, so a compaction to exactly that next
	// revision makes a LIST at the stream's position expire while its watch still resumes
	// without a 410 (and the test waited for a snapshot that never had to come).
	kube := kubernetes.NewForConfigOrDie(cp.Config)
	waitUntil(t, "revision "+gapRV+" is compacted", func() bool {
		_, err := kube.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{
			ResourceVersion: gapRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		})
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
	})
	if got := rec.Since(1); len(got) != 0 {
		t.Fatalf("deliveries while down: %v", got)
	}
	proxy.SetDown(false)

	waitUntil(t, "a new snapshot", func() bool { return len(rec.Snapshots()) >= 2 })
	st := s.Status()
	if st.Expired == 0 || st.Snapshots != 2 || !st.WatchList {
		t.Fatalf("status %+v, want the resumed watch answered 410 and one new watch-list snapshot (served by etcd without the watch cache)", st)
	}
	if got := rec.Snapshots()[1]; !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("new snapshot %v, want a, c, d (b was deleted during the gap)", got)
	}
	if got, live := rec.State(), cms.live(); !maps.Equal(got, live) || got["a"] != "a3" {
		t.Fatalf("subscriber holds %v, cluster %v; want a's final state a3", got, live)
	}
	for _, e := range rec.Events() {
		if e.Change == Created {
			t.Fatalf("got %s: objects of the gap arrive in the snapshot, never as a duplicate creation", e)
		}
	}

	// The stream goes on from the new snapshot.
	cms.create("e", "e1")
	waitUntil(t, "e's creation", func() bool { return rec.State()["e"] == "e1" })
	if got := changesOf(rec.Since(2)); !slices.Equal(got, []string{"CREATE e=e1"}) {
		t.Fatalf("after the new snapshot got %q, want e's creation", got)
	}
}
