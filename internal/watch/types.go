// Package watch turns rules into watch streams: it keeps a catalog of the resource types
// discovery reports, compiles WatchRules and ClusterWatchRules into claims, and runs one
// stream per (resource type, namespace scope) shared by every GitTarget that claims it.
// A stream starts with a consistent snapshot and delivers sanitized objects in
// resourceVersion order to its subscribers.
package watch

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// Resource is one resource type found by discovery, at the version streams use.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// TypeInfo describes the resource for the layout.
func (r Resource) TypeInfo() layout.TypeInfo {
	return layout.TypeInfo{Group: r.GVR.Group, Version: r.GVR.Version, Resource: r.GVR.Resource, Kind: r.Kind, Namespaced: r.Namespaced}
}

// Sensitive reports whether the type's objects hold secrets: core Secrets. Their documents
// are written only encrypted and are not kept in memory after delivery.
func (r Resource) Sensitive() bool { return r.GVR.Group == "" && r.GVR.Resource == "secrets" }

// SensitiveTypes are the resource types whose documents are written only encrypted: core
// Secrets always, and the types the operator is told to treat alike (--sensitive-types).
type SensitiveTypes map[schema.GroupResource]bool

// Has reports whether res is sensitive.
func (s SensitiveTypes) Has(res Resource) bool { return res.Sensitive() || s[res.GVR.GroupResource()] }

// StreamKey names one watch stream: a resource type in one namespace, or, with Namespace
// "", in every namespace (always "" for cluster-scoped types).
type StreamKey struct {
	GVR       schema.GroupVersionResource
	Namespace string
}

func (k StreamKey) String() string {
	ns := k.Namespace
	if ns == "" {
		ns = "*"
	}
	return k.GVR.String() + " in " + ns
}

// Object is one live object after sanitizing.
type Object struct {
	ID              layout.Identity
	UID             string
	Labels          map[string]string
	ResourceVersion string
	// Doc is the sanitized YAML document. It is nil for an object that exists but could
	// not be sanitized: snapshots list it so that no sweep deletes its document.
	Doc []byte
	// Shape is the shape of the object's content (sanitize.ShapeOf), zero when it could not
	// be rendered: the Reducer knows an object of a known shape by it without parsing Doc
	// again.
	Shape sanitize.Shape
	// Managers are the field managers of the object's newest managedFields entries (one,
	// or several written in the same second): who wrote it last. The two-way loop tells an
	// applier's write from an edit by them (docs/two-way.md).
	Managers []string
	// TrackingID is the object's argocd.argoproj.io/tracking-id annotation, which
	// sanitizing strips from Doc: the Argo CD Application that applied it (with Labels, the
	// applier that owns it: docs/two-way.md#another-appliers-objects).
	TrackingID string
}

// TrackingAnnotation is where Argo CD marks the objects an Application applies.
const TrackingAnnotation = "argocd.argoproj.io/tracking-id"

// ChangeType says what happened to an object.
type ChangeType int

// Change types. Created and Updated are told apart so that rules can select operations.
const (
	Created ChangeType = iota + 1
	Updated
	Deleted
)

func (c ChangeType) String() string {
	switch c {
	case Created:
		return "CREATE"
	case Updated:
		return "UPDATE"
	case Deleted:
		return "DELETE"
	}
	return "UNKNOWN"
}

// Change is one event of a stream after its snapshot. For Deleted, Object holds the last
// known state; for Updated, Previous holds the state before, so that a receiver can tell
// an object that stopped matching its selector.
type Change struct {
	Type     ChangeType
	Object   Object
	Previous *Object
}

// Subscriber receives what one stream sees. A stream calls its subscribers from its own
// goroutine, one call at a time, in resourceVersion order of each object. A call may block
// (back-pressure); an error is logged by the stream and does not stop it.
type Subscriber interface {
	// Snapshot delivers a complete, consistent listing of the stream. It is sent after
	// every (re-)established stream, and to a new subscriber once the stream has one.
	// A failed or partial listing is never delivered.
	Snapshot(ctx context.Context, res Resource, objects []Object) error
	// Change delivers one event after the snapshot.
	Change(ctx context.Context, res Resource, ch Change) error
}
