package worker

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// recordingReducer stands in for the API server's dry-run (a unit test of the hook only):
// it answers with the source when the live document differs only by a "defaulted" line.
type recordingReducer struct {
	mu    sync.Mutex
	calls int
	fail  bool
}

func (f *recordingReducer) Reduce(_ context.Context, _ layout.TypeInfo, source, live []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail {
		return nil, errors.New("dry-run refused")
	}
	return bytes.ReplaceAll(live, []byte("  defaulted: yes\n"), nil), nil
}

func (f *recordingReducer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func TestReducerAsksOnlyForDocumentsThatAlreadyHaveASource(t *testing.T) {
	red := &recordingReducer{}
	r := newRig(t, func(c *Config) { c.Reducer = red })
	r.submit(upsert("alice", "team-a", "web", "1"))
	r.settled()
	if red.count() != 0 {
		t.Fatalf("the reducer was asked %d times for a new document", red.count())
	}
	before := len(r.log())

	// The live object now carries a server default the source omits: no commit.
	ev := upsert("alice", "team-a", "web", "1")
	ev.Doc = append(ev.Doc, []byte("  defaulted: yes\n")...)
	r.submit(ev)
	r.settled()
	if red.count() != 1 {
		t.Fatalf("reducer calls = %d, want 1", red.count())
	}
	if got := len(r.log()); got != before {
		t.Fatalf("a server default made a commit (%d commits, want %d)", got, before)
	}
}

func TestReducerFailureWritesTheLiveDocument(t *testing.T) {
	red := &recordingReducer{fail: true}
	r := newRig(t, func(c *Config) { c.Reducer = red })
	r.submit(upsert("alice", "team-a", "web", "1"))
	r.settled()
	ev := upsert("alice", "team-a", "web", "2")
	r.submit(ev)
	r.settled()
	if got := r.file(cmPath("team-a", "web")); got != string(ev.Doc) {
		t.Fatalf("after a failed reduce the file holds %q, want the live document", got)
	}
}
