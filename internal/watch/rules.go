package watch

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// OperationSet is a set of the operations a rule mirrors.
type OperationSet uint8

// Operations. AllOperations is what "*" or an empty list means.
const (
	OpCreate OperationSet = 1 << iota
	OpUpdate
	OpDelete

	AllOperations = OpCreate | OpUpdate | OpDelete
)

// Has reports whether the set allows a change of type t.
func (s OperationSet) Has(t ChangeType) bool {
	switch t {
	case Created:
		return s&OpCreate != 0
	case Updated:
		return s&OpUpdate != 0
	case Deleted:
		return s&OpDelete != 0
	}
	return false
}

func (s OperationSet) String() string {
	if s == AllOperations {
		return "*"
	}
	var parts []string
	for _, t := range []ChangeType{Created, Updated, Deleted} {
		if s.Has(t) {
			parts = append(parts, t.String())
		}
	}
	return strings.Join(parts, ",")
}

// ParseOperations turns a rule's operations into a set: empty or "*" is every operation.
func ParseOperations(ops []v1alpha1.Operation) (OperationSet, error) {
	if len(ops) == 0 {
		return AllOperations, nil
	}
	var s OperationSet
	for _, op := range ops {
		switch strings.ToUpper(string(op)) {
		case "*":
			s |= AllOperations
		case "CREATE":
			s |= OpCreate
		case "UPDATE":
			s |= OpUpdate
		case "DELETE":
			s |= OpDelete
		default:
			return 0, fmt.Errorf("unknown operation %q (want CREATE, UPDATE, DELETE or \"*\")", op)
		}
	}
	return s, nil
}

// NamespaceInfo is what a ClusterWatchRule's namespaceSelector is matched against.
type NamespaceInfo struct {
	Name   string
	Labels map[string]string
}

// Claim is what one rule asks of one resource type for one GitTarget.
type Claim struct {
	// Target is the GitTarget that receives the objects.
	Target types.NamespacedName
	// Resource is the type, at the version the rule resolved to.
	Resource Resource
	// Namespaces the claim covers for a namespaced resource, sorted: the rule's own
	// namespace for a WatchRule, the namespaces its namespaceSelector matched for a
	// ClusterWatchRule. Empty for a cluster-scoped resource.
	Namespaces []string
	// Selector filters objects by label; labels.Everything() when the rule has none.
	Selector labels.Selector
	// Operations the claim mirrors.
	Operations OperationSet
}

// scopeMode says which resource scopes a rule may claim.
type scopeMode int

const (
	// namespacedOnly: a WatchRule.
	namespacedOnly scopeMode = iota
	// clusterOnly: a ClusterWatchRule rule without namespaceSelector.
	clusterOnly
	// anyScope: a ClusterWatchRule rule with namespaceSelector.
	anyScope
)

// admits reports whether the mode may claim r, and if not, why (for a named resource).
func (m scopeMode) admits(r Resource) (bool, string) {
	switch {
	case m == namespacedOnly && !r.Namespaced:
		return false, fmt.Sprintf("resource %q in group %q is cluster-scoped and a WatchRule mirrors only its own namespace: use a ClusterWatchRule",
			r.GVR.Resource, r.GVR.Group)
	case m == clusterOnly && r.Namespaced:
		return false, fmt.Sprintf("resource %q in group %q is namespaced and this rule has no namespaceSelector: add one ({} selects every namespace) or use a WatchRule",
			r.GVR.Resource, r.GVR.Group)
	}
	return true, ""
}

// CompileWatchRule resolves a WatchRule against the served resource types. Every claim
// covers the rule's own namespace. unresolved holds messages a person can act on (a type
// that is not served, a cluster-scoped type, an unserved version); err reports an invalid
// spec (a bad label selector, a subresource), in which case there are no claims.
func CompileWatchRule(rule *v1alpha1.WatchRule, cat ResourceLister) (claims []Claim, unresolved []string, err error) {
	target := types.NamespacedName{Namespace: rule.Namespace, Name: rule.Spec.TargetRef.Name}
	for i, r := range rule.Spec.Rules {
		path := fmt.Sprintf("rules[%d]", i)
		sel, ops, err := ruleFilters(path, r)
		if err != nil {
			return nil, nil, err
		}
		resolved, msgs, err := resolveRule(path, r, cat, namespacedOnly)
		if err != nil {
			return nil, nil, err
		}
		unresolved = append(unresolved, msgs...)
		for _, res := range resolved {
			claims = append(claims, Claim{Target: target, Resource: res, Namespaces: []string{rule.Namespace}, Selector: sel, Operations: ops})
		}
	}
	return claims, unresolved, nil
}

// CompileClusterWatchRule resolves a ClusterWatchRule against the served resource types and
// the cluster's namespaces. A rule without namespaceSelector claims cluster-scoped types
// only. A rule with one claims namespaced types in the namespaces it matches (none matched:
// no claim), and cluster-scoped types as well, which the selector does not apply to.
func CompileClusterWatchRule(rule *v1alpha1.ClusterWatchRule, cat ResourceLister, namespaces []NamespaceInfo) (claims []Claim, unresolved []string, err error) {
	target := types.NamespacedName{Namespace: rule.Spec.TargetRef.Namespace, Name: rule.Spec.TargetRef.Name}
	for i, r := range rule.Spec.Rules {
		path := fmt.Sprintf("rules[%d]", i)
		sel, ops, err := ruleFilters(path, r.ResourceRule)
		if err != nil {
			return nil, nil, err
		}
		mode := clusterOnly
		var matched []string
		if r.NamespaceSelector != nil {
			mode = anyScope
			nsSel, err := metav1.LabelSelectorAsSelector(r.NamespaceSelector)
			if err != nil {
				return nil, nil, fmt.Errorf("%s.namespaceSelector: %w", path, err)
			}
			for _, ns := range namespaces {
				if nsSel.Matches(labels.Set(ns.Labels)) && !slices.Contains(matched, ns.Name) {
					matched = append(matched, ns.Name)
				}
			}
			sort.Strings(matched)
		}
		resolved, msgs, err := resolveRule(path, r.ResourceRule, cat, mode)
		if err != nil {
			return nil, nil, err
		}
		unresolved = append(unresolved, msgs...)
		for _, res := range resolved {
			c := Claim{Target: target, Resource: res, Selector: sel, Operations: ops}
			if res.Namespaced {
				if len(matched) == 0 {
					continue
				}
				c.Namespaces = slices.Clone(matched)
			}
			claims = append(claims, c)
		}
	}
	return claims, unresolved, nil
}

// ruleFilters parses a rule's label selector and operations.
func ruleFilters(path string, r v1alpha1.ResourceRule) (labels.Selector, OperationSet, error) {
	sel := labels.Everything()
	if r.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(r.LabelSelector)
		if err != nil {
			return nil, 0, fmt.Errorf("%s.labelSelector: %w", path, err)
		}
		sel = s
	}
	ops, err := ParseOperations(r.Operations)
	if err != nil {
		return nil, 0, fmt.Errorf("%s.operations: %w", path, err)
	}
	return sel, ops, nil
}

// resolveRule expands one rule's groups, versions and resources against the catalog.
// Wildcards skip excluded types and types of the wrong scope silently; a named resource
// that cannot be claimed is reported. An empty apiGroups list means every group.
func resolveRule(path string, r v1alpha1.ResourceRule, cat ResourceLister, mode scopeMode) ([]Resource, []string, error) {
	for _, name := range r.Resources {
		if strings.Contains(name, "/") {
			return nil, nil, fmt.Errorf("%s.resources: %q is a subresource; name the parent resource", path, name)
		}
	}
	anyGroup := len(r.APIGroups) == 0 || slices.Contains(r.APIGroups, "*")
	anyResource := slices.Contains(r.Resources, "*")
	anyVersion := len(r.APIVersions) == 0 || slices.Contains(r.APIVersions, "*")

	var (
		out         []Resource
		msgs        []string
		seen        = map[schema.GroupResource]bool{}
		foundName   = map[string]bool{}
		groupServed = map[string]bool{} // a listed group has some resource
		groupAtVer  = map[string]bool{} // a listed group has some resource at a listed version
	)
	for _, res := range cat.Resources() {
		group, name := res.GVR.Group, res.GVR.Resource
		if !anyGroup && !slices.Contains(r.APIGroups, group) {
			continue
		}
		groupServed[group] = true
		named := slices.Contains(r.Resources, name)
		if !named && !anyResource {
			continue
		}
		if named {
			foundName[name] = true
		}
		gr := res.GVR.GroupResource()
		if !named && IsExcluded(gr) {
			continue
		}
		chosen, ok := pickVersion(res, r.APIVersions, anyVersion, cat)
		if !ok {
			if named {
				msgs = append(msgs, fmt.Sprintf("%s: resource %q in group %q is not served at version %s (served: %s)",
					path, name, group, strings.Join(r.APIVersions, ", "), servedVersions(cat, group, name)))
			}
			continue
		}
		groupAtVer[group] = true
		if ok, why := mode.admits(chosen); !ok {
			if named {
				msgs = append(msgs, path+": "+why)
			}
			continue
		}
		if !seen[gr] {
			seen[gr] = true
			out = append(out, chosen)
		}
	}

	reported := map[string]bool{}
	for _, name := range r.Resources {
		if name == "*" || foundName[name] || reported[name] {
			continue
		}
		reported[name] = true
		what := fmt.Sprintf("resource %q is not served by any API group", name)
		if !anyGroup {
			what = fmt.Sprintf("resource %q in group %s is not served by the API server", name, quoteList(r.APIGroups))
		}
		msgs = append(msgs, fmt.Sprintf("%s: %s%s", path, what, hint(cat, name)))
	}
	if anyResource && !anyGroup {
		for _, g := range dedupe(r.APIGroups) {
			switch {
			case !groupServed[g]:
				msgs = append(msgs, fmt.Sprintf("%s: no resources of group %q are served by the API server (is its CRD installed?)", path, g))
			case !anyVersion && !groupAtVer[g]:
				msgs = append(msgs, fmt.Sprintf("%s: no resources of group %q are served at version %s", path, g, strings.Join(r.APIVersions, ", ")))
			}
		}
	}
	return out, msgs, nil
}

// pickVersion chooses the version of res a rule asks for: the preferred one when the rule
// lists it or any version, else the first listed version the server serves.
func pickVersion(res Resource, versions []string, anyVersion bool, cat ResourceLister) (Resource, bool) {
	if anyVersion || slices.Contains(versions, res.GVR.Version) {
		return res, true
	}
	served := cat.ServedVersions(res.GVR.Group, res.GVR.Resource)
	for _, v := range versions {
		for _, s := range served {
			if s.GVR.Version == v {
				return s, true
			}
		}
	}
	return Resource{}, false
}

func servedVersions(cat ResourceLister, group, resource string) string {
	var vs []string
	for _, r := range cat.ServedVersions(group, resource) {
		vs = append(vs, r.GVR.Version)
	}
	return strings.Join(vs, ", ")
}

// hint suggests what a person may have meant by a resource name that is not served.
func hint(cat ResourceLister, name string) string {
	lower := strings.ToLower(name)
	for _, want := range []func(Resource) bool{
		func(r Resource) bool { return r.GVR.Resource == name },
		func(r Resource) bool {
			return r.GVR.Resource == lower || strings.EqualFold(r.Kind, name) ||
				r.GVR.Resource == lower+"s" || r.GVR.Resource == lower+"es"
		},
	} {
		for _, r := range cat.Resources() {
			if want(r) {
				return fmt.Sprintf(" (did you mean resource %q in group %q?)", r.GVR.Resource, r.GVR.Group)
			}
		}
	}
	return " (is its CRD installed?)"
}

func quoteList(ss []string) string {
	ss = dedupe(ss)
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " or ")
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "*" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
