//go:build e2e

package watch

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A kube-apiserver with the WatchList feature gate off refuses sendInitialEvents; streams
// list instead. Both cases share one control plane.
func TestStreamFallsBackToListAndWatchWithoutWatchList(t *testing.T) {
	cp := testenv.NewControlPlane(t, testenv.WithAPIServerFlag("feature-gates", "WatchList=false"))

	t.Run("delivers the snapshot and changes", func(t *testing.T) {
		ns := newNamespace(t, cp.Config, "fallback")
		cms := newCMClient(t, cp.Config, ns)
		cms.create("a", "a1")
		cms.create("b", "b1")

		s := startConfigMapStream(t, cp.Config, ns, func(c *StreamConfig) { c.PageSize = 1 })
		rec := newStreamRecorder()
		s.Subscribe("r", rec)
		waitUntil(t, "the stream is synced", func() bool { return s.Status().Synced })
		if got := rec.Snapshots(); len(got) != 1 || !slices.Equal(got[0], []string{"a", "b"}) {
			t.Fatalf("snapshots %v, want one of a and b (listed one per page)", got)
		}
		if st := s.Status(); st.WatchList || st.Snapshots != 1 || st.Failures != 0 {
			t.Fatalf("status %+v, want one LIST snapshot and no failed attempt", st)
		}

		cms.create("c", "c1")
		cms.set("a", "a2")
		cms.delete("b")
		want := []string{"CREATE c=c1", "UPDATE a=a2", "DELETE b=b1"}
		waitUntil(t, "three changes", func() bool { return len(rec.Since(1)) >= len(want) })
		if got := changesOf(rec.Since(1)); !slices.Equal(got, want) {
			t.Fatalf("changes %q, want %q", got, want)
		}
		if got, live := rec.State(), cms.live(); !maps.Equal(got, live) {
			t.Fatalf("subscriber holds %v, cluster %v", got, live)
		}
	})

	t.Run("an interrupted listing is not delivered", func(t *testing.T) {
		const objects, size, page = 150, 2048, 10
		ns := newNamespace(t, cp.Config, "fallback-cut")
		cms := newCMClient(t, cp.Config, ns)
		cms.createMany(objects, size)

		proxy, cfg := testenv.StartAPIServerProxy(t, cp.Config)
		// 15 pages of about page*size bytes: cut during the sixth or so, and stay down so
		// that client-go's transparent retries of the page fail too.
		proxy.DownAfter(objects * size / 3)
		s := startConfigMapStream(t, cfg, ns, func(c *StreamConfig) { c.PageSize = page })
		rec := newStreamRecorder()
		s.Subscribe("r", rec)

		waitUntil(t, "the listing fails", func() bool { return s.Status().Failures > 0 })
		st := s.Status()
		if proxy.Cuts() != 1 || st.Snapshots != 0 || !strings.Contains(st.LastError, "list snapshot") {
			t.Fatalf("the listing was not interrupted by the cut (cuts %d, status %+v)", proxy.Cuts(), st)
		}
		if got := rec.Events(); len(got) != 0 {
			t.Fatalf("a failed listing delivered %d deliveries", len(got))
		}
		t.Logf("interrupted attempt: %s", st.LastError)
		proxy.SetDown(false)

		waitUntil(t, "a complete snapshot", func() bool { return s.Status().Snapshots > 0 })
		st = s.Status()
		if st.WatchList {
			t.Fatalf("status %+v, want a LIST snapshot", st)
		}
		snaps := rec.Snapshots()
		for _, snap := range snaps {
			if len(snap) != objects {
				t.Fatalf("a snapshot of %d objects was delivered, want only complete ones (%d)", len(snap), objects)
			}
		}
		if len(snaps) != 1 {
			t.Fatalf("%d snapshots delivered, want 1", len(snaps))
		}
	})
}
