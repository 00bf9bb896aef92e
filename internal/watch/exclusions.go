package watch

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// defaultExclusions are resource types a wildcard ("*") in a rule's resources never selects
// (docs/watch-rules.md#default-exclusions). They change all the time, are made and owned by
// controllers, or are one-shot requests; mirroring them would flood Git with noise. A rule
// that names one of them in its resources opts back in. Create-only review types
// (tokenreviews, subjectaccessreviews, …) and bindings are listed too, although discovery
// already drops them for lacking list and watch.
//
// Jobs are excluded as a whole rather than only those a CronJob created: an Object reaching
// the rules is already sanitized and has no ownerReferences left to tell them apart, and a
// Job made by hand is a one-shot run as well. Name "jobs" to mirror every Job.
var defaultExclusions = map[schema.GroupResource]struct{}{
	{Group: "", Resource: "pods"}:                                          {},
	{Group: "", Resource: "events"}:                                        {},
	{Group: "", Resource: "endpoints"}:                                     {},
	{Group: "", Resource: "componentstatuses"}:                             {},
	{Group: "", Resource: "bindings"}:                                      {},
	{Group: "events.k8s.io", Resource: "events"}:                           {},
	{Group: "discovery.k8s.io", Resource: "endpointslices"}:                {},
	{Group: "coordination.k8s.io", Resource: "leases"}:                     {},
	{Group: "coordination.k8s.io", Resource: "leasecandidates"}:            {},
	{Group: "apps", Resource: "controllerrevisions"}:                       {},
	{Group: "apps", Resource: "replicasets"}:                               {},
	{Group: "batch", Resource: "jobs"}:                                     {},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             {},
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       {},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      {},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   {},
	{Group: "gitops-reverser.io", Resource: "commitrequests"}:              {},
}

// IsExcluded reports whether a wildcard rule skips gr by default.
func IsExcluded(gr schema.GroupResource) bool {
	_, ok := defaultExclusions[gr]
	return ok
}

// DefaultExclusions lists the resource types wildcards skip, sorted by group and resource.
func DefaultExclusions() []schema.GroupResource {
	out := make([]schema.GroupResource, 0, len(defaultExclusions))
	for gr := range defaultExclusions {
		out = append(out, gr)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}
