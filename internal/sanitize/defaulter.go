package sanitize

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// dryRunFieldManager names the operator in the dry-run requests (never persisted).
const dryRunFieldManager = "gitops-reverser-defaults"

// ErrDryRunRefused wraps the API server's refusal of the dry-run update as invalid (the
// source fails validation, or changes an immutable field): the server cannot say what it
// would make of the source, so the caller should write the live document as it is. Other
// failures (no permission, not found, unreachable) are returned as they are.
var ErrDryRunRefused = errors.New("server refused the dry-run of the source")

// Defaulter asks the API server what it makes of a source document
// (docs/sanitize.md#server-defaults-are-not-edits), and reduces a live document against it.
// It is safe for concurrent use.
type Defaulter struct {
	client dynamic.Interface
	cache  *resultCache
	shapes shapeMemory // what MinimalDocument learned per shape of object
}

// NewDefaulter returns a Defaulter that talks to the API server through client. The
// credentials need `update` (and `get`, for types that refuse an unconditional update) on
// the types whose documents it reduces; a dry-run never persists anything.
func NewDefaulter(client dynamic.Interface) *Defaulter {
	return &Defaulter{client: client, cache: newResultCache(cacheSize)}
}

// Defaulted returns, cleaned, the object the API server would make of source if it were
// written over the existing object of the same name: a server-side dry-run update (PUT with
// dryRun=All). The update is unconditional (no resourceVersion); when the type requires one
// (built-in types answer Conflict, custom resources Invalid on metadata.resourceVersion), it
// is retried once with the live object's resourceVersion. The namespace is the source's.
func (d *Defaulter) Defaulted(ctx context.Context, gvr schema.GroupVersionResource, source map[string]any) (map[string]any, error) {
	obj := &unstructured.Unstructured{Object: Clean(source)}
	name, ns := obj.GetName(), obj.GetNamespace()
	if name == "" {
		return nil, fmt.Errorf("dry-run %s: source has no metadata.name", gvr.Resource)
	}
	what := describe(gvr, ns, name)
	var res dynamic.ResourceInterface = d.client.Resource(gvr)
	if ns != "" {
		res = d.client.Resource(gvr).Namespace(ns)
	}
	opts := metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: dryRunFieldManager}
	out, err := res.Update(ctx, obj, opts)
	if needsResourceVersion(err) {
		current, getErr := res.Get(ctx, name, metav1.GetOptions{})
		if getErr != nil {
			return nil, fmt.Errorf("dry-run %s: get resourceVersion after conflict: %w", what, getErr)
		}
		obj.SetResourceVersion(current.GetResourceVersion())
		out, err = res.Update(ctx, obj, opts)
	}
	if err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			return nil, fmt.Errorf("dry-run %s: %w: %w", what, ErrDryRunRefused, err)
		}
		return nil, fmt.Errorf("dry-run %s: %w", what, err)
	}
	return Clean(out.Object), nil
}

// needsResourceVersion tells whether the server refused an unconditional update: built-in
// types that require a resourceVersion answer Conflict, custom resources answer Invalid on
// metadata.resourceVersion.
func needsResourceVersion(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.resourceVersion" {
			return true
		}
	}
	return false
}

// ReduceDocument returns the document to write for an object whose document already exists
// in Git: liveDoc without the server defaults that sourceDoc (the document in Git) omits
// (see Reduce). Both are YAML documents; the result is rendered by Document. When the two
// already mean the same, or when sourceDoc holds every field of liveDoc (OmitsNothing), liveDoc
// is returned as it is without asking the server. Results are
// remembered by (gvr, sourceDoc, liveDoc), so an unchanged pair costs no request on resync.
//
// A source without a namespace (one a kustomization's namespace: supplies) is dry-run in the
// live object's namespace.
func (d *Defaulter) ReduceDocument(ctx context.Context, gvr schema.GroupVersionResource, sourceDoc, liveDoc []byte) ([]byte, error) {
	source, err := Parse(sourceDoc)
	if err != nil {
		return nil, fmt.Errorf("reduce %s: source: %w", gvr.Resource, err)
	}
	live, err := Parse(liveDoc)
	if err != nil {
		return nil, fmt.Errorf("reduce %s: live: %w", gvr.Resource, err)
	}
	source, live = Clean(source), Clean(live)
	if OmitsNothing(source, live) {
		// Nothing in live can be a default the source left out (a pair that means the same
		// included): Reduce would return live whole.
		return liveDoc, nil
	}
	key := keyOf(gvr, sourceDoc, liveDoc)
	if out, ok := d.cache.get(key); ok {
		return out, nil
	}
	asked := Clean(source)
	if ns := (&unstructured.Unstructured{Object: live}).GetNamespace(); ns != "" {
		u := &unstructured.Unstructured{Object: asked}
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
	}
	defaulted, err := d.Defaulted(ctx, gvr, asked)
	if err != nil {
		return nil, fmt.Errorf("reduce: %w", err)
	}
	out, err := Document(Reduce(source, live, defaulted))
	if err != nil {
		return nil, fmt.Errorf("reduce %s: %w", gvr.Resource, err)
	}
	d.cache.put(key, out)
	return out, nil
}

func describe(gvr schema.GroupVersionResource, ns, name string) string {
	r := gvr.Resource
	if gvr.Group != "" {
		r += "." + gvr.Group
	}
	if ns != "" {
		return r + " " + ns + "/" + name
	}
	return r + " " + name
}
