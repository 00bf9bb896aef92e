package route

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

var (
	configMaps = watch.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
	services   = watch.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Kind: "Service", Namespaced: true}
	team       = types.NamespacedName{Namespace: "team", Name: "live"}
)

func subscription(t *testing.T, res watch.Resource, selector string, namespaces ...string) watch.Subscription {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	subs := watch.MergeClaims([]watch.Claim{{Target: team, Resource: res, Namespaces: namespaces, Selector: sel, Operations: watch.AllOperations}})
	if len(subs) != 1 {
		t.Fatalf("%d subscriptions", len(subs))
	}
	return subs[0]
}

func object(kind, ns, name string, lbls map[string]string) watch.Object {
	return watch.Object{
		ID:     layout.Identity{Kind: kind, Namespace: ns, Name: name},
		Labels: lbls,
		Doc:    []byte("apiVersion: v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\n"),
	}
}

func TestSnapshotsSplitByTheNamespacesTheTargetCoversAndKeepOnlySelectedObjects(t *testing.T) {
	s := &sink{target: "team/live", sub: subscription(t, configMaps, "tier=web", "a", "b")}
	snaps := s.snapshots(configMaps, []watch.Object{
		object("ConfigMap", "a", "one", map[string]string{"tier": "web"}),
		object("ConfigMap", "a", "unlabelled", nil),
		object("ConfigMap", "b", "two", map[string]string{"tier": "web"}),
		object("ConfigMap", "c", "outside", map[string]string{"tier": "web"}),
	})
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots, want one per namespace", len(snaps))
	}
	for _, snap := range snaps {
		if len(snap.Objects) != 1 || snap.Objects[0].ID.Namespace != snap.Scope.Namespace {
			t.Fatalf("snapshot of %q holds %+v", snap.Scope.Namespace, snap.Objects)
		}
		if snap.Scope.Kind != "ConfigMap" || snap.Target != "team/live" {
			t.Fatalf("snapshot scope %+v target %s", snap.Scope, snap.Target)
		}
	}
}

// A real worker on a real Git server shows what the gate hands over.
func startWorker(t *testing.T) (*worker.Worker, *testenv.GitServer) {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo("mirror.git"); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "pw"})
	ctx, cancel := context.WithCancel(context.Background())
	w, err := worker.Start(ctx, worker.Config{
		URL: front.URL("mirror.git"), Branch: "main", AllowedBranches: []string{"main"},
		Credentials:  gitrepo.Credentials{Username: "bot", Password: "pw"},
		CommitWindow: 200 * time.Millisecond, PushCooldown: 10 * time.Millisecond,
		RetryMin: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond,
		Dir: t.TempDir(), Log: logr.Discard(),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-w.Done() })
	if err := w.SetTarget(ctx, worker.TargetConfig{Name: "team/live", Path: "live", Prune: worker.PruneOnEvent}); err != nil {
		t.Fatal(err)
	}
	return w, g
}

func TestGateLandsTheFirstSnapshotsOfATargetInOneCommitAndHoldsLaterEvents(t *testing.T) {
	w, g := startWorker(t)
	gate := gateTo(w)
	cms := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a"), fingerprint: "0/1", gate: gate}
	svcs := &sink{target: "team/live", sub: subscription(t, services, "", "a"), fingerprint: "0/1", gate: gate}
	gate.expect(map[watch.StreamKey]string{cms.sub.Key: "0/1", svcs.sub.Key: "0/1"})
	ctx := context.Background()

	if err := cms.Snapshot(ctx, configMaps, []watch.Object{object("ConfigMap", "a", "settings", nil)}); err != nil {
		t.Fatal(err)
	}
	// An event after the first snapshot waits for the second.
	if err := cms.Change(ctx, configMaps, watch.Change{Type: watch.Created, Object: object("ConfigMap", "a", "later", nil)}); err != nil {
		t.Fatal(err)
	}
	if err := svcs.Snapshot(ctx, services, []watch.Object{object("Service", "a", "web", nil)}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, func() bool {
		files, _ := g.ListFiles("mirror.git", "main")
		return strings.Contains(strings.Join(files, " "), "later.yaml")
	})
	log, err := g.Log("mirror.git", "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 {
		t.Fatalf("%d commits, want the resync of both types and then the held event", len(log))
	}
	first, err := g.ListFiles("mirror.git", log[1].SHA)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(first, " ")
	if !strings.Contains(joined, "configmaps/settings.yaml") || !strings.Contains(joined, "services/web.yaml") || strings.Contains(joined, "later.yaml") {
		t.Fatalf("the first commit holds %q, want both snapshots and not the later event", first)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	end := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(end) {
			t.Fatal("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func configMapWith(ns, name, value string) watch.Object {
	o := object("ConfigMap", ns, name, nil)
	o.Doc = append(o.Doc, []byte("data:\n  v: \""+value+"\"\n")...)
	return o
}

func TestAReSnapshotWhileGatheringSupersedesTheEventsHeldBeforeIt(t *testing.T) {
	w, g := startWorker(t)
	gate := gateTo(w)
	cms := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a"), fingerprint: "0/1", gate: gate}
	svcs := &sink{target: "team/live", sub: subscription(t, services, "", "a"), fingerprint: "0/1", gate: gate}
	gate.expect(map[watch.StreamKey]string{cms.sub.Key: "0/1", svcs.sub.Key: "0/1"})
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The ConfigMap stream: snapshot at v1, an update to v2, then (after a 410) a new
	// snapshot at v3 — all before the Service stream's first snapshot.
	must(cms.Snapshot(ctx, configMaps, []watch.Object{configMapWith("a", "x", "1")}))
	must(cms.Change(ctx, configMaps, watch.Change{Type: watch.Updated, Object: configMapWith("a", "x", "2")}))
	must(cms.Snapshot(ctx, configMaps, []watch.Object{configMapWith("a", "x", "3")}))
	must(svcs.Snapshot(ctx, services, []watch.Object{object("Service", "a", "web", nil)}))
	path := "live/a/core/configmaps/x.yaml"
	waitFor(t, func() bool {
		b, err := g.ReadFile("mirror.git", "main", path)
		return err == nil && len(b) > 0
	})
	b, _ := g.ReadFile("mirror.git", "main", path)
	if !strings.Contains(string(b), `v: "3"`) {
		t.Fatalf("an event held before a newer snapshot landed after it:\n%s", b)
	}
}

func TestAnObjectWhoseLabelsLeaveTheSelectorIsDeleted(t *testing.T) {
	w, g := startWorker(t)
	gate := gateTo(w)
	web := &sink{target: "team/live", sub: subscription(t, configMaps, "tier=web", "a"), gate: gate}
	ctx := context.Background()
	before := object("ConfigMap", "a", "x", map[string]string{"tier": "web"})
	if err := web.Change(ctx, configMaps, watch.Change{Type: watch.Created, Object: before}); err != nil {
		t.Fatal(err)
	}
	path := "live/a/core/configmaps/x.yaml"
	waitFor(t, func() bool { _, err := g.ReadFile("mirror.git", "main", path); return err == nil })
	after := object("ConfigMap", "a", "x", map[string]string{"tier": "db"})
	if err := web.Change(ctx, configMaps, watch.Change{Type: watch.Updated, Object: after, Previous: &before}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := g.ReadFile("mirror.git", "main", path); return err != nil })
}

// slowAttributor names every author "alice" after the object's delay (a stand-in for the
// audit join: a pure unit test of the ordering around it).
type slowAttributor struct{ delay map[string]time.Duration }

func (s slowAttributor) Author(ctx context.Context, _ watch.Resource, ch watch.Change) (worker.Author, []string) {
	select {
	case <-time.After(s.delay[ch.Object.ID.Name]):
	case <-ctx.Done():
	}
	return worker.Author{Name: "alice", Email: "alice@example.com"}, []string{"Kubernetes-User: alice"}
}

func TestAttributionKeepsOneObjectsOrderAndNeverHoldsOthersOrOvertakesASnapshot(t *testing.T) {
	w, g := startWorker(t)
	gate := gateTo(w)
	s := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a"), gate: gate,
		attributed: newAttributed(slowAttributor{delay: map[string]time.Duration{"slow": 2 * time.Second, "stale": 3 * time.Second}})}
	ctx := context.Background()
	change := func(typ watch.ChangeType, name, v string) {
		t.Helper()
		if err := s.Change(ctx, configMaps, watch.Change{Type: typ, Object: configMapWith("a", name, v)}); err != nil {
			t.Fatal(err)
		}
	}
	change(watch.Created, "slow", "1")
	change(watch.Updated, "slow", "2")
	change(watch.Created, "fast", "1")
	// A fast object is not held behind a slow one.
	waitFor(t, func() bool {
		_, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/fast.yaml")
		return err == nil
	})
	if _, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/slow.yaml"); err == nil {
		t.Fatal("the slow object's change was not waiting for its author")
	}
	// The slow object's changes land in order: the file ends at v2.
	waitFor(t, func() bool {
		b, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/slow.yaml")
		return err == nil && strings.Contains(string(b), `v: "2"`)
	})
	// A change still being attributed when a snapshot arrives is dropped: the snapshot
	// holds the newer state.
	change(watch.Created, "stale", "old")
	if err := s.Snapshot(ctx, configMaps, []watch.Object{configMapWith("a", "stale", "new"), configMapWith("a", "slow", "2"), configMapWith("a", "fast", "1")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		b, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/stale.yaml")
		return err == nil && strings.Contains(string(b), "v: new")
	})
	waitFor(t, func() bool { return len(s.attributed.pendingFor()) == 0 })
	// A later change lands after anything the stale one could have become.
	change(watch.Created, "marker", "1")
	waitFor(t, func() bool {
		_, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/marker.yaml")
		return err == nil
	})
	b, _ := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/stale.yaml")
	if !strings.Contains(string(b), "v: new") {
		t.Fatalf("a change from before the snapshot overtook it:\n%s", b)
	}
}
