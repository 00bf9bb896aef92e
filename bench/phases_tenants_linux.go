//go:build linux

package main

// Phase 5 of the end-to-end benchmark: many tenants writing one branch (BENCH.md).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// tenantsNS holds the GitProvider every tenant's GitTarget uses; tenantLabel admits the
// tenants' namespaces to it.
const (
	tenantsNS   = "bench-tenants"
	tenantLabel = "bench-tenant"
)

func tenantNS(i int) string { return fmt.Sprintf("bench-tenant-%03d", i) }

// tenantDocPath is where the ConfigMap name of tenant ns is mirrored: each tenant's
// GitTarget has a folder of its own on the shared branch.
func tenantDocPath(ns, name string) string {
	return fmt.Sprintf("tenants/%s/%s/core/configmaps/%s.yaml", ns, ns, name)
}

// setupTenants creates the tenants' namespaces (labelled for the provider) and their
// ConfigMaps.
func (b *bench) setupTenants(ctx context.Context) error {
	b.logf("creating %d tenant namespaces with %d ConfigMaps each", b.cfg.tenants, b.cfg.tenantObjects)
	for i := range b.cfg.tenants {
		ns := tenantNS(i)
		if err := b.env.createConfigMaps(ctx, ns, "cm", b.cfg.tenantObjects, 0); err != nil {
			return err
		}
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"yes"}}}`, tenantLabel)
		if err := b.env.c.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("label namespace %s: %w", ns, err)
		}
	}
	return nil
}

// configureTenants creates one GitProvider (default commitWindow) in tenantsNS that admits
// the tenants' namespaces, and in each tenant's namespace a GitTarget on the shared branch
// with a folder of its own, and a WatchRule for its ConfigMaps.
func (e *env) configureTenants(ctx context.Context, tenants int, r *repo) error {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantsNS}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "git-creds", Namespace: tenantsNS},
			StringData: map[string]string{v1.SecretKeyUsername: gitUser, v1.SecretKeyPassword: e.password},
		},
		&v1.GitProvider{
			ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: tenantsNS},
			Spec: v1.GitProviderSpec{
				URL: r.url, SecretRef: &v1.LocalObjectReference{Name: "git-creds"}, AllowedBranches: []string{branch},
				AccessFrom: &v1.NamespaceMatcher{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{tenantLabel: "yes"}}},
			},
		},
	}
	for i := range tenants {
		ns := tenantNS(i)
		objs = append(objs,
			&v1.GitTarget{
				ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: ns},
				Spec: v1.GitTargetSpec{
					GitProviderRef: v1.GitProviderReference{Name: crName, Namespace: tenantsNS},
					Branch:         branch,
					Path:           "tenants/" + ns,
				},
			},
			&v1.WatchRule{
				ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: ns},
				Spec: v1.WatchRuleSpec{
					TargetRef: v1.LocalObjectReference{Name: crName},
					Rules:     []v1.ResourceRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}}},
				},
			})
	}
	for _, obj := range objs {
		if err := e.c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return nil
}

// phaseTenants mirrors every tenant's namespace into its folder of one branch, then edits
// one ConfigMap in every tenant at once, and measures the time until the remote holds all
// the edits, the commits that took, and the operator's peak RSS.
func (b *bench) phaseTenants(ctx context.Context) error {
	n, per := b.cfg.tenants, b.cfg.tenantObjects
	scen := fmt.Sprintf("%d tenants (GitTarget + WatchRule each, one shared GitProvider and branch), %d ConfigMaps each", n, per)
	r, err := b.env.newRepo("p5-tenants.git")
	if err != nil {
		return err
	}
	defer b.env.dropRepo(r)
	if err := b.env.configureTenants(ctx, n, r); err != nil {
		return err
	}
	var all, probes []string
	for i := range n {
		for k := range per {
			all = append(all, tenantDocPath(tenantNS(i), cmName("cm", k)))
		}
		probes = append(probes, tenantDocPath(tenantNS(i), cmName("cm", 0)))
	}
	p, err := b.env.runOperator("p5-tenants", "", false)
	if err != nil {
		return err
	}
	defer func() { _ = b.env.stopOperator(p) }()
	mirrored, from, err := b.waitAllPaths(ctx, r, all, 0, make([]int, len(all)), b.cfg.initialTimeout, p.done)
	if err != nil {
		return b.operatorErr(p, "tenants: initial mirror", err)
	}
	initial := mirrored.at.Sub(p.started)
	b.logf("  %d tenants: all %d objects pushed %s after the start", n, len(all), initial.Round(time.Millisecond))

	pre := r.watch.last().sha
	pushes0 := b.env.git.Pushes(r.name)
	start := time.Now()
	took, err := b.editEveryTenant(ctx, n)
	if err != nil {
		return err
	}
	want := make([]int, len(probes))
	for i := range want {
		want[i] = 1
	}
	tip, _, err := b.waitAllPaths(ctx, r, probes, from, want, b.cfg.burstCap, p.done)
	total := math.Inf(1)
	if err == nil {
		total = seconds(tip.at.Sub(start))
	} else if !errors.Is(err, errTimeout) {
		return b.operatorErr(p, "tenants: one edit each", err)
	} else {
		tip = r.watch.last()
		b.logf("  tenants: not every edit pushed within %s", b.cfg.burstCap)
	}
	commits, err := commitsBetween(r, pre, tip.sha)
	if err != nil {
		return err
	}
	pushes := b.env.git.Pushes(r.name) - pushes0
	if err := b.env.stopOperator(p); err != nil {
		return err
	}
	peak := float64(p.peakRSS())
	b.logf("  tenants: one edit in each of %d, sent in %s, all pushed after %s in %d commit(s), %d push(es); peak RSS %s",
		n, took.Round(time.Millisecond), fmtValue(total, "s"), commits, pushes, fmtValue(peak, "B"))
	b.res.add("5", scen, "initial_mirror", 1, seconds(initial), "s", "operator start → remote holds every object")
	b.res.add("5", scen, "edits_took", 1, seconds(took), "s", "first edit sent → last edit returned")
	b.res.add("5", scen, "time_to_all_pushed", 1, total, "s", "first edit sent → remote tip holds every edit")
	b.res.add("5", scen, "commits", 1, float64(commits), "count", "")
	b.res.add("5", scen, "pushes", 1, float64(pushes), "count", "receive-pack sessions")
	b.res.add("5", scen, "operator_peak_rss", 1, peak, "B", "")
	b.table = append(b.table,
		tableRow{phase: "5", scenario: scen, figure: "initial mirror: start → all pushed", value: seconds(initial), unit: "s", base: math.NaN(), n: 1},
		tableRow{phase: "5", scenario: scen, figure: "one edit in every tenant at once: time until all pushed", value: total, unit: "s", base: seconds(took), baseName: "time the edits took", goal: "≤ 10 s", n: 1, censor: b.cfg.burstCap.Seconds()},
		tableRow{phase: "5", scenario: scen, figure: "commits for those edits", value: float64(commits), unit: "count", base: float64(n), baseName: "one per tenant", goal: "one per tenant", n: 1},
		tableRow{phase: "5", scenario: scen, figure: "peak RSS", value: peak, unit: "B", base: b.idle, baseName: "idle operator", n: 1})
	return nil
}

// editEveryTenant sets data.seq to 1 on the first ConfigMap of every tenant, eight clients
// at once, and returns how long the edits took.
func (b *bench) editEveryTenant(ctx context.Context, n int) (time.Duration, error) {
	start := time.Now()
	jobs := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range jobs {
				if _, err := b.env.setSeq(ctx, tenantNS(i), cmName("cm", 0), 1); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
