package operator

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A second run of the operator in one process exports its own counters: the first run's
// collectors are replaced, not kept.
func TestASecondRunExportsItsOwnAuditCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	counter := func(v float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "audit_events_total", ConstLabels: prometheus.Labels{"outcome": "refused"}},
			func() float64 { return v })
	}
	if err := registerReplacing(reg, []prometheus.Collector{counter(1)}); err != nil {
		t.Fatal(err)
	}
	if err := registerReplacing(reg, []prometheus.Collector{counter(7)}); err != nil {
		t.Fatal(err)
	}
	got, err := testutil.GatherAndCount(reg, "audit_events_total")
	if err != nil || got != 1 {
		t.Fatalf("%d series, %v; want one", got, err)
	}
	mfs, _ := reg.Gather()
	if v := mfs[0].GetMetric()[0].GetCounter().GetValue(); v != 7 {
		t.Fatalf("exported %v, want the second run's 7", v)
	}
}
