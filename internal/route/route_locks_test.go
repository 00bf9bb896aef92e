package route

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// finishes runs f and fails the test with every goroutine's stack when f has not returned
// within a deadline generous enough for a loaded machine: a deadlock shows where it sits.
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		var stacks bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 2)
		t.Fatalf("%s did not finish: deadlocked or stalled; goroutines:\n%s", what, stacks.String())
	}
}

// gateTo is a gate routed to w, for tests of the gate alone.
func gateTo(w *worker.Worker) *gate {
	g := newGate(func(ownership.BranchKey) (*worker.Worker, bool) { return w, true })
	g.apply(view{version: 1, attached: true})
	return g
}

// branchRig is a registry whose workers write real repositories, and a router on it.
type branchRig struct {
	t        *testing.T
	registry *worker.Registry
	router   *Router
}

func newBranchRig(t *testing.T) *branchRig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reg := worker.NewRegistry(ctx, t.TempDir())
	t.Cleanup(func() {
		cancel()
		reg.StopAll()
	})
	return &branchRig{t: t, registry: reg, router: NewRouter(reg, nil, nil)}
}

// attach starts (or finds) the worker of url's main branch and routes target to it.
func (b *branchRig) attach(target, url string, remoteTimeout time.Duration) (*worker.Worker, ownership.BranchKey) {
	b.t.Helper()
	w, key, _, err := b.registry.Ensure(worker.Config{
		URL: url, Branch: "main", AllowedBranches: []string{"main"},
		Credentials:  gitrepo.Credentials{Username: "bot", Password: "pw"},
		CommitWindow: 100 * time.Millisecond, PushCooldown: 10 * time.Millisecond,
		RetryMin: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond, RemoteTimeout: remoteTimeout,
		Log: logr.Discard(),
	})
	if err != nil {
		b.t.Fatal(err)
	}
	b.router.Attach(target, key)
	// A worker stuck on its remote never reads this message: do not wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = w.SetTarget(ctx, worker.TargetConfig{Name: target, Path: "live", Prune: worker.PruneOnEvent})
	return w, key
}

// sinks returns the subscribers Wanted hands out for subs, by stream.
func sinks(t *testing.T, wanted []watch.Wanted) map[watch.StreamKey]*sink {
	t.Helper()
	out := map[watch.StreamKey]*sink{}
	for _, w := range wanted {
		s, ok := w.Subscriber.(*sink)
		if !ok {
			t.Fatalf("subscriber of %v is a %T", w.Key, w.Subscriber)
		}
		out[w.Key] = s
	}
	return out
}

func gitRepo(t *testing.T) (*testenv.GitServer, string) {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo("mirror.git"); err != nil {
		t.Fatal(err)
	}
	return g, g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "pw"}).URL("mirror.git")
}

// A reconcile (Wanted, Attach, Expect, Renew) racing the target's streams (events,
// snapshots that complete a gathering) must never deadlock: the router never calls into a
// gate while it holds its lock, and a gate never calls back into the router.
func TestReconcilesRacingStreamDeliveriesNeverDeadlock(t *testing.T) {
	g, url := gitRepo(t)
	rig := newBranchRig(t)
	const target = "team/live"
	_, key := rig.attach(target, url, 0)
	subs := []watch.Subscription{subscription(t, configMaps, "", "a"), subscription(t, services, "", "a")}
	wanted := rig.router.Wanted(target, subs, nil)
	streams := sinks(t, wanted)
	keys := watch.StreamKeys(subs)
	ctx := context.Background()
	const rounds = 300

	finishes(t, "reconciles racing deliveries", func() {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the reconciler
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				rig.router.Attach(target, key)
				rig.router.Wanted(target, subs, nil)
				if i%3 == 0 {
					rig.router.Expect(target, wanted, keys)
				}
				rig.router.Key(target)
				rig.router.TargetsOf(key)
			}
		}()
		for i, res := range []watch.Resource{configMaps, services} {
			s := streams[subs[i].Key]
			wg.Add(1)
			go func() { // one stream, delivering in order on its own goroutine
				defer wg.Done()
				for i := 0; i < rounds; i++ {
					obj := configMapWith("a", fmt.Sprintf("x%d", i%5), fmt.Sprint(i))
					obj.ID.Kind = res.Kind
					if i%4 == 0 {
						_ = s.Snapshot(ctx, res, nil)
					}
					_ = s.Change(ctx, res, watch.Change{Type: watch.Updated, Object: obj})
				}
			}()
		}
		wg.Wait()
	})

	// Whatever the race left gathering, the next snapshots complete it, and a later event
	// lands: nothing is stuck.
	rig.router.Expect(target, wanted, keys)
	for i, res := range []watch.Resource{configMaps, services} {
		if err := streams[subs[i].Key].Snapshot(ctx, res, nil); err != nil {
			t.Fatal(err)
		}
	}
	last := configMapWith("a", "last", "1")
	if err := streams[subs[0].Key].Change(ctx, configMaps, watch.Change{Type: watch.Created, Object: last}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/last.yaml")
		return err == nil
	})
}

// stalledRemote accepts connections and never answers: a branch worker fetching from it
// is stuck (up to its RemoteTimeout) and stops reading its inbox.
func stalledRemote(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { // before the workers stop: their last fetch fails at once
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/mirror.git"
}

// fillInbox submits events until the worker's inbox stays full: a Submit that cannot
// hand its event over within a moment.
func fillInbox(t *testing.T, w *worker.Worker, target string) {
	t.Helper()
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		obj := configMapWith("a", "fill", fmt.Sprint(i))
		err := w.Submit(ctx, worker.Event{Target: target, Type: configMaps.TypeInfo(), ID: obj.ID, Op: worker.OpUpsert, Doc: obj.Doc})
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return
		}
		if err != nil || i > 10_000 {
			t.Fatalf("filling the inbox: %d events, %v", i, err)
		}
	}
}

// One stalled branch (its worker's inbox full, a stream blocked handing it an event) holds
// up neither the reconciles of its own target nor another target's deliveries on another
// branch: no lock is held across a blocking hand-over.
func TestAStalledBranchHoldsUpNoOtherTarget(t *testing.T) {
	g, url := gitRepo(t)
	rig := newBranchRig(t)
	stuck, _ := rig.attach("team/stuck", stalledRemote(t), 10*time.Minute)
	rig.attach("team/live", url, 0)
	stuckSubs := []watch.Subscription{subscription(t, configMaps, "", "a")}
	liveSubs := []watch.Subscription{subscription(t, configMaps, "", "a")}
	stuckSink := sinks(t, rig.router.Wanted("team/stuck", stuckSubs, nil))[stuckSubs[0].Key]
	liveSink := sinks(t, rig.router.Wanted("team/live", liveSubs, nil))[liveSubs[0].Key]

	fillInbox(t, stuck, "team/stuck")
	streamCtx, stopStream := context.WithCancel(context.Background())
	defer stopStream()
	go func() { // the stalled target's stream, blocked handing over its next event
		_ = stuckSink.Change(streamCtx, configMaps, watch.Change{Type: watch.Created, Object: configMapWith("a", "waits", "1")})
	}()
	// The hand-over holds the stalled target's turn before anything is measured.
	waitFor(t, func() bool { return len(stuckSink.gate.turn) == 1 })

	ctx := context.Background()
	finishes(t, "reconciles and deliveries beside a stalled branch", func() {
		for i := 0; i < 50; i++ {
			rig.router.Wanted("team/stuck", stuckSubs, nil)
			rig.router.Wanted("team/live", liveSubs, nil)
			obj := configMapWith("a", "flows", fmt.Sprint(i))
			if err := liveSink.Change(ctx, configMaps, watch.Change{Type: watch.Updated, Object: obj}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	waitFor(t, func() bool {
		b, err := g.ReadFile("mirror.git", "main", "live/a/core/configmaps/flows.yaml")
		return err == nil && strings.Contains(string(b), `v: "49"`)
	})
}

// namingAttributor names every author at once and tells which object it named (a stand-in
// for the audit join: the test is of the locking around it).
type namingAttributor struct{ named chan string }

func (n namingAttributor) Author(_ context.Context, _ watch.Resource, ch watch.Change) (worker.Author, []string) {
	n.named <- ch.Object.ID.Name
	return worker.Author{Name: "alice", Email: "alice@example.com"}, nil
}

// With attribution on, a change whose hand-over waits on a stalled branch holds no lock
// the stream needs: the stream goes on queueing other objects' changes for their authors.
func TestAttributionHandsOnWithoutHoldingTheStream(t *testing.T) {
	rig := newBranchRig(t)
	stuck, _ := rig.attach("team/stuck", stalledRemote(t), 10*time.Minute)
	subs := []watch.Subscription{subscription(t, configMaps, "", "a")}
	s := sinks(t, rig.router.Wanted("team/stuck", subs, nil))[subs[0].Key]
	named := make(chan string, 100)
	s.attributed = newAttributed(namingAttributor{named: named})
	fillInbox(t, stuck, "team/stuck")
	ctx, stop := context.WithCancel(context.Background())
	defer stop() // ends the hand-overs still waiting
	finishes(t, "changes queued beside a hand-over that waits", func() {
		for i := 0; i < 20; i++ {
			// Once the first object is named, its hand-over waits on the full inbox.
			obj := configMapWith("a", fmt.Sprintf("obj%d", i), "1")
			if err := s.Change(ctx, configMaps, watch.Change{Type: watch.Created, Object: obj}); err != nil {
				t.Error(err)
				return
			}
			if got := <-named; got != obj.ID.Name {
				t.Errorf("named %s, want %s", got, obj.ID.Name)
				return
			}
		}
	})
}
