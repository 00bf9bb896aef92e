package worker

import (
	"context"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// namingReducer stands in for a slow API server's dry-runs (a unit test of the hook only):
// it counts the questions about each object, and takes delay to answer.
type namingReducer struct {
	recordingReducer
	delay atomic.Int64
	mu    sync.Mutex
	asked map[string]int
}

var objectName = regexp.MustCompile(`\n  name: (\S+)\n`)

func (f *namingReducer) note(ctx context.Context, live []byte) {
	if m := objectName.FindSubmatch(live); m != nil {
		f.mu.Lock()
		f.asked[string(m[1])]++
		f.mu.Unlock()
	}
	select {
	case <-time.After(time.Duration(f.delay.Load())):
	case <-ctx.Done():
	}
}

func (f *namingReducer) Reduce(ctx context.Context, typ layout.TypeInfo, source, live []byte) ([]byte, error) {
	f.note(ctx, live)
	return f.recordingReducer.Reduce(ctx, typ, source, live)
}

func (f *namingReducer) Minimal(ctx context.Context, typ layout.TypeInfo, live []byte, _ sanitize.Shape) ([]byte, error) {
	f.note(ctx, live)
	return f.recordingReducer.Minimal(ctx, typ, live, sanitize.Shape{})
}

func (f *namingReducer) times(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[name]
}

// A recheck cut by a turn's end goes on with the held windows it has not reached
// (docs/branch-worker.md#a-bounded-turn): with two held targets whose windows each take
// longer than a turn, the second target's window is planned again too. Going on from the
// front, the recheck planned the first target's window at every turn and never the second.
func TestARecheckCutByATurnsEndReachesTheNextHeldTarget(t *testing.T) {
	greeting := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\n  namespace: team-a\ndata:\n  message: ${GREETING}\n"
	red := &namingReducer{asked: map[string]int{}}
	r := rigOn(t, map[string]string{
		"clusters/dev/team-a/core/configmaps/greeting.yaml":  greeting,
		"clusters/prod/team-a/core/configmaps/greeting.yaml": greeting,
	}, func(c *Config) { c.Reducer = red })
	r.setTarget(TargetConfig{Name: "team/prod", Path: "clusters/prod", Prune: PruneOnEvent})
	prod := greetingSnapshot("hello", "1")
	prod.Target = "team/prod"
	prod.Objects[1] = SnapshotObject{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "prod-only"}, Doc: configMap("team-a", "prod-only", "1")}
	for _, snap := range []Snapshot{greetingSnapshot("hello", "1"), prod} {
		if err := r.worker.Resync(r.ctx(), snap); err != nil {
			t.Fatal(err)
		}
	}
	r.waitFor("both targets held", func() bool {
		st := r.settled()
		return st.Fidelity["team/live"].State == FidelityFalse && st.Fidelity["team/prod"].State == FidelityFalse
	})
	before := red.times("prod-only")

	// Each held window now takes longer than a turn; a change of both folders that fixes
	// neither makes the worker plan the held windows again, the first target's first.
	red.delay.Store(int64(planTurn + planTurn/5))
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{
		"clusters/dev/team-a/core/configmaps/unrelated.yaml":  string(configMap("team-a", "unrelated", "1")),
		"clusters/prod/team-a/core/configmaps/unrelated.yaml": string(configMap("team-a", "unrelated", "1")),
	}}); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the recheck to reach the second held target", func() bool { return red.times("prod-only") > before })
}
