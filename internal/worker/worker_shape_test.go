package worker

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// shapeReducer records the shapes the worker hands it with new objects' documents.
type shapeReducer struct {
	recordingReducer
	mu     sync.Mutex
	shapes map[string]sanitize.Shape // object name → shape
}

func (f *shapeReducer) Minimal(ctx context.Context, typ layout.TypeInfo, live []byte, shape sanitize.Shape) ([]byte, error) {
	f.mu.Lock()
	if f.shapes == nil {
		f.shapes = map[string]sanitize.Shape{}
	}
	f.shapes[docName(live)] = shape
	f.mu.Unlock()
	return f.recordingReducer.Minimal(ctx, typ, live, shape)
}

// docName reads metadata.name from a document configMap made.
func docName(doc []byte) string {
	_, rest, _ := strings.Cut(string(doc), "\n  name: ")
	name, _, _ := strings.Cut(rest, "\n")
	return name
}

func (f *shapeReducer) shapeOf(name string) (sanitize.Shape, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.shapes[name]
	return s, ok
}

// The shape the watch learned of an object reaches the Reducer with its document, whether
// the object comes in a change or in a snapshot: without it, every new object's document
// is parsed a second time (docs/sanitize.md#minimal-documents).
func TestTheShapeOfANewObjectReachesTheReducer(t *testing.T) {
	red := &shapeReducer{}
	r := newRig(t, func(c *Config) { c.Reducer = red })
	byEvent, bySnapshot := sanitize.Shape{1}, sanitize.Shape{2}

	ev := upsert("alice", "team-a", "web", "1")
	ev.Shape = byEvent
	r.submit(ev)
	snap := Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-b"}, Type: configMapType, Objects: []SnapshotObject{
		{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-b", Name: "db"}, Doc: configMap("team-b", "db", "2"), Shape: bySnapshot},
	}}
	if err := r.worker.Resync(r.ctx(), snap); err != nil {
		t.Fatal(err)
	}
	r.settled()
	for name, want := range map[string]sanitize.Shape{"web": byEvent, "db": bySnapshot} {
		if got, ok := red.shapeOf(name); !ok || got != want {
			t.Errorf("%s reached the Reducer with shape %x (asked: %t), want %x", name, got[:1], ok, want[:1])
		}
	}
	if got, want := r.file(cmPath("team-b", "db")), string(configMap("team-b", "db", "2")); got != want {
		t.Errorf("db holds %q, want %q", got, want)
	}
}
