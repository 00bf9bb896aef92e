package pipeline

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-reverser/gitops-reverser/internal/attribution"
	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// attributionJoin names the author of a change from the audit facts
// (docs/attribution.md#the-join, docs/attribution.md#authors); it serves route.Attributor.
type attributionJoin struct {
	index   *attribution.Index
	grace   time.Duration
	metrics *metrics.Metrics
}

func (j attributionJoin) Author(ctx context.Context, res watch.Resource, ch watch.Change) (worker.Author, []string) {
	key := attribution.ObjectKey{
		Resource:        schema.GroupResource{Group: res.GVR.Group, Resource: res.GVR.Resource},
		Namespace:       ch.Object.ID.Namespace,
		Name:            ch.Object.ID.Name,
		UID:             ch.Object.UID,
		ResourceVersion: ch.Object.ResourceVersion,
		Deleted:         ch.Type == watch.Deleted,
	}
	author, tier := j.index.Resolve(ctx, key, j.grace)
	j.metrics.AttributionResolved(tier.String())
	return worker.Author{Name: author.Name, Email: author.Email}, attribution.Trailers(author)
}
