package worker

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
)

// Every change a worker receives ends once, with the outcome that happened to it, and the
// metric says the same as the worker's status (docs/branch-worker.md#the-ledger).
func TestEveryChangeEndsOnceInTheLedger(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(c *Config) { c.Metrics = m })

	// Two edits of one object in one window: both are in the pushed commit.
	r.submit(upsert("alice", "team-a", "a", "1"))
	r.submit(upsert("alice", "team-a", "a", "2"))
	r.settled()
	// The same document again: nothing to write.
	r.submit(upsert("alice", "team-a", "a", "2"))
	r.settled()
	// A snapshot that lists a as it is and a new b.
	snap := Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType,
		Objects: []SnapshotObject{
			{ID: upsert("", "team-a", "a", "2").ID, Doc: configMap("team-a", "a", "2")},
			{ID: upsert("", "team-a", "b", "1").ID, Doc: configMap("team-a", "b", "1")},
			{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "unreadable"}}, // no document: not a change
		}}
	if err := r.worker.Resync(r.ctx(), snap); err != nil {
		t.Fatal(err)
	}
	r.waitFor("b", func() bool { return r.hasFile(cmPath("team-a", "b")) })
	// A delete under OnEvent, and a delete of an object Git never held.
	r.submit(deleteEvent("alice", "team-a", "b"))
	r.submit(deleteEvent("alice", "team-a", "never-written"))
	r.waitFor("b's delete", func() bool { return !r.hasFile(cmPath("team-a", "b")) })
	st := r.settled()

	want := Ledger{Received: 7, Written: 4, Unchanged: 3}
	if st.Ledger != want {
		t.Fatalf("ledger %+v, want %+v", st.Ledger, want)
	}
	for outcome, n := range map[string]int{"received": 7, "written": 4, "unchanged": 3, "superseded": 0, "released": 0} {
		if got := changesTotal(t, reg, outcome); int(got) != n {
			t.Errorf("gitops_reverser_changes_total{outcome=%q} = %v, want %d", outcome, got, n)
		}
	}
}

// A held target's changes stay open until they end: a later change of the same object
// supersedes an earlier one, a delete the prune mode ignores ends unchanged, and what
// stays is counted open.
func TestHeldChangesStayOpenUntilTheyEnd(t *testing.T) {
	s, ts := heldState()
	ts.cfg.Prune = PruneNever
	receive := func(b *batch) *batch {
		for i := range b.events {
			b.events[i].changes = 1
		}
		s.count(outcomeReceived, b.changes())
		return b
	}
	s.closed = append(s.closed,
		receive(heldWindow("alice", upsert("alice", "team-a", "x", "1"), upsert("alice", "team-a", "y", "1"))),
		receive(heldWindow("bob", upsert("bob", "team-a", "x", "2"), deleteEvent("bob", "team-a", "y"))))
	s.coalesceHeld()

	want := Ledger{Received: 4, Superseded: 1, Unchanged: 1, Open: 2}
	if got := s.ledgerNow(); got != want {
		t.Fatalf("ledger %+v, want %+v", got, want)
	}

	// The target leaves the worker: what it held is released, and nothing stays open.
	s.awaiting, s.closed = s.closed, nil
	s.setTarget(ts.cfg, true)
	want = Ledger{Received: 4, Superseded: 1, Unchanged: 1, Released: 2}
	if got := s.ledgerNow(); got != want || !got.Balanced() {
		t.Fatalf("after the target left: ledger %+v, want %+v", got, want)
	}
}

// changesTotal reads gitops_reverser_changes_total{outcome} from reg.
func changesTotal(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	return counterValue(t, reg, "gitops_reverser_changes_total", "outcome", outcome)
}

// counterValue reads the counter family{label="value"} from reg, 0 when absent.
func counterValue(t *testing.T, reg *prometheus.Registry, family, label, value string) float64 {
	t.Helper()
	return metricOf(t, reg, family, label, value).GetCounter().GetValue()
}

// metricOf returns the series family{label="value"} of reg, nil (reading as zero) when absent.
func metricOf(t *testing.T, reg *prometheus.Registry, family, label, value string) *dto.Metric {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m
				}
			}
		}
	}
	return nil
}
