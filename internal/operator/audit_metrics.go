package operator

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gitops-reverser/gitops-reverser/internal/attribution"
)

// registerAuditMetrics exports the audit webhook's counters and the size of its fact index
// (docs/metrics.md). They are read from the index when Prometheus scrapes.
func registerAuditMetrics(index *attribution.Index) error {
	c := index.Counters()
	events := func(outcome, reason string, read func() int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "gitops_reverser", Name: "audit_events_total",
			Help:        "Audit events received by the webhook, by outcome (accepted, ignored, refused) and reason.",
			ConstLabels: prometheus.Labels{"outcome": outcome, "reason": reason}}, func() float64 { return float64(read()) })
	}
	collectors := []prometheus.Collector{
		events("accepted", "", c.Accepted),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "gitops_reverser", Name: "audit_facts_evicted_total",
			Help: "Facts dropped from the full index before their time (oldest first)."}, func() float64 { return float64(c.Evicted()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "gitops_reverser", Name: "audit_facts",
			Help: "Facts held in the attribution index."}, func() float64 { return float64(index.Len()) }),
	}
	for _, r := range attribution.IgnoreReasons() {
		collectors = append(collectors, events("ignored", r.String(), func() int64 { return c.Ignored(r) }))
	}
	for _, r := range attribution.RefuseReasons() {
		collectors = append(collectors, events("refused", r.String(), func() int64 { return c.Refused(r) }))
	}
	return registerReplacing(ctrlmetrics.Registry, collectors)
}

// registerReplacing registers the collectors, each replacing one registered before under
// the same name and labels: a second run of the operator in one process (the sandbox, the
// tests) exports its own index, not the first run's.
func registerReplacing(reg prometheus.Registerer, collectors []prometheus.Collector) error {
	for _, col := range collectors {
		err := reg.Register(col)
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			reg.Unregister(already.ExistingCollector)
			err = reg.Register(col)
		}
		if err != nil {
			return fmt.Errorf("register audit metrics: %w", err)
		}
	}
	return nil
}
