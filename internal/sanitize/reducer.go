package sanitize

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// Reduce is ReduceDocument for the resource type as the layout describes it, so that a
// Defaulter serves as the branch worker's Reducer.
func (d *Defaulter) Reduce(ctx context.Context, typ layout.TypeInfo, source, live []byte) ([]byte, error) {
	return d.ReduceDocument(ctx, gvrOf(typ), source, live)
}

// Minimal is MinimalDocument for the resource type as the layout describes it.
func (d *Defaulter) Minimal(ctx context.Context, typ layout.TypeInfo, live []byte, shape Shape) ([]byte, error) {
	return d.MinimalDocument(ctx, gvrOf(typ), live, shape)
}

func gvrOf(typ layout.TypeInfo) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: typ.Group, Version: typ.Version, Resource: typ.Resource}
}
