package route

import (
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
)

// A snapshot hands each object's shape on with its document, for the worker's Reducer
// (docs/sanitize.md#minimal-documents).
func TestASnapshotCarriesEachObjectsShape(t *testing.T) {
	s := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a")}
	one, two := object("ConfigMap", "a", "one", nil), object("ConfigMap", "a", "two", nil)
	one.Shape, two.Shape = sanitize.Shape{1}, sanitize.Shape{2}
	snaps := s.snapshots(configMaps, []watch.Object{one, two})
	if len(snaps) != 1 || len(snaps[0].Objects) != 2 {
		t.Fatalf("snapshots %+v, want one of two objects", snaps)
	}
	for _, obj := range snaps[0].Objects {
		want := map[string]sanitize.Shape{"one": one.Shape, "two": two.Shape}[obj.ID.Name]
		if obj.Shape != want {
			t.Errorf("%s has shape %x, want %x", obj.ID.Name, obj.Shape[:1], want[:1])
		}
	}
}
