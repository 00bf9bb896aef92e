package pipeline

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// appliers is the worker's Applier: it hands each apply to the applier of the trigger's
// kind.
type appliers struct {
	flux *applier.Flux
}

var _ worker.Applier = appliers{}

func (a appliers) Apply(ctx context.Context, trigger worker.ApplyTrigger, branch, commit string) (string, error) {
	switch trigger.Kind {
	case "FluxTrigger":
		applied, err := a.flux.Apply(ctx, types.NamespacedName{Namespace: trigger.Namespace, Name: trigger.Name}, branch, commit)
		return applied.Revision, err
	}
	return "", fmt.Errorf("no applier for trigger kind %q", trigger.Kind)
}
