package worker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// slowReducer stands in for a loaded API server's dry-runs (a unit test of the hook only):
// the first question waits until the test opens its gate, and every question takes a while.
type slowReducer struct {
	recordingReducer
	gate  chan struct{}
	asked chan struct{}
	once  sync.Once
	each  time.Duration
}

func (f *slowReducer) wait(ctx context.Context) {
	f.once.Do(func() {
		close(f.asked)
		select {
		case <-f.gate:
		case <-ctx.Done():
		}
	})
	select {
	case <-time.After(f.each):
	case <-ctx.Done():
	}
}

func (f *slowReducer) Reduce(ctx context.Context, typ layout.TypeInfo, source, live []byte) ([]byte, error) {
	f.wait(ctx)
	return f.recordingReducer.Reduce(ctx, typ, source, live)
}

func (f *slowReducer) Minimal(ctx context.Context, typ layout.TypeInfo, live []byte, _ sanitize.Shape) ([]byte, error) {
	f.wait(ctx)
	return f.recordingReducer.Minimal(ctx, typ, live, sanitize.Shape{})
}

// A backlog of closed windows that takes longer than one turn to plan is planned over
// several turns, each ending with a push: what is decided reaches the remote while the rest
// is planned, and the loop answers its messages in between (a status here; a stop, a new
// credential)
// (docs/branch-worker.md#a-bounded-turn). Planned in one turn, the 59 windows below would
// go out in a single push after all of them.
func TestABacklogLongerThanATurnIsPushedAsItIsPlanned(t *testing.T) {
	red := &slowReducer{gate: make(chan struct{}), asked: make(chan struct{}), each: 50 * time.Millisecond}
	r := newRig(t, func(c *Config) { c.Reducer = red; c.CommitWindow = 0 })
	before := r.server.Pushes(repoName)

	r.submit(upsert("alice", "team-a", "first", "1"))
	select {
	case <-red.asked: // the loop is planning the first write, and takes in nothing meanwhile
	case <-time.After(90 * time.Second):
		t.Fatal("the Reducer was never asked")
	}
	const backlog = 59 // 59 × 50 ms of questions: about three turns
	for i := range backlog {
		author := []string{"alice", "bob"}[i%2] // each edit closes the window of the one before
		r.submit(upsert(author, "team-a", fmt.Sprintf("cm-%d", i), "1"))
	}
	close(red.gate)
	// Sent behind the backlog: it is answered after the turn that takes the backlog in,
	// while most of it is still to be planned; in one turn it would wait for all of it.
	mid, err := r.worker.Status(r.ctx())
	if err != nil {
		t.Fatal(err)
	}
	final := r.settled()
	if mid.Pushes >= final.Pushes {
		t.Fatalf("the status sent behind the backlog was answered after its last push (%d pushes, %d in all)", mid.Pushes, final.Pushes)
	}

	for i := range backlog {
		if !r.hasFile(cmPath("team-a", fmt.Sprintf("cm-%d", i))) {
			t.Fatalf("cm-%d is not on the remote", i)
		}
	}
	// One push for the first write; the backlog in two or more, one per turn.
	if got := r.server.Pushes(repoName) - before; got < 3 {
		t.Fatalf("%d pushes; want the first write's and at least two for the backlog of %d windows", got, backlog)
	}
	if got := len(r.log()); got != 1+backlog {
		t.Fatalf("%d commits, want one per window: %d", got, 1+backlog)
	}
}
