package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// recordingReducer stands in for the API server's dry-runs (a unit test of the hook only):
// it takes out a "defaulted" line, as the server would tell it is its own.
type recordingReducer struct {
	mu                   sync.Mutex
	reduced, minimalized int
	fail                 bool
}

func (f *recordingReducer) Reduce(_ context.Context, _ layout.TypeInfo, _, live []byte) ([]byte, error) {
	return f.answer(&f.reduced, live)
}

func (f *recordingReducer) Minimal(_ context.Context, _ layout.TypeInfo, live []byte, _ sanitize.Shape) ([]byte, error) {
	return f.answer(&f.minimalized, live)
}

func (f *recordingReducer) answer(calls *int, live []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*calls++
	if f.fail {
		return nil, errors.New("dry-run refused")
	}
	return bytes.ReplaceAll(live, []byte(defaultedLine), nil), nil
}

const defaultedLine = "  defaulted: filled\n"

func (f *recordingReducer) counts() (reduced, minimalized int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reduced, f.minimalized
}

// withDefault is an upsert whose live document carries a value the server filled in.
func withDefault(value string) Event {
	ev := upsert("alice", "team-a", "web", value)
	ev.Doc = append(ev.Doc, []byte(defaultedLine)...)
	return ev
}

// A new object gets its minimal document; an object already in Git is reduced against it,
// so a server default is no edit (docs/sanitize.md).
func TestANewDocumentIsMinimalAndAnExistingOneIsReducedAgainstIt(t *testing.T) {
	red := &recordingReducer{}
	r := newRig(t, func(c *Config) { c.Reducer = red })
	r.submit(withDefault("1"))
	r.settled()
	if reduced, minimalized := red.counts(); reduced != 0 || minimalized != 1 {
		t.Fatalf("a new document: %d reductions, %d minimal documents asked; want 0 and 1", reduced, minimalized)
	}
	if got, want := r.file(cmPath("team-a", "web")), string(configMap("team-a", "web", "1")); got != want {
		t.Fatalf("the new document holds %q, want %q", got, want)
	}
	before := len(r.log())

	// The live object still carries the server default the document omits: no commit.
	r.submit(withDefault("1"))
	r.settled()
	if reduced, minimalized := red.counts(); reduced != 1 || minimalized != 1 {
		t.Fatalf("an existing document: %d reductions, %d minimal documents; want 1 and 1", reduced, minimalized)
	}
	if got := len(r.log()); got != before {
		t.Fatalf("a server default made a commit (%d commits, want %d)", got, before)
	}
}

// write.defaults: Keep writes a new object as the live object holds it.
func TestATargetThatKeepsDefaultsWritesANewObjectAsItIs(t *testing.T) {
	red := &recordingReducer{}
	r := newRig(t, func(c *Config) { c.Reducer = red })
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent, KeepDefaults: true})
	ev := withDefault("1")
	r.submit(ev)
	r.settled()
	if _, minimalized := red.counts(); minimalized != 0 {
		t.Fatalf("%d minimal documents asked under Keep", minimalized)
	}
	if got := r.file(cmPath("team-a", "web")); got != string(ev.Doc) {
		t.Fatalf("the document holds %q, want the live one", got)
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

// concurrentReducer answers like recordingReducer, and records how many questions were in
// flight at once. Each question waits (up to a deadline) for a second one to be asked
// beside it, so that questions asked one after another show as one at a time.
type concurrentReducer struct {
	recordingReducer
	inFlight, most atomic.Int32
}

func (f *concurrentReducer) Reduce(ctx context.Context, typ layout.TypeInfo, source, live []byte) ([]byte, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	deadline := time.Now().Add(3 * time.Second)
	for f.most.Load() < 2 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	return f.recordingReducer.Reduce(ctx, typ, source, live)
}

// The documents a burst edits are reduced with their server's dry-runs asked side by side,
// not one after another, and each object still gets its own answer.
func TestABurstsDryRunsAreAskedTogether(t *testing.T) {
	red := &concurrentReducer{}
	r := newRig(t, func(c *Config) { c.Reducer = red; c.CommitWindow = time.Hour })
	names := make([]string, 20)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%02d", i)
		r.submit(upsert("alice", "team-a", names[i], "1"))
	}
	if _, err := r.worker.Save(r.ctx(), "team/live", "create"); err != nil {
		t.Fatal(err)
	}
	r.settled()
	for _, n := range names {
		ev := upsert("alice", "team-a", n, "2")
		ev.Doc = append(ev.Doc, []byte(defaultedLine)...)
		r.submit(ev)
	}
	if _, err := r.worker.Save(r.ctx(), "team/live", "edit"); err != nil {
		t.Fatal(err)
	}
	r.settled()
	if reduced, _ := red.counts(); reduced != len(names) {
		t.Fatalf("%d documents reduced, want %d", reduced, len(names))
	}
	if most := red.most.Load(); most < 2 {
		t.Fatalf("at most %d dry-run in flight at once; want them asked together", most)
	}
	for _, n := range names {
		if got, want := r.file(cmPath("team-a", n)), string(configMap("team-a", n, "2")); got != want {
			t.Fatalf("%s holds\n%s\nwant its own reduced document\n%s", n, got, want)
		}
	}
}
