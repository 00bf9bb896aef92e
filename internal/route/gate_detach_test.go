package route

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
)

// gatheringOfTwo is a target's gate gathering the first snapshots of two streams (ConfigMaps
// and Services), with their sinks, writing through a real worker and Git server.
func gatheringOfTwo(t *testing.T) (*gate, *testenv.GitServer, *sink, *sink) {
	w, g := startWorker(t)
	gate := gateTo(w)
	cms := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a"), fingerprint: "0/1", gate: gate}
	svcs := &sink{target: "team/live", sub: subscription(t, services, "", "a"), fingerprint: "0/1", gate: gate}
	gate.expect(map[watch.StreamKey]string{cms.sub.Key: "0/1", svcs.sub.Key: "0/1"})
	return gate, g, cms, svcs
}

// A target detached while its gate gathers hands nothing over and arms no retry: what it
// gathered is let go (it attaches again with fresh snapshots).
func TestADetachedGateHandsNothingOverAndStopsRetrying(t *testing.T) {
	gate, g, cms, svcs := gatheringOfTwo(t)
	ctx := context.Background()
	if err := cms.Snapshot(ctx, configMaps, []watch.Object{configMapWith("a", "x", "1")}); err != nil {
		t.Fatal(err)
	}

	gate.apply(view{version: 2, attached: false})
	_ = svcs.Snapshot(ctx, services, []watch.Object{object("Service", "a", "web", nil)})

	gate.mu.Lock()
	defer gate.mu.Unlock()
	if gate.timer != nil || gate.retrying || len(gate.snaps) > 0 || len(gate.held) > 0 {
		t.Fatalf("a detached gate keeps work: timer %v, retrying %t, %d snapshots, %d events", gate.timer != nil, gate.retrying, len(gate.snaps), len(gate.held))
	}
	if files, err := g.ListFiles("mirror.git", "main"); err == nil && len(files) > 0 {
		t.Fatalf("a detached gate handed over %q", files)
	}
}

// A view that arrives after a newer one is ignored: a late detach does not undo an attach.
func TestALateOlderViewIsIgnored(t *testing.T) {
	gate := newGate(nil)
	gate.apply(view{version: 3, attached: true})
	gate.apply(view{version: 2, attached: false})
	if gate.route.version != 3 || !gate.route.attached || gate.detached {
		t.Fatalf("route %+v, detached %t after a late older view", gate.route, gate.detached)
	}
}

// A hand-over that fails while a gathering is open (a flush begun before it, its worker
// being replaced) does not cut the gathering short, yet always leaves a timer armed: the
// retry waits for the gathering's end, and the start's snapshots land together in one
// commit when the last one arrives.
func TestAFailedHandOverDoesNotCutAGatheringShort(t *testing.T) {
	gate, g, cms, svcs := gatheringOfTwo(t)

	// Even after a flush stopped the gathering's timer, the retry fires no sooner than the
	// gathering ends.
	gate.mu.Lock()
	gate.stopTimer()
	gate.mu.Unlock()
	_ = gate.later(errNoWorker)
	gate.mu.Lock()
	fireAt, end, armed := gate.fireAt, gate.gatherEnd, gate.timer != nil
	gate.mu.Unlock()
	if !armed || fireAt.Before(end.Add(-time.Second)) {
		t.Fatalf("the failed hand-over armed %t a retry at %s, before the gathering ends at %s: it would hand over a part of it", armed, fireAt, end)
	}

	ctx := context.Background()
	if err := cms.Snapshot(ctx, configMaps, []watch.Object{configMapWith("a", "x", "1")}); err != nil {
		t.Fatal(err)
	}
	if err := svcs.Snapshot(ctx, services, []watch.Object{object("Service", "a", "web", nil)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		files, err := g.ListFiles("mirror.git", "main")
		return err == nil && len(files) >= 3
	})
	if log, err := g.Log("mirror.git", "main"); err != nil || len(log) != 1 {
		t.Fatalf("the gathering landed in %d commits (%v), want one", len(log), err)
	}
	// The flush that ended the gathering was the retry: later changes are handed over, not
	// held for a retry that no timer will run.
	if err := cms.Change(ctx, configMaps, watch.Change{Type: watch.Created, Object: configMapWith("a", "after", "1")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		files, err := g.ListFiles("mirror.git", "main")
		return err == nil && slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(f, "/after.yaml") })
	})
}

// A flush that runs while the router opens a new gathering (expect does not wait for the
// turn) leaves the new gathering's timer armed: a stream that never lists must not hold the
// target's later changes for ever.
func TestAFlushLeavesANewGatheringItsTimer(t *testing.T) {
	w, _ := startWorker(t)
	gate := gateTo(w)
	cms := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a"), fingerprint: "0/2", gate: gate}
	gate.expect(map[watch.StreamKey]string{cms.sub.Key: "0/2"})
	if err := gate.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if gate.holding() && gate.timer == nil {
		t.Fatalf("the gate holds (waiting %d) with no timer armed", len(gate.waiting))
	}
}

// A delete whose stream gives up the hand-over (it stopped, its subscription was replaced)
// while another hand-over holds the target's turn is kept and handed over by the retry: no
// snapshot would bring it back under prune OnEvent.
func TestADeleteWhoseStreamGaveUpIsKeptAndLands(t *testing.T) {
	w, g := startWorker(t)
	gate := gateTo(w)
	cms := &sink{target: "team/live", sub: subscription(t, configMaps, "", "a"), fingerprint: "0/1", gate: gate}
	ctx := context.Background()
	if err := cms.Snapshot(ctx, configMaps, []watch.Object{configMapWith("a", "doomed", "1")}); err != nil {
		t.Fatal(err)
	}
	inGit := func() bool {
		files, err := g.ListFiles("mirror.git", "main")
		return err == nil && slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(f, "/doomed.yaml") })
	}
	waitFor(t, inGit)

	gate.turn <- struct{}{} // another hand-over holds the turn
	gaveUp, cancel := context.WithCancel(ctx)
	cancel()
	if err := cms.Change(gaveUp, configMaps, watch.Change{Type: watch.Deleted, Object: configMapWith("a", "doomed", "1")}); err == nil {
		t.Fatal("a hand-over without the turn and with an ended context succeeded")
	}
	gate.give()
	waitFor(t, func() bool { return !inGit() })
}
