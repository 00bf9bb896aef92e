package worker

import (
	"strings"
	"testing"
	"time"
)

// heldState is a branch with one target whose folder holds its batches back.
func heldState() (*branchState, *targetState) {
	ts := &targetState{cfg: TargetConfig{Name: "team/live", Prune: PruneOnEvent}, held: errTest, folder: &folder{}}
	s := &branchState{cfg: Config{PushCooldown: time.Second}, targets: map[string]*targetState{"team/live": ts}, ready: true}
	return s, ts
}

var errTest = &writeRefusal{target: "team/live", err: errTestCause{}}

type errTestCause struct{}

func (errTestCause) Error() string { return "the folder no longer builds" }

func heldWindow(author string, evs ...Event) *batch {
	b := &batch{target: "team/live", author: Author{Name: author}}
	for _, ev := range evs {
		b.events = append(b.events, ev)
		b.received = append(b.received, time.Now())
	}
	return b
}

// docsOf lists the queued documents of object name, in planning order.
func docsOf(s *branchState, name string) []string {
	var out []string
	for _, b := range s.closed {
		for _, ev := range b.events {
			if ev.ID.Name == name {
				out = append(out, strings.TrimSpace(string(ev.Doc[strings.LastIndex(string(ev.Doc), "key:"):])))
			}
		}
	}
	return out
}

// A change kept after the render refused it must not come back over a newer change of
// the same object that is already queued, nor be merged into it.
func TestARetriedRefusedChangeNeverComesBackOverANewerOne(t *testing.T) {
	s, ts := heldState()
	old := upsert("alice", "team-a", "x", "old")
	s.keepRefused(ts, []refusedChange{{ev: old, seq: 1}, {ev: upsert("alice", "team-a", "y", "kept"), seq: 1}})
	s.closed = []*batch{heldWindow("alice", upsert("alice", "team-a", "x", "new"))}

	s.retryRefused(ts, time.Now())
	s.supersede()
	s.coalesceHeld()

	if got := docsOf(s, "x"); len(got) != 1 || got[0] != "key: new" {
		t.Fatalf("queued changes of x: %q, want only the newer one", got)
	}
	if got := docsOf(s, "y"); len(got) != 1 || got[0] != "key: kept" {
		t.Fatalf("queued changes of y: %q, want the kept one", got)
	}
	if s.closed[0].reason != closeRetry {
		t.Fatalf("the retry is not queued before the newer window: %+v", s.closed[0])
	}
}

// What a held target keeps is bounded by its objects: windows of alternating authors that
// change the same object leave one change of it.
func TestHeldWindowsOfAlternatingAuthorsKeepOneChangePerObject(t *testing.T) {
	s, _ := heldState()
	for i := 0; i < 100; i++ {
		author := []string{"alice", "bob"}[i%2]
		s.closed = append(s.closed, heldWindow(author, upsert(author, "team-a", "x", string(rune('a'+i%26)))))
		s.coalesceHeld()
	}
	if n := len(docsOf(s, "x")); n != 1 {
		t.Fatalf("%d changes of one object held, want 1", n)
	}
}

// A held batch whose recheck cannot act yet (the branch backs off after a failed fetch)
// must not make the loop wake in the past, which would spin it.
func TestAHeldTargetDoesNotWakeTheLoopBeforeItCanAct(t *testing.T) {
	now := time.Now()
	s, ts := heldState()
	s.closed = []*batch{heldWindow("alice", upsert("alice", "team-a", "x", "1"))}
	s.recheckAt, s.retryAt = now.Add(-time.Minute), now.Add(time.Minute)
	if wake := s.nextWake(now); wake.Before(s.retryAt) {
		t.Fatalf("held: wakes at %s, before the retry at %s", wake, s.retryAt)
	}

	// A kept refused change with a write still pending: the push comes first.
	s.closed, ts.held = nil, nil
	s.keepRefused(ts, []refusedChange{{ev: upsert("alice", "team-a", "y", "1")}})
	s.retryAt = time.Time{}
	s.pending = []*pendingWrite{{target: "team/live", applied: true}}
	s.lastPush = now
	if wake := s.nextWake(now); wake.Before(now) {
		t.Fatalf("kept refusal with a pending write: wakes at %s, in the past", wake)
	}
}

// Writes that wait for a refused folder, with nothing to push, must not wake the loop
// before their recheck.
func TestUnappliedWritesAloneDoNotWakeTheLoopBeforeTheirRecheck(t *testing.T) {
	now := time.Now()
	s, ts := heldState()
	ts.held = nil
	s.localTip, s.remoteTip = "tip", "tip"
	s.pending = []*pendingWrite{{target: "team/live", applied: false}}
	s.recheckAt = now.Add(time.Minute)
	if wake := s.nextWake(now); wake.Before(s.recheckAt) {
		t.Fatalf("wakes at %s, before the recheck at %s", wake, s.recheckAt)
	}
}
