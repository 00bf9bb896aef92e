// Package metrics holds the Prometheus metrics of every stage of the pipeline
// (docs/metrics.md). One *Metrics is created per operator and handed to the stages; a nil
// *Metrics records nothing, so that a stage built without one (a test) works unchanged.
package metrics

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the operator's collectors, all named gitops_reverser_*.
type Metrics struct {
	eventsReceived   *prometheus.CounterVec
	snapshots        *prometheus.CounterVec
	documentsWritten *prometheus.CounterVec
	commits          prometheus.Counter
	pushes           *prometheus.CounterVec
	replays          prometheus.Counter
	windowCloses     *prometheus.CounterVec
	refusals         *prometheus.CounterVec
	queueDepth       *prometheus.GaugeVec
	eventToPush      prometheus.Histogram
	changeToApplied  *prometheus.HistogramVec
	attribution      *prometheus.CounterVec
	changes          *prometheus.CounterVec
	changesOpen      *prometheus.GaugeVec
	applyRequests    *prometheus.CounterVec
	applyEchoes      *prometheus.CounterVec
	staleSnapshots   *prometheus.CounterVec
	ownership        prometheus.Counter
}

const namespace = "gitops_reverser"

// New creates the collectors and registers them with reg. When reg already holds them (the
// operator started again in one process, as the sandbox and tests do), the registered
// collectors are shared.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		eventsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "events_received_total",
			Help: "Changes delivered by the watch streams after sanitizing (no-op updates are not counted), by resource and type."},
			[]string{"group", "resource", "type"}),
		snapshots: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "snapshots_total",
			Help: "Complete snapshots taken by the watch streams, by resource."}, []string{"group", "resource"}),
		documentsWritten: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "documents_written_total",
			Help: "Document actions committed: upsert, delete (a DELETE event) or prune (a sweep)."}, []string{"operation"}),
		commits: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "commits_total",
			Help: "Commits made by the branch workers (before any replay)."}),
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "pushes_total",
			Help: "Push attempts, by result: success, moved (the remote moved: replayed), failure."}, []string{"result"}),
		replays: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "replays_total",
			Help: "Pending writes rebuilt on a moved remote tip."}),
		windowCloses: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "window_closes_total",
			Help: "Commit windows closed, by reason."}, []string{"reason"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "refusals_total",
			Help: "Writes refused, by reason: folder (content the writer cannot understand), object (a document the layout refuses)."},
			[]string{"reason"}),
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "worker_queue_depth",
			Help: "Messages waiting in a branch worker's inbox."}, []string{"branch"}),
		eventToPush: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "event_to_push_seconds",
			Help:    "Time from an event reaching its branch worker to the push that published it.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}),
		changeToApplied: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "change_to_applied_seconds",
			Help:    "Time from the change that made an apply due (a Git-side push found, an API create to adopt, an overwritten edit to repair, a catch-up) to the applier reporting the revision applied (docs/two-way.md), by reason.",
			Buckets: prometheus.ExponentialBuckets(0.1, 2, 14)}, []string{"reason"}),
		attribution: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "attribution_resolved_total",
			Help: "Changes attributed, by the tier of the join that named the author (exact, uid, name, collection, unresolved)."},
			[]string{"tier"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "changes_total",
			Help: "The write path's ledger (docs/branch-worker.md#the-ledger): changes the branch workers received, and how each ended: written (in a pushed commit), superseded (by a later change or snapshot of its object), unchanged (Git already said so, or the prune mode keeps the document), released (its GitTarget left the branch, or its worker stopped)."},
			[]string{"outcome"}),
		changesOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "changes_open",
			Help: "Changes a branch worker holds that have not ended yet: in a window, held, committed and not pushed, or refused and kept for a retry."},
			[]string{"branch"}),
		applyRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "apply_requests_total",
			Help: "Applies asked of a GitOps applier (docs/two-way.md), by reason (ForeignCommit, CatchUp, Repair, Refusal) and outcome (success, failure)."},
			[]string{"reason", "outcome"}),
		applyEchoes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "apply_echoes_total",
			Help: "Writes of a GitOps applier seen by the watch (docs/two-way.md): not_mirrored (inside its apply window: the apply landing, which Git holds), withheld (it overwrote an edit made during the apply: a Repair follows), late (outside any window)."},
			[]string{"outcome"}),
		ownership: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "apply_ownership_conflicts_total",
			Help: "Changes and snapshot objects of a triggered target that another applier applies (another Flux Kustomization's): neither mirrored nor swept (docs/two-way.md)."}),
		staleSnapshots: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "stale_snapshots_total",
			Help: "Snapshots of triggered targets taken while Git was ahead of the cluster (docs/two-way.md): discarded, and asked for again once the apply landed."},
			[]string{"outcome"}),
	}
	var err error
	reg1 := func(c prometheus.Collector) prometheus.Collector {
		if err != nil {
			return c
		}
		var got prometheus.Collector
		got, err = register(reg, c)
		return got
	}
	m.eventsReceived = reg1(m.eventsReceived).(*prometheus.CounterVec)
	m.snapshots = reg1(m.snapshots).(*prometheus.CounterVec)
	m.documentsWritten = reg1(m.documentsWritten).(*prometheus.CounterVec)
	m.commits = reg1(m.commits).(prometheus.Counter)
	m.pushes = reg1(m.pushes).(*prometheus.CounterVec)
	m.replays = reg1(m.replays).(prometheus.Counter)
	m.windowCloses = reg1(m.windowCloses).(*prometheus.CounterVec)
	m.refusals = reg1(m.refusals).(*prometheus.CounterVec)
	m.queueDepth = reg1(m.queueDepth).(*prometheus.GaugeVec)
	m.eventToPush = reg1(m.eventToPush).(prometheus.Histogram)
	m.changeToApplied = reg1(m.changeToApplied).(*prometheus.HistogramVec)
	m.attribution = reg1(m.attribution).(*prometheus.CounterVec)
	m.changes = reg1(m.changes).(*prometheus.CounterVec)
	m.changesOpen = reg1(m.changesOpen).(*prometheus.GaugeVec)
	m.applyRequests = reg1(m.applyRequests).(*prometheus.CounterVec)
	m.applyEchoes = reg1(m.applyEchoes).(*prometheus.CounterVec)
	m.staleSnapshots = reg1(m.staleSnapshots).(*prometheus.CounterVec)
	m.ownership = reg1(m.ownership).(prometheus.Counter)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// EventReceived counts one change a stream delivered.
func (m *Metrics) EventReceived(group, resource, typ string) {
	if m != nil {
		m.eventsReceived.WithLabelValues(group, resource, typ).Inc()
	}
}

// Snapshot counts one complete snapshot.
func (m *Metrics) Snapshot(group, resource string) {
	if m != nil {
		m.snapshots.WithLabelValues(group, resource).Inc()
	}
}

// DocumentWritten counts one committed document action.
func (m *Metrics) DocumentWritten(operation string) {
	if m != nil {
		m.documentsWritten.WithLabelValues(operation).Inc()
	}
}

// ApplyRequest counts one apply asked of an applier, by reason and outcome.
func (m *Metrics) ApplyRequest(reason, outcome string) {
	if m != nil {
		m.applyRequests.WithLabelValues(reason, outcome).Inc()
	}
}

// ChangeApplied observes the time from the change that made an apply due to the applier's
// answer that it applied a revision holding it.
func (m *Metrics) ChangeApplied(reason string, since time.Duration) {
	if m != nil {
		m.changeToApplied.WithLabelValues(reason).Observe(since.Seconds())
	}
}

// ApplyEcho counts one write of an applier seen by the watch, by outcome.
func (m *Metrics) ApplyEcho(outcome string) {
	if m != nil {
		m.applyEchoes.WithLabelValues(outcome).Inc()
	}
}

// StaleSnapshot counts one snapshot of a triggered target taken while Git was ahead.
func (m *Metrics) StaleSnapshot(outcome string) {
	if m != nil {
		m.staleSnapshots.WithLabelValues(outcome).Inc()
	}
}

// ApplyOwnershipConflict counts one object of a triggered target another applier owns.
func (m *Metrics) ApplyOwnershipConflict() {
	if m != nil {
		m.ownership.Inc()
	}
}

// Commit counts one commit.
func (m *Metrics) Commit() {
	if m != nil {
		m.commits.Inc()
	}
}

// Push counts one push attempt by result.
func (m *Metrics) Push(result string) {
	if m != nil {
		m.pushes.WithLabelValues(result).Inc()
	}
}

// Replay counts one pending write rebuilt on a moved tip.
func (m *Metrics) Replay() {
	if m != nil {
		m.replays.Inc()
	}
}

// WindowClosed counts one closed window by reason.
func (m *Metrics) WindowClosed(reason string) {
	if m != nil {
		m.windowCloses.WithLabelValues(reason).Inc()
	}
}

// Refused counts one refused write by reason.
func (m *Metrics) Refused(reason string) {
	if m != nil {
		m.refusals.WithLabelValues(reason).Inc()
	}
}

// QueueDepth sets a branch worker's inbox length.
func (m *Metrics) QueueDepth(branch string, n int) {
	if m != nil {
		m.queueDepth.WithLabelValues(branch).Set(float64(n))
	}
}

// ForgetBranch drops the gauges of a stopped worker.
func (m *Metrics) ForgetBranch(branch string) {
	if m != nil {
		m.queueDepth.DeleteLabelValues(branch)
		m.changesOpen.DeleteLabelValues(branch)
	}
}

// Changes counts n changes of the ledger with one outcome: received, or how they ended.
func (m *Metrics) Changes(outcome string, n int) {
	if m != nil && n > 0 {
		m.changes.WithLabelValues(outcome).Add(float64(n))
	}
}

// ChangesOpen sets how many changes a branch worker holds that have not ended yet.
func (m *Metrics) ChangesOpen(branch string, n int) {
	if m != nil {
		m.changesOpen.WithLabelValues(branch).Set(float64(n))
	}
}

// Published observes the time from an event's arrival to its push.
func (m *Metrics) Published(received time.Time, now time.Time) {
	if m != nil {
		m.eventToPush.Observe(now.Sub(received).Seconds())
	}
}

// register registers c, or returns the collector of the same description reg holds.
func register(reg prometheus.Registerer, c prometheus.Collector) (prometheus.Collector, error) {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		return already.ExistingCollector, nil
	}
	if err != nil {
		return c, fmt.Errorf("register metrics: %w", err)
	}
	return c, nil
}

// AttributionResolved counts one change attributed at a tier of the join.
func (m *Metrics) AttributionResolved(tier string) {
	if m != nil {
		m.attribution.WithLabelValues(tier).Inc()
	}
}
