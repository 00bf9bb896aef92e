package controller

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// progressEvery is how often at most the GitTargets' progress is written.
const progressEvery = 2 * time.Second

// progressReporter writes each GitTarget's status.progress from the workers' progress
// board (docs/controllers.md#progress). It patches that field alone, apart from the
// target's reconcile: the reconcile asks the branch worker, which does not answer while it
// plans a large first snapshot — exactly when progress is worth showing.
type progressReporter struct {
	client client.Client
	board  *worker.ProgressBoard
}

var _ manager.Runnable = (*progressReporter)(nil)

func (r *progressReporter) Start(ctx context.Context) error {
	unwritten := map[string]worker.Progress{}
	retry := time.NewTicker(progressEvery)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.board.Ready():
		case <-retry.C:
			if len(unwritten) == 0 {
				continue
			}
		}
		for name, p := range r.board.Take() {
			unwritten[name] = p
		}
		for name, p := range unwritten {
			if r.write(ctx, name, p) {
				delete(unwritten, name)
			}
		}
		select { // at most every progressEvery: a large mirror changes its counts often
		case <-ctx.Done():
			return nil
		case <-time.After(progressEvery):
		}
	}
}

// write patches one target's progress; false when it is to be tried again.
func (r *progressReporter) write(ctx context.Context, name string, p worker.Progress) bool {
	namespace, targetName, ok := strings.Cut(name, "/")
	if !ok {
		return true
	}
	// Every key, zeros included: a merge patch keeps what it does not name (the counts of the
	// operator's previous run).
	body, err := json.Marshal(map[string]any{"status": map[string]any{"progress": map[string]any{
		"phase": string(p.Phase), "objectsSeen": p.Seen, "objectsWritten": p.Written,
	}}})
	if err != nil {
		return true
	}
	target := &v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: targetName}}
	err = r.client.Status().Patch(ctx, target, client.RawPatch(types.MergePatchType, body))
	if err != nil && !apierrors.IsNotFound(err) {
		log.FromContext(ctx).Info("the progress of a GitTarget could not be written; trying again", "target", name, "error", err.Error())
		return false
	}
	return true
}
