package controller

import (
	"errors"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
	"github.com/gitops-reverser/gitops-reverser/internal/route"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// Pipeline is what the reconcilers wire: one worker per repository branch, one stream per
// (resource type, scope), the routes between them, and the catalog rules resolve against.
type Pipeline struct {
	Workers *worker.Registry
	Router  *route.Router
	Hub     *watch.Hub
	Catalog *watch.Catalog
	// Reducer takes server defaults out of live documents
	// (docs/sanitize.md#server-defaults-are-not-edits); nil writes them as they are.
	Reducer worker.Reducer
	// Tune, when set, adjusts every branch worker's configuration (timings in tests).
	Tune func(*worker.Config)
	// Sensitive names the types written only encrypted (Secrets and --sensitive-types).
	Sensitive watch.SensitiveTypes
	// Metrics records every stage; shared by workers and streams.
	Metrics *metrics.Metrics
	// DigestKeys holds the key of sealed Secrets' digests.
	DigestKeys *digestKeys
	// Retarget carries requests to reconcile GitTargets that another change affects
	// (a replaced worker, a catalog change, a change of a worker's state).
	Retarget chan event.GenericEvent
	// Changes gathers the targets whose worker state changed; workerChanges turns them
	// into Retarget requests.
	Changes *worker.Changes
}

// discoveryRan is the readiness check: the operator is ready once discovery answered (the
// catalog runs on every replica; a follower is ready to take over).
func (p *Pipeline) discoveryRan(*http.Request) error {
	select {
	case <-p.Catalog.Synced():
		return nil
	default:
		return errors.New("discovery has not answered yet")
	}
}
