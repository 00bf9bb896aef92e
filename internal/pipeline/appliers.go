package pipeline

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-reverser/gitops-reverser/internal/applier"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// appliers is the worker's Applier: it hands each apply to the applier of the trigger's
// kind.
type appliers struct {
	flux   *applier.Flux
	argocd *applier.ArgoCD
}

var _ worker.Applier = appliers{}

func (a appliers) Apply(ctx context.Context, trigger worker.ApplyTrigger, branch, commit string) (string, error) {
	switch trigger.Kind {
	case worker.KindFluxTrigger:
		applied, err := a.flux.Apply(ctx, types.NamespacedName{Namespace: trigger.Namespace, Name: trigger.Name}, branch, commit)
		var e *applier.Error
		if errors.As(err, &e) && e.Reason == applier.ReasonOtherRevision && applied.Revision != "" {
			// The branch moved on and Flux applied its newer tip, which holds the commit:
			// the operator never rewrites history, and a push it did not make is applied
			// in turn (ForeignCommit).
			return applied.Revision, nil
		}
		return applied.Revision, err
	case worker.KindArgoCDTrigger:
		applied, err := a.argocd.Apply(ctx, types.NamespacedName{Namespace: trigger.Namespace, Name: trigger.Name}, branch, commit)
		return applied.Revision, err
	}
	return "", fmt.Errorf("no applier for trigger kind %q", trigger.Kind)
}
