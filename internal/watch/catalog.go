package watch

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
)

// ResourceLister is what rule compilation needs to know about the served resource types.
// Both the Catalog and a ResourceSet satisfy it; compile against one ResourceSet (from
// Catalog.Snapshot) when several lookups must agree with each other.
type ResourceLister interface {
	// Resources returns every known resource type at its preferred version, sorted by
	// group and resource.
	Resources() []Resource
	// Lookup returns group/resource at its preferred version.
	Lookup(group, resource string) (Resource, bool)
	// ServedVersions returns group/resource at every version the server serves it with
	// list and watch, the preferred version first, then in the server's priority order.
	ServedVersions(group, resource string) []Resource
}

// ResourceSet is an immutable set of resource types: for each group/resource, the versions
// served with list and watch, the preferred one first. A Catalog publishes a new
// ResourceSet on every change; a set made by NewResourceSet is a fixed list, for tests and
// for callers that know their types.
type ResourceSet struct {
	version   uint64
	changed   chan struct{}
	preferred []Resource
	byGR      map[schema.GroupResource][]Resource
}

// NewResourceSet builds a set from a literal list. The first occurrence of a group/resource
// is its preferred version; later occurrences with another version are further served
// versions.
func NewResourceSet(resources ...Resource) *ResourceSet {
	byGR := map[schema.GroupResource][]Resource{}
	for _, r := range resources {
		gr := r.GVR.GroupResource()
		if slices.ContainsFunc(byGR[gr], func(o Resource) bool { return o.GVR.Version == r.GVR.Version }) {
			continue
		}
		byGR[gr] = append(byGR[gr], r)
	}
	return newResourceSet(byGR, 0, nil)
}

func newResourceSet(byGR map[schema.GroupResource][]Resource, version uint64, changed chan struct{}) *ResourceSet {
	s := &ResourceSet{version: version, changed: changed, byGR: byGR}
	for _, rs := range byGR {
		s.preferred = append(s.preferred, rs[0])
	}
	sort.Slice(s.preferred, func(i, j int) bool { return lessResource(s.preferred[i], s.preferred[j]) })
	return s
}

func lessResource(a, b Resource) bool {
	if a.GVR.Group != b.GVR.Group {
		return a.GVR.Group < b.GVR.Group
	}
	if a.GVR.Resource != b.GVR.Resource {
		return a.GVR.Resource < b.GVR.Resource
	}
	return a.GVR.Version < b.GVR.Version
}

// Resources returns every resource type at its preferred version, sorted by group and
// resource. The caller may keep but not modify the slice.
func (s *ResourceSet) Resources() []Resource { return s.preferred }

// Lookup returns group/resource at its preferred version.
func (s *ResourceSet) Lookup(group, resource string) (Resource, bool) {
	rs := s.byGR[schema.GroupResource{Group: group, Resource: resource}]
	if len(rs) == 0 {
		return Resource{}, false
	}
	return rs[0], true
}

// ServedVersions returns group/resource at every served version, the preferred first.
func (s *ResourceSet) ServedVersions(group, resource string) []Resource {
	return slices.Clone(s.byGR[schema.GroupResource{Group: group, Resource: resource}])
}

// Len is the number of resource types (group/resource pairs).
func (s *ResourceSet) Len() int { return len(s.preferred) }

// Version is the catalog version this set was published as: 0 for a set made by
// NewResourceSet or before the catalog's first successful refresh.
func (s *ResourceSet) Version() uint64 { return s.version }

// Changed is closed when the catalog replaces this set with a newer one. It is nil (never
// ready) for a set made by NewResourceSet.
func (s *ResourceSet) Changed() <-chan struct{} { return s.changed }

func (s *ResourceSet) equalContent(o map[schema.GroupResource][]Resource) bool {
	if len(s.byGR) != len(o) {
		return false
	}
	for gr, rs := range s.byGR {
		if !slices.Equal(rs, o[gr]) {
			return false
		}
	}
	return true
}

// DefaultCatalogInterval is how often a Catalog asks discovery when nothing triggers it.
const DefaultCatalogInterval = 30 * time.Second

// CatalogOption changes a Catalog.
type CatalogOption func(*Catalog)

// WithRefreshInterval sets how often the catalog refreshes on its own (default 30s).
func WithRefreshInterval(d time.Duration) CatalogOption {
	return func(c *Catalog) {
		if d > 0 {
			c.interval = d
		}
	}
}

// Catalog keeps the resource types the API server serves, refreshed from discovery: every
// interval, and whenever Refresh is called (callers call it when a CustomResourceDefinition
// changes; CRDEventHandler is a ready-made informer handler for that).
//
// Only the Run loop computes and replaces the catalog's state. Readers on other goroutines
// get the current immutable ResourceSet through a pointer guarded by a RWMutex, so a read
// never waits for discovery and a set, once read, never changes under its reader.
//
// A discovery blink never removes anything: when some API groups fail, their previously
// known resources are kept; when discovery fails entirely, the whole previous set is kept.
// A resource is removed only when its group answers and no longer lists it, or the group
// itself is no longer listed.
type Catalog struct {
	disco    discovery.DiscoveryInterface
	log      logr.Logger
	interval time.Duration
	trigger  chan struct{}
	synced   chan struct{}

	mu   sync.RWMutex
	cur  *ResourceSet
	last RefreshResult
}

// RefreshResult tells how the latest refresh went, for status and tests.
type RefreshResult struct {
	// Attempt counts refreshes, successful or not; 0 means none has finished yet.
	Attempt uint64
	// Err is set when discovery failed entirely and the whole previous set was kept.
	Err error
	// FailedGroupVersions are the group/versions that failed in a partial answer; the
	// previously known resources of their groups were kept.
	FailedGroupVersions []string
}

// NewCatalog returns a catalog that asks disco. It is empty until Run has refreshed it once
// (see Synced). If disco is a CachedDiscoveryInterface it is invalidated before every
// refresh.
func NewCatalog(disco discovery.DiscoveryInterface, log logr.Logger, opts ...CatalogOption) *Catalog {
	c := &Catalog{
		disco:    disco,
		log:      log,
		interval: DefaultCatalogInterval,
		trigger:  make(chan struct{}, 1),
		synced:   make(chan struct{}),
	}
	for _, o := range opts {
		o(c)
	}
	c.cur = newResourceSet(map[schema.GroupResource][]Resource{}, 0, make(chan struct{}))
	return c
}

// Snapshot returns the current immutable set. Its Changed channel is closed when the
// catalog changes, so a consumer can rebuild from Snapshot and wait on Changed without
// missing a change.
func (c *Catalog) Snapshot() *ResourceSet {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cur
}

// Resources returns every resource type at its preferred version.
func (c *Catalog) Resources() []Resource { return c.Snapshot().Resources() }

// Lookup returns group/resource at its preferred version.
func (c *Catalog) Lookup(group, resource string) (Resource, bool) {
	return c.Snapshot().Lookup(group, resource)
}

// ServedVersions returns group/resource at every served version, the preferred first.
func (c *Catalog) ServedVersions(group, resource string) []Resource {
	return c.Snapshot().ServedVersions(group, resource)
}

// Version increments on every change of the set; 0 means no refresh has succeeded yet.
func (c *Catalog) Version() uint64 { return c.Snapshot().Version() }

// Changes returns a channel that is closed at the next change of the catalog. Take it
// before reading the catalog, then wait on it.
func (c *Catalog) Changes() <-chan struct{} { return c.Snapshot().Changed() }

// LastRefresh tells how the latest refresh went.
func (c *Catalog) LastRefresh() RefreshResult {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.last
}

// Synced is closed after the first successful refresh.
func (c *Catalog) Synced() <-chan struct{} { return c.synced }

// WaitSynced waits for the first successful refresh.
func (c *Catalog) WaitSynced(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Refresh asks the loop to refresh now. It never blocks; triggers that arrive while a
// refresh is pending coalesce into one.
func (c *Catalog) Refresh() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// CRDEventHandler returns an informer handler that calls Refresh on every add, update and
// delete, for an informer on CustomResourceDefinitions. A CRD's resource appears in
// discovery when the CRD becomes Established, which is an update of the CRD; the periodic
// refresh catches whatever the trigger misses.
func (c *Catalog) CRDEventHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.Refresh() },
		UpdateFunc: func(any, any) { c.Refresh() },
		DeleteFunc: func(any) { c.Refresh() },
	}
}

// Start runs the loop until ctx ends; it lets a controller-runtime manager run the catalog.
func (c *Catalog) Start(ctx context.Context) error {
	c.Run(ctx)
	return nil
}

// newBackoff is the wait after a failed refresh: one second doubling up to the interval.
func (c *Catalog) newBackoff() wait.Backoff {
	return wait.Backoff{Duration: min(time.Second, c.interval), Factor: 2, Cap: c.interval, Steps: math.MaxInt32}
}

// NeedLeaderElection is false: every replica needs the catalog.
func (c *Catalog) NeedLeaderElection() bool { return false }

// Run refreshes at once, then every interval and on Refresh, until ctx ends. After a failed
// or partial refresh it retries sooner, backing off from one second up to the interval.
// Call Run once.
func (c *Catalog) Run(ctx context.Context) {
	backoff := c.newBackoff()
	for {
		next := c.interval
		if c.refresh() {
			backoff = c.newBackoff()
		} else {
			next = backoff.Step()
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-c.trigger:
			t.Stop()
		}
	}
}

// refresh asks discovery once and publishes a new set when it differs. It reports whether
// discovery answered completely.
func (c *Catalog) refresh() bool {
	if cd, ok := c.disco.(discovery.CachedDiscoveryInterface); ok {
		cd.Invalidate()
	}
	groups, lists, err := c.disco.ServerGroupsAndResources()
	result := RefreshResult{Attempt: c.LastRefresh().Attempt + 1}
	var failed map[schema.GroupVersion]error
	if err != nil {
		var gerr *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &gerr) {
			c.log.Error(err, "discovery failed; keeping the previously known resource types")
			result.Err = err
			c.mu.Lock()
			c.last = result
			c.mu.Unlock()
			return false
		}
		failed = gerr.Groups
		result.FailedGroupVersions = failedGroupVersions(failed)
		c.log.Info("discovery failed for some API groups; keeping their previously known resource types",
			"groupVersions", result.FailedGroupVersions)
	}
	prev := c.Snapshot()
	next := mergeDiscovery(prev, groups, lists, failed)
	if prev.version > 0 && prev.equalContent(next) {
		c.mu.Lock()
		c.last = result
		c.mu.Unlock()
		return err == nil
	}
	set := newResourceSet(next, prev.version+1, make(chan struct{}))
	added, removed := diffSets(prev, set)
	c.mu.Lock()
	c.cur = set
	c.last = result
	c.mu.Unlock()
	close(prev.changed)
	if set.version == 1 {
		close(c.synced)
	}
	if set.version == 1 {
		c.log.Info("resource catalog synced", "version", set.version, "resources", set.Len())
	} else {
		c.log.Info("resource catalog changed", "version", set.version, "resources", set.Len(),
			"added", added, "removed", removed)
	}
	return err == nil
}

func failedGroupVersions(failed map[schema.GroupVersion]error) []string {
	out := make([]string, 0, len(failed))
	for gv := range failed {
		out = append(out, gv.String())
	}
	sort.Strings(out)
	return out
}

// diffSets names the group/resources (and version changes) between two sets, for the log.
func diffSets(prev, next *ResourceSet) (added, removed []string) {
	for gr, rs := range next.byGR {
		if o, ok := prev.byGR[gr]; !ok || o[0] != rs[0] {
			added = append(added, rs[0].GVR.String())
		}
	}
	for gr, rs := range prev.byGR {
		if n, ok := next.byGR[gr]; !ok || n[0] != rs[0] {
			removed = append(removed, rs[0].GVR.String())
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	const most = 20
	if len(added) > most {
		added = append(added[:most], "…")
	}
	if len(removed) > most {
		removed = append(removed[:most], "…")
	}
	return added, removed
}

// mergeDiscovery builds the next catalog content from one discovery answer. Groups in
// failed (a partial answer) keep their entries from prev; a failed group that prev does not
// know contributes whatever versions it did answer. Everything else comes from the answer:
// only top-level resources (no subresources) that support list and watch, for every served
// version, the group's preferred version first and then the server's priority order.
func mergeDiscovery(prev *ResourceSet, groups []*metav1.APIGroup, lists []*metav1.APIResourceList, failed map[schema.GroupVersion]error) map[schema.GroupResource][]Resource {
	failedGroup := map[string]bool{}
	for gv := range failed {
		failedGroup[gv.Group] = true
	}
	out := map[schema.GroupResource][]Resource{}
	kept := map[string]bool{}
	if prev != nil {
		for gr, rs := range prev.byGR {
			if failedGroup[gr.Group] {
				out[gr] = rs
				kept[gr.Group] = true
			}
		}
	}
	byGV := map[schema.GroupVersion]*metav1.APIResourceList{}
	for _, l := range lists {
		if l == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		byGV[gv] = l
	}
	for _, g := range groups {
		if g == nil || kept[g.Name] {
			continue
		}
		versions := make([]string, 0, len(g.Versions))
		if g.PreferredVersion.Version != "" {
			versions = append(versions, g.PreferredVersion.Version)
		}
		for _, v := range g.Versions {
			if !slices.Contains(versions, v.Version) {
				versions = append(versions, v.Version)
			}
		}
		for _, v := range versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v}
			l := byGV[gv]
			if l == nil {
				continue
			}
			for _, ar := range l.APIResources {
				if strings.Contains(ar.Name, "/") || !slices.Contains(ar.Verbs, "list") || !slices.Contains(ar.Verbs, "watch") {
					continue
				}
				gr := schema.GroupResource{Group: g.Name, Resource: ar.Name}
				if slices.ContainsFunc(out[gr], func(r Resource) bool { return r.GVR.Version == v }) {
					continue
				}
				out[gr] = append(out[gr], Resource{GVR: gv.WithResource(ar.Name), Kind: ar.Kind, Namespaced: ar.Namespaced})
			}
		}
	}
	return out
}
