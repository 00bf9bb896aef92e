package applier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplicationGVK is Argo CD's Application, read and patched as an unstructured object.
var ApplicationGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}

// Argo CD's request markers.
const (
	// RefreshAnnotation asks the application controller to compare the Application with
	// Git again ("hard": without its manifest cache); it removes the annotation when done.
	RefreshAnnotation = "argocd.argoproj.io/refresh"
	// requestInfo names the operation's info entry that carries the request's token: Argo
	// CD copies the operation into status.operationState, so the outcome of this very
	// request can be told from an earlier sync of the same commit.
	requestInfo = "gitops-reverser-request"
	// initiator is the user name the operation's initiatedBy records.
	initiator = "gitops-reverser"
)

// ArgoCD asks an Argo CD Application to sync an exact commit: it hard-refreshes the
// Application and gives it a sync operation for the commit, then reads the outcome from
// status.operationState. Argo CD runs one operation at a time per Application: an apply
// waits for a running one to end first.
type ArgoCD struct {
	Client client.Client
	// Poll is how often the status is read while waiting (DefaultPoll when 0); Timeout
	// bounds one apply (DefaultTimeout when 0).
	Poll, Timeout time.Duration
	// now stamps the request tokens (time.Now when nil).
	now func() time.Time

	turns turns
}

// Apply asks the Application app to sync commit of branch and waits until Argo CD reports
// the operation's outcome. An *Error says why it did not apply, with its Reason.
func (a *ArgoCD) Apply(ctx context.Context, app types.NamespacedName, branch, commit string) (Applied, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(a.Timeout, DefaultTimeout))
	defer cancel()
	release, err := a.turns.take(ctx, app)
	if err != nil {
		return Applied{}, &Error{Reason: ReasonTimedOut, Object: describe(ApplicationGVK, app),
			Message: fmt.Sprintf("another apply through it did not end in time: %v", err)}
	}
	defer release()
	tok := token(commit, a.now)
	if err := a.requestSync(ctx, app, branch, commit, tok); err != nil {
		return Applied{}, err
	}
	applied, err := a.outcome(ctx, app, commit, tok)
	var typed *Error
	if errors.As(err, &typed) && typed.Reason == ReasonTimedOut {
		a.withdraw(app, tok)
	}
	return applied, err
}

// requestSync waits until the Application runs no operation, then gives it one: a sync of
// commit that prunes what Git no longer holds, with a hard refresh. The patch carries the
// resourceVersion read: an operation started in between (an automated sync) makes it
// conflict, and the wait starts again.
func (a *ArgoCD) requestSync(ctx context.Context, key types.NamespacedName, branch, commit, tok string) error {
	var running string
	var unread error
	err := wait.PollUntilContextCancel(ctx, a.poll(), true, func(ctx context.Context) (bool, error) {
		app, err := a.read(ctx, key, &unread)
		if app == nil {
			return false, err
		}
		if err := checkApplication(app, branch); err != nil {
			return false, err
		}
		if running = runningOperation(app); running != "" {
			return false, nil
		}
		options, _, err := unstructured.NestedStringSlice(app.Object, "spec", "syncPolicy", "syncOptions")
		if err != nil {
			return false, &Error{Reason: ReasonMisconfigured, Object: describe(ApplicationGVK, key),
				Message: fmt.Sprintf("spec.syncPolicy.syncOptions is not a list of strings: %v", err)}
		}
		patch, err := SyncPatch(app.GetResourceVersion(), commit, tok, options)
		if err != nil {
			return false, err
		}
		err = a.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
		switch {
		case apierrors.IsConflict(err):
			return false, nil
		case err != nil:
			return false, readError(ApplicationGVK, key, "give an operation to", "ArgoCDTrigger", err)
		}
		return true, nil
	})
	var typed *Error
	switch {
	case errors.As(err, &typed):
		return typed
	case err != nil && running != "":
		return &Error{Reason: ReasonOperationRunning, Object: describe(ApplicationGVK, key),
			Message: fmt.Sprintf("an operation (%s) ran for the whole %s: the sync of %s waits for it to end", running, orDefault(a.Timeout, DefaultTimeout), commit)}
	case err != nil:
		return &Error{Reason: ReasonTimedOut, Object: describe(ApplicationGVK, key), Message: fmt.Sprintf("could not give it a sync operation in time: %v", orErr(unread, err))}
	}
	return nil
}

// outcome waits for the operation carrying tok to end and reads its result.
func (a *ArgoCD) outcome(ctx context.Context, key types.NamespacedName, commit, tok string) (Applied, error) {
	var applied Applied
	var failed *Error
	var unread error
	err := wait.PollUntilContextCancel(ctx, a.poll(), true, func(ctx context.Context) (bool, error) {
		app, err := a.read(ctx, key, &unread)
		if app == nil {
			return false, err
		}
		state, _, _ := unstructured.NestedMap(app.Object, "status", "operationState")
		if requestToken(state, "operation") != tok {
			if pending, ok, _ := unstructured.NestedMap(app.Object, "operation"); ok && pending != nil {
				return false, nil // not started yet: an earlier operation's state
			}
			// Argo CD clears the operation with the state of its end, in one patch: no
			// operation and another state is another operation that replaced this one's
			// (an automated sync, a user's) before its outcome was read.
			failed = &Error{Reason: ReasonOtherRevision, Object: describe(ApplicationGVK, key),
				Message: fmt.Sprintf("another operation replaced the sync of %s before its outcome was read; it is asked again", commit)}
			return true, nil
		}
		phase, _, _ := unstructured.NestedString(state, "phase")
		message, _, _ := unstructured.NestedString(state, "message")
		switch phase {
		case "Succeeded":
			applied.Revision, _, _ = unstructured.NestedString(state, "syncResult", "revision")
			return true, nil
		case "Failed", "Error":
			failed = &Error{Reason: ReasonFailed, Object: describe(ApplicationGVK, key), Message: fmt.Sprintf("the sync of %s ended %s: %s", commit, phase, message)}
			return true, nil
		}
		return false, nil // Running or Terminating
	})
	var typed *Error
	switch {
	case failed != nil:
		return Applied{}, failed
	case errors.As(err, &typed):
		return Applied{}, typed
	case err != nil:
		return Applied{}, &Error{Reason: ReasonTimedOut, Object: describe(ApplicationGVK, key),
			Message: fmt.Sprintf("did not end the sync of %s within %s: is the Argo CD application controller running? is a sync window closed?%s", commit, orDefault(a.Timeout, DefaultTimeout), lastRead(unread))}
	case applied.Revision != commit:
		return applied, &Error{Reason: ReasonOtherRevision, Object: describe(ApplicationGVK, key),
			Message: fmt.Sprintf("synced %q, not commit %s", applied.Revision, commit)}
	}
	return applied, nil
}

// checkApplication refuses an Application the operator cannot coordinate with: several
// sources (which one is the branch's is not said), a source that follows another branch,
// or self-healing (it would put Git's state back over an API edit before the edit reaches
// Git).
func checkApplication(app *unstructured.Unstructured, branch string) error {
	key := client.ObjectKeyFromObject(app)
	if sources, _, _ := unstructured.NestedSlice(app.Object, "spec", "sources"); len(sources) > 0 {
		return &Error{Reason: ReasonMisconfigured, Object: describe(ApplicationGVK, key),
			Message: "spec.sources lists several sources: name an Application with a single spec.source that follows the GitTarget's branch"}
	}
	revision, _, _ := unstructured.NestedString(app.Object, "spec", "source", "targetRevision")
	if revision != branch && revision != "refs/heads/"+branch {
		return &Error{Reason: ReasonMisconfigured, Object: describe(ApplicationGVK, key),
			Message: fmt.Sprintf("spec.source.targetRevision is %q but the GitTarget writes branch %q: set targetRevision to that branch", revision, branch)}
	}
	enabled, set, _ := unstructured.NestedBool(app.Object, "spec", "syncPolicy", "automated", "enabled")
	if heal, _, _ := unstructured.NestedBool(app.Object, "spec", "syncPolicy", "automated", "selfHeal"); heal && (enabled || !set) {
		return &Error{Reason: ReasonMisconfigured, Object: describe(ApplicationGVK, key),
			Message: "spec.syncPolicy.automated.selfHeal is true: it reverts API edits before they reach Git; turn it off (the operator asks for every sync the loop needs)"}
	}
	return nil
}

// withdraw removes the operation of the request tok when Argo CD has not started it: a sync
// of an old commit left queued (the controller down, a sync window) would otherwise run
// later and put that commit back over what came since. The resourceVersion precondition
// leaves an operation Argo CD started in between alone.
func (a *ArgoCD) withdraw(key types.NamespacedName, tok string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	app, err := get(ctx, a.Client, ApplicationGVK, key, "ArgoCDTrigger")
	if err != nil {
		return
	}
	pending, ok, _ := unstructured.NestedMap(app.Object, "operation")
	if !ok || requestToken(pending) != tok {
		return
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": app.GetResourceVersion()}, "operation": nil})
	if err != nil {
		return
	}
	// Best effort: a failure leaves the request queued, as a timed-out apply always could.
	_ = a.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
}

// read reads the Application during a wait: a read that fails for a moment is kept in
// unread and gives no Application and no error (the wait goes on); any other failure ends
// the wait with its error.
func (a *ArgoCD) read(ctx context.Context, key types.NamespacedName, unread *error) (*unstructured.Unstructured, error) {
	app, err := get(ctx, a.Client, ApplicationGVK, key, "ArgoCDTrigger")
	if transient(err) {
		*unread = err
		return nil, nil
	}
	return app, err
}

// transient reports a read that failed for a moment (the API server, a client-side rate
// limit near the deadline): the wait goes on. A missing Application ends it.
func transient(err error) bool {
	var e *Error
	return err != nil && (!errors.As(err, &e) || e.Reason == ReasonUnreachable)
}

func orErr(first, second error) error {
	if first != nil {
		return first
	}
	return second
}

// lastRead names the last failed read of a wait that timed out, "" for none.
func lastRead(err error) string {
	if err == nil {
		return ""
	}
	return " (last read: " + err.Error() + ")"
}

// runningOperation describes the operation the Application has or runs, "" for none.
func runningOperation(app *unstructured.Unstructured) string {
	if op, ok, _ := unstructured.NestedMap(app.Object, "operation"); ok && op != nil {
		return "requested, not started"
	}
	phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase")
	if phase == "Running" || phase == "Terminating" {
		return phase
	}
	return ""
}

// SyncPatch is the merge patch that asks for a sync of commit, marked with tok, with the
// Application's own sync options (as Argo CD's CLI and UI sync with them): its prune
// propagation policy, server-side apply and the like hold for the operator's syncs too.
// The dry-run-only policy admits exactly this shape (deploy/test sends it).
func SyncPatch(resourceVersion, commit, tok string, options []string) ([]byte, error) {
	sync := map[string]any{"revision": commit, "prune": true}
	if len(options) > 0 {
		sync["syncOptions"] = options
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{
			"resourceVersion": resourceVersion,
			"annotations":     map[string]string{RefreshAnnotation: "hard"},
		},
		"operation": map[string]any{
			"initiatedBy": map[string]any{"username": initiator},
			"info":        []map[string]string{{"name": requestInfo, "value": tok}},
			"sync":        sync,
		},
	})

}

// requestToken is the request token of an operation (or, with path "operation", of the
// operation an operationState reports).
func requestToken(op map[string]any, path ...string) string {
	infos, _, _ := unstructured.NestedSlice(op, append(path, "info")...)
	for _, i := range infos {
		if m, ok := i.(map[string]any); ok && m["name"] == requestInfo {
			v, _ := m["value"].(string)
			return v
		}
	}
	return ""
}

func (a *ArgoCD) poll() time.Duration { return orDefault(a.Poll, DefaultPoll) }
