package worker

import (
	"fmt"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// A snapshot's upserts are handed out a chunk at a time, in the snapshot's order, each
// listed object with a document once; an unreadable object (no document) is skipped even
// where it falls on a chunk's edge, and no chunk comes back empty before the end.
func TestASnapshotsUpsertsComeAChunkAtATimeInOrder(t *testing.T) {
	snap := &Snapshot{Type: layout.TypeInfo{Kind: "ConfigMap", Resource: "configmaps"}, seq: 7}
	unreadable := map[int]bool{0: true, reduceChunk - 1: true, reduceChunk: true, 2*reduceChunk - 1: true, 2*reduceChunk + 3: true}
	var want []string
	for i := range 2*reduceChunk + 5 {
		obj := SnapshotObject{ID: layout.Identity{Kind: "ConfigMap", Namespace: "demo", Name: fmt.Sprintf("cm-%03d", i)}}
		if !unreadable[i] {
			obj.Doc = []byte("doc")
			want = append(want, obj.ID.Name)
		}
		snap.Objects = append(snap.Objects, obj)
	}
	next := upsertsOf(snap)
	var got []string
	for {
		chunk := next(reduceChunk)
		if len(chunk) == 0 {
			break
		}
		if len(chunk) > reduceChunk {
			t.Fatalf("a chunk of %d actions, more than the %d asked", len(chunk), reduceChunk)
		}
		if len(got)+len(chunk) < len(want) && len(chunk) != reduceChunk {
			t.Errorf("a chunk of %d actions before the end, want %d", len(chunk), reduceChunk)
		}
		for _, a := range chunk {
			if a.op != OpUpsert || a.doc == nil || a.seq != 7 || a.changes != 1 || a.typ != snap.Type {
				t.Errorf("action %+v is not the upsert of a listed object", a)
			}
			got = append(got, a.id.Name)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the upserts are\n%v\nwant\n%v", got, want)
	}
	if again := next(reduceChunk); len(again) != 0 {
		t.Errorf("a source used up hands out %d more actions", len(again))
	}
}
