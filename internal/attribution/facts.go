package attribution

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Fact is the minimum kept of one accepted audit event.
type Fact struct {
	AuditID string
	// UID and ResourceVersion come from the response object (the object as persisted),
	// so they are set only when the audit policy logs the event at RequestResponse
	// level; UID falls back to the objectRef (the request object's uid).
	UID             string
	ResourceVersion string
	Resource        schema.GroupResource
	Namespace       string
	Name            string
	Verb            string
	Author          Author
	Time            time.Time
	// CollectionUIDs are the uids of the items a deletecollection removed, when its
	// response (a list) was logged; capped at maxCollectionUIDs.
	CollectionUIDs map[string]struct{}
}

const maxCollectionUIDs = 10000

func (f *Fact) isDelete() bool { return f.Verb == "delete" || f.Verb == "deletecollection" }

// Gate decides which audit events become facts (docs/attribution.md#the-accept-gate). The
// zero value ignores only what the gate always excludes; DefaultGate also ignores resource
// types whose writes are never mirrored and would only crowd the index.
type Gate struct {
	// IgnoredResources are resource types whose events are ignored.
	IgnoredResources map[schema.GroupResource]bool
}

// DefaultIgnoredResources are high-churn or never-persisted types: events, leases,
// and the review types (a create of a review persists nothing).
func DefaultIgnoredResources() map[schema.GroupResource]bool {
	return map[schema.GroupResource]bool{
		{Group: "", Resource: "events"}:                                        true,
		{Group: "events.k8s.io", Resource: "events"}:                           true,
		{Group: "coordination.k8s.io", Resource: "leases"}:                     true,
		{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             true,
		{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       true,
		{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      true,
		{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  true,
		{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
		{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   true,
	}
}

// DefaultGate is the gate the webhook uses unless told otherwise.
func DefaultGate() Gate { return Gate{IgnoredResources: DefaultIgnoredResources()} }

var mutatingVerbs = map[string]bool{
	"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true,
}

// Check returns whether the event passes the gate and, if not, why. The checks run in
// this order: stage, verb, object, subresource, resource, dry-run, response code.
func (g Gate) Check(ev *auditv1.Event) (bool, IgnoreReason) {
	if ev.Stage != auditv1.StageResponseComplete {
		return false, IgnoredStage
	}
	if !mutatingVerbs[ev.Verb] {
		return false, IgnoredReadOnly
	}
	if ev.ObjectRef == nil || ev.ObjectRef.Resource == "" {
		return false, IgnoredNoObject
	}
	// A scale write changes the parent's spec.replicas: the parent's watch event is
	// attributed to it. Every other subresource (status, token, eviction, binding, …)
	// never changes a mirrored document.
	if sub := ev.ObjectRef.Subresource; sub != "" && sub != "scale" {
		return false, IgnoredSubresource
	}
	if g.IgnoredResources[schema.GroupResource{Group: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource}] {
		return false, IgnoredResource
	}
	if isDryRun(ev.RequestURI) {
		return false, IgnoredDryRun
	}
	if ev.ResponseStatus == nil || ev.ResponseStatus.Code < 200 || ev.ResponseStatus.Code > 299 {
		return false, IgnoredFailed
	}
	return true, 0
}

// isDryRun reports whether the request URI asks for a dry run (dryRun=All; any non-empty
// value is treated as a dry run, as kube-apiserver refuses other values anyway).
func isDryRun(requestURI string) bool {
	i := strings.IndexByte(requestURI, '?')
	if i < 0 {
		return false
	}
	q, err := url.ParseQuery(requestURI[i+1:])
	if err != nil {
		// A query the server could parse but we cannot: do not risk a dry run.
		return strings.Contains(requestURI[i+1:], "dryRun=")
	}
	for _, v := range q["dryRun"] {
		if v != "" {
			return true
		}
	}
	return false
}

// objectMeta is the part of a response object a fact needs.
type objectMeta struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		UID             string `json:"uid"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	// A Status (some deletes answer with one).
	Details *struct {
		Name string `json:"name"`
		UID  string `json:"uid"`
	} `json:"details"`
	// A list (deletecollection).
	Items []struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	} `json:"items"`
}

// factOf builds the fact of an accepted event.
func factOf(ev *auditv1.Event) *Fact {
	ref := ev.ObjectRef
	f := &Fact{
		AuditID:   string(ev.AuditID),
		Resource:  schema.GroupResource{Group: ref.APIGroup, Resource: ref.Resource},
		Namespace: ref.Namespace,
		Name:      ref.Name,
		UID:       string(ref.UID),
		Verb:      ev.Verb,
		Time:      ev.StageTimestamp.Time,
	}
	if f.Time.IsZero() {
		f.Time = ev.RequestReceivedTimestamp.Time
	}
	var imp *userInfo
	if ev.ImpersonatedUser != nil {
		u := userOf(*ev.ImpersonatedUser)
		imp = &u
	}
	f.Author = authorOf(userOf(ev.User), imp, f.AuditID)

	if ev.ResponseObject != nil && len(ev.ResponseObject.Raw) > 0 {
		var m objectMeta
		if err := json.Unmarshal(ev.ResponseObject.Raw, &m); err == nil {
			switch {
			case ev.Verb == "deletecollection":
				for _, it := range m.Items {
					if it.Metadata.UID == "" {
						continue
					}
					if f.CollectionUIDs == nil {
						f.CollectionUIDs = map[string]struct{}{}
					}
					if len(f.CollectionUIDs) >= maxCollectionUIDs {
						break
					}
					f.CollectionUIDs[it.Metadata.UID] = struct{}{}
				}
			case m.Kind == "Status":
				if m.Details != nil && m.Details.UID != "" {
					f.UID = m.Details.UID
				}
			default:
				// The request's objectRef carries the old resourceVersion of an
				// update; only the response names the persisted one.
				f.ResourceVersion = m.Metadata.ResourceVersion
				if m.Metadata.UID != "" {
					f.UID = m.Metadata.UID
				}
				if f.Name == "" {
					f.Name = m.Metadata.Name // a create with generateName
				}
				if f.Namespace == "" {
					f.Namespace = m.Metadata.Namespace
				}
			}
		}
	}
	return f
}

func userOf(u authnv1.UserInfo) userInfo {
	var extra map[string][]string
	if len(u.Extra) > 0 {
		extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = []string(v)
		}
	}
	return userInfo{Username: u.Username, Groups: u.Groups, Extra: extra}
}
