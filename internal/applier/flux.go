// Package applier asks a GitOps applier — Flux or Argo CD — to apply an exact commit of a
// branch and reports whether it did (docs/two-way.md). The appliers' kinds are read and
// patched as unstructured objects: the operator has no Go dependency on either.
package applier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The Flux kinds the applier reads and annotates.
var (
	KustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
	GitRepositoryGVK = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}
)

// RequestedAtAnnotation asks a Flux object to reconcile now; it copies the value into
// status.lastHandledReconcileAt once it has.
const RequestedAtAnnotation = "reconcile.fluxcd.io/requestedAt"

// Defaults of both appliers.
const (
	DefaultPoll    = 250 * time.Millisecond
	DefaultTimeout = 5 * time.Minute
)

// Flux asks a Flux Kustomization to apply a commit: it annotates the Kustomization's
// GitRepository so that it fetches the branch, then the Kustomization so that it applies
// the fetched revision, and confirms both through their status.
type Flux struct {
	Client client.Client
	// Poll is how often the status is read while waiting (DefaultPoll when 0); Timeout
	// bounds one apply (DefaultTimeout when 0).
	Poll, Timeout time.Duration
	// now stamps the request tokens (time.Now when nil).
	now func() time.Time

	// turns holds one turn per GitRepository: Flux keeps only the last requestedAt, so two
	// requests through one source at once would wait for each other's token.
	turns turns
}

// Applied is what an applier reports once it applied a commit.
type Applied struct {
	// Revision is the Kustomization's status.lastAppliedRevision ("main@sha1:<commit>"),
	// or the Application's status.operationState.syncResult.revision (the commit).
	Revision string
}

// Apply asks the Kustomization ks to apply commit of branch and waits until Flux reports it
// applied. An *Error says why it did not, with its Reason.
func (f *Flux) Apply(ctx context.Context, ks types.NamespacedName, branch, commit string) (Applied, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout())
	defer cancel()
	kustomization, err := f.get(ctx, KustomizationGVK, ks)
	if err != nil {
		return Applied{}, err
	}
	repo, err := f.sourceOf(ctx, kustomization, branch)
	if err != nil {
		return Applied{}, err
	}
	release, err := f.turns.take(ctx, repo)
	if err != nil {
		return Applied{}, &Error{Reason: ReasonTimedOut, Object: describe(GitRepositoryGVK, repo),
			Message: fmt.Sprintf("another apply through it did not end in time: %v", err)}
	}
	defer release()
	token := f.token(commit)
	fetched, err := f.reconcile(ctx, GitRepositoryGVK, repo, token, "status", "artifact", "revision")
	if err != nil {
		return Applied{}, err
	}
	applied, err := f.reconcile(ctx, KustomizationGVK, ks, token, "status", "lastAppliedRevision")
	if err != nil {
		return Applied{}, err
	}
	if RevisionCommit(applied) != commit {
		return Applied{Revision: applied}, &Error{Reason: ReasonOtherRevision, Object: describe(KustomizationGVK, ks),
			Message: fmt.Sprintf("applied %s (the GitRepository fetched %s), not commit %s", applied, fetched, commit)}
	}
	return Applied{Revision: applied}, nil
}

// sourceOf checks the Kustomization and returns its GitRepository, which must follow branch.
func (f *Flux) sourceOf(ctx context.Context, ks *unstructured.Unstructured, branch string) (types.NamespacedName, error) {
	key := client.ObjectKeyFromObject(ks)
	if suspended, _, _ := unstructured.NestedBool(ks.Object, "spec", "suspend"); suspended {
		return types.NamespacedName{}, &Error{Reason: ReasonSuspended, Object: describe(KustomizationGVK, key),
			Message: "spec.suspend is true: resume it (flux resume kustomization) for the operator's commits to be applied"}
	}
	kind, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "kind")
	name, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "name")
	ns, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "namespace")
	if kind != GitRepositoryGVK.Kind {
		return types.NamespacedName{}, &Error{Reason: ReasonMisconfigured, Object: describe(KustomizationGVK, key),
			Message: fmt.Sprintf("spec.sourceRef is a %s: only a GitRepository source can apply the branch the operator writes", kind)}
	}
	if ns == "" {
		ns = ks.GetNamespace()
	}
	repoKey := types.NamespacedName{Namespace: ns, Name: name}
	repo, err := f.get(ctx, GitRepositoryGVK, repoKey)
	if err != nil {
		return types.NamespacedName{}, err
	}
	if suspended, _, _ := unstructured.NestedBool(repo.Object, "spec", "suspend"); suspended {
		return types.NamespacedName{}, &Error{Reason: ReasonSuspended, Object: describe(GitRepositoryGVK, repoKey),
			Message: "spec.suspend is true: resume it (flux resume source git) for the operator's commits to be fetched"}
	}
	if follows, _, _ := unstructured.NestedString(repo.Object, "spec", "ref", "branch"); follows != branch {
		return types.NamespacedName{}, &Error{Reason: ReasonMisconfigured, Object: describe(GitRepositoryGVK, repoKey),
			Message: fmt.Sprintf("spec.ref.branch is %q but the GitTarget writes branch %q: point the GitRepository at that branch", follows, branch)}
	}
	return repoKey, nil
}

// reconcile annotates the object with token and waits until it handled the request and is
// Ready with a value at the status field path, which it returns. A Ready=False condition
// after the request is handled is the applier's failure.
func (f *Flux) reconcile(ctx context.Context, gvk schema.GroupVersionKind, key types.NamespacedName, token string, field ...string) (string, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{RequestedAtAnnotation: token}}})
	if err != nil {
		return "", err
	}
	if err := f.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", readError(gvk, key, "annotate", "FluxTrigger", err)
	}
	var value string
	var failed *Error
	err = wait.PollUntilContextCancel(ctx, f.poll(), true, func(ctx context.Context) (bool, error) {
		got, err := f.get(ctx, gvk, key)
		if err != nil {
			return false, err
		}
		if handled, _, _ := unstructured.NestedString(got.Object, "status", "lastHandledReconcileAt"); handled != token {
			return false, nil
		}
		switch status, reason, message := readyCondition(got); status {
		case "False":
			failed = &Error{Reason: ReasonFailed, Object: describe(gvk, key), Message: fmt.Sprintf("%s: %s", reason, message)}
			return true, nil
		case "True":
			value, _, _ = unstructured.NestedString(got.Object, field...)
			return value != "", nil
		}
		return false, nil // handled, still reconciling (Ready Unknown): wait for its outcome
	})
	switch {
	case failed != nil:
		return "", failed
	case err != nil:
		var typed *Error
		if errors.As(err, &typed) {
			return "", typed
		}
		return "", &Error{Reason: ReasonTimedOut, Object: describe(gvk, key),
			Message: fmt.Sprintf("did not handle the request within %s: is the Flux controller running?", f.timeout())}
	}
	return value, nil
}

// get reads a Flux object; not found and other read errors are *Error.
func (f *Flux) get(ctx context.Context, gvk schema.GroupVersionKind, key types.NamespacedName) (*unstructured.Unstructured, error) {
	return get(ctx, f.Client, gvk, key, "FluxTrigger")
}

// token is a request value no earlier request used: the commit and the time.
func (f *Flux) token(commit string) string { return token(commit, f.now) }

func (f *Flux) poll() time.Duration { return orDefault(f.Poll, DefaultPoll) }

func (f *Flux) timeout() time.Duration { return orDefault(f.Timeout, DefaultTimeout) }

// readyCondition returns the status, reason and message of the object's Ready condition.
func readyCondition(obj *unstructured.Unstructured) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		status, _ = m["status"].(string)
		reason, _ = m["reason"].(string)
		message, _ = m["message"].(string)
		return status, reason, message
	}
	return "", "", ""
}

// RevisionCommit is the commit of a Flux revision: "main@sha1:<commit>" (Flux v2),
// "main/<commit>" (older), or the commit itself.
func RevisionCommit(revision string) string {
	if i := strings.LastIndexAny(revision, ":/"); i >= 0 {
		return revision[i+1:]
	}
	return revision
}
