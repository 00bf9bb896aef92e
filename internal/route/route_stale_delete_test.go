package route

import (
	"context"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/watch"
)

// A delete held while the gate gathers is not superseded by a later snapshot that does not
// list the object: under prune OnEvent the snapshot does not sweep, so only the delete
// removes the document.
func TestADeleteHeldBeforeAReSnapshotThatAgreesStillLands(t *testing.T) {
	w, g := startWorker(t)
	gate := gateTo(w)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	first := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a"), fingerprint: "0/1", gate: gate}
	gate.expect(map[watch.StreamKey]string{first.sub.Key: "0/1"})
	must(first.Snapshot(ctx, configMaps, []watch.Object{configMapWith("a", "x", "1"), configMapWith("a", "doomed", "1")}))
	doomed := "live/a/core/configmaps/doomed.yaml"
	waitFor(t, func() bool { b, err := g.ReadFile("mirror.git", "main", doomed); return err == nil && len(b) > 0 })

	// A new gathering (the target's rules changed); the delete arrives before the stream's
	// new snapshot, which no longer lists the object.
	again := &sink{target: "team/live", sub: first.sub, fingerprint: "0/2", gate: gate}
	gate.expect(map[watch.StreamKey]string{again.sub.Key: "0/2"})
	must(again.Change(ctx, configMaps, watch.Change{Type: watch.Deleted, Object: configMapWith("a", "doomed", "1")}))
	must(again.Snapshot(ctx, configMaps, []watch.Object{configMapWith("a", "x", "2")}))

	waitFor(t, func() bool {
		b, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/x.yaml")
		return err == nil && strings.Contains(string(b), `v: "2"`)
	})
	waitFor(t, func() bool { b, err := g.ReadFile("mirror.git", "main", doomed); return err != nil || len(b) == 0 })
}
