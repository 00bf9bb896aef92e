//go:build e2e

package test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	releaseName      = "gitops-reverser"
	releaseNamespace = "gitops-reverser"
)

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(filepath.Join(repoRoot(t), "charts", "gitops-reverser"))
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// helmTemplate renders the chart as `helm template` does, with the Helm SDK: the values are
// merged with values.yaml and checked against values.schema.json, then every template is
// executed. It returns the manifests in file order (NOTES.txt left out).
func helmTemplate(t testing.TB, ch *chart.Chart, values map[string]any) ([]*unstructured.Unstructured, error) {
	t.Helper()
	vals, err := util.ToRenderValues(ch, values, common.ReleaseOptions{Name: releaseName, Namespace: releaseNamespace, IsInstall: true}, nil)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var objs []*unstructured.Unstructured
	for _, p := range paths {
		if strings.HasSuffix(p, "NOTES.txt") {
			continue
		}
		objs = append(objs, decodeYAML(t, p, []byte(files[p]))...)
	}
	return objs, nil
}

// chartCRDs are the CRDs Helm installs from crds/ before the templates.
func chartCRDs(t testing.TB, ch *chart.Chart) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, crd := range ch.CRDObjects() {
		objs = append(objs, decodeYAML(t, crd.Filename, crd.File.Data)...)
	}
	if len(objs) != 7 {
		t.Fatalf("the chart holds %d CRDs, want 7 (%s)", len(objs), names(objs))
	}
	return objs
}

func TestChartLints(t *testing.T) {
	linter := lint.RunAll(filepath.Join(repoRoot(t), "charts", "gitops-reverser"), nil, releaseNamespace)
	for _, msg := range linter.Messages {
		if msg.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", msg)
		}
	}
}

func TestChartAppliesCleanly(t *testing.T) {
	ch := loadChart(t)
	customRules := []any{
		map[string]any{"apiGroups": []any{"", "apps"}, "resources": []any{"configmaps", "deployments"}, "verbs": []any{"get", "list", "watch", "update"}},
	}
	cases := []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{"defaults", nil, func(t *testing.T, objs []*unstructured.Unstructured) {
			args := containerArgs(t, find(t, objs, "Deployment", releaseName))
			if !hasArg(args, "--leader-elect") || hasArg(args, "--audit-") {
				t.Errorf("default args %q: want --leader-elect and no --audit-*", args)
			}
			find(t, objs, "Role", "-leader-election")
			find(t, objs, "ValidatingAdmissionPolicy", "-dry-run-only")
			find(t, objs, "ValidatingAdmissionPolicyBinding", "-dry-run-only")
			watched := rules(t, find(t, objs, "ClusterRole", "-watched-types"))
			want := []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"get", "list", "watch", "update"}}}
			if !reflect.DeepEqual(watched, want) {
				t.Errorf("watched types rules %v, want %v", watched, want)
			}
		}},
		{"readOnly", map[string]any{"watchedTypesRBAC": map[string]any{"mode": "readOnly"}}, func(t *testing.T, objs []*unstructured.Unstructured) {
			watched := rules(t, find(t, objs, "ClusterRole", "-watched-types"))
			want := []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"get", "list", "watch"}}}
			if !reflect.DeepEqual(watched, want) {
				t.Errorf("watched types rules %v, want %v", watched, want)
			}
		}},
		{"custom", map[string]any{"watchedTypesRBAC": map[string]any{"mode": "custom", "rules": customRules}}, func(t *testing.T, objs []*unstructured.Unstructured) {
			if watched := rules(t, find(t, objs, "ClusterRole", "-watched-types")); !reflect.DeepEqual(watched, customRules) {
				t.Errorf("watched types rules %v, want %v", watched, customRules)
			}
		}},
		{"replicas, attribution, image", map[string]any{
			"replicas":    3,
			"attribution": map[string]any{"enabled": true, "certsSecret": "audit-certs"},
			"image":       map[string]any{"repository": "registry.example.com/gr", "tag": "v9.9.9", "pullPolicy": "Always"},
			"resources":   map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}},
		}, func(t *testing.T, objs []*unstructured.Unstructured) {
			dep := find(t, objs, "Deployment", releaseName)
			if n, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); n != 3 {
				t.Errorf("replicas %d, want 3", n)
			}
			args := containerArgs(t, dep)
			if !hasArg(args, "--audit-bind-address=:9443") || !hasArg(args, "--audit-client-ca-file=") {
				t.Errorf("attribution args missing: %q", args)
			}
			find(t, objs, "Service", "-audit")
			containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
			if img := containers[0].(map[string]any)["image"]; img != "registry.example.com/gr:v9.9.9" {
				t.Errorf("image %v", img)
			}
		}},
		{"tenancy lockdown, audit names, no policy", map[string]any{
			"tenancy":          map[string]any{"defaultServiceAccount": "mirror"},
			"attribution":      map[string]any{"enabled": true, "allowedNames": []any{"kube-apiserver", "apiserver-2"}},
			"dryRunOnlyPolicy": map[string]any{"enabled": false},
		}, func(t *testing.T, objs []*unstructured.Unstructured) {
			args := containerArgs(t, find(t, objs, "Deployment", releaseName))
			if !hasArg(args, "--default-service-account=mirror") || !hasArg(args, "--audit-allowed-names=kube-apiserver,apiserver-2") {
				t.Errorf("args %q: want --default-service-account and --audit-allowed-names", args)
			}
			if n := countKinds(objs)["ValidatingAdmissionPolicy"]; n != 0 {
				t.Errorf("%d ValidatingAdmissionPolicies with dryRunOnlyPolicy.enabled=false", n)
			}
		}},
		{"no leader election", map[string]any{"leaderElection": map[string]any{"enabled": false}}, func(t *testing.T, objs []*unstructured.Unstructured) {
			if hasArg(containerArgs(t, find(t, objs, "Deployment", releaseName)), "--leader-elect") {
				t.Error("--leader-elect with leaderElection.enabled=false")
			}
			// Only the state Role (the digest key Secret) is left.
			if n := countKinds(objs)["Role"]; n != 1 {
				t.Errorf("%d Roles without leader election, want only the state Role", n)
			}
		}},
	}
	crds := chartCRDs(t, ch)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := helmTemplate(t, ch, tc.values)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			for _, o := range objs {
				if o.GetNamespace() != "" && o.GetNamespace() != releaseNamespace {
					t.Errorf("%s %s in namespace %q", o.GetKind(), o.GetName(), o.GetNamespace())
				}
			}
			tc.check(t, objs)
			applyDryRun(t, append(append([]*unstructured.Unstructured{}, crds...), objs...))
		})
	}
}

// policySpec is the dry-run-only policy's spec as JSON, with the operator's namespace
// written NS.
func policySpec(t *testing.T, objs []*unstructured.Unstructured, namespace string) string {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(find(t, objs, "ValidatingAdmissionPolicy", "-dry-run-only").Object, "spec")
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "serviceaccount:"+namespace+":", "serviceaccount:NS:")
	return strings.ReplaceAll(s, "request.namespace == '"+namespace+"'", "request.namespace == 'NS'")
}

// Values the chart refuses, through values.schema.json or a template's fail.
func TestChartRefusesBadValues(t *testing.T) {
	ch := loadChart(t)
	cases := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"unknown mode", map[string]any{"watchedTypesRBAC": map[string]any{"mode": "everything"}}, "mode"},
		{"custom without rules", map[string]any{"watchedTypesRBAC": map[string]any{"mode": "custom"}}, "rules"},
		{"custom with a write verb", map[string]any{"watchedTypesRBAC": map[string]any{"mode": "custom", "rules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"delete"}},
		}}}, "verbs"},
		{"replicas without leader election", map[string]any{"replicas": 2, "leaderElection": map[string]any{"enabled": false}}, "leaderElection"},
		{"unknown value", map[string]any{"replica": 2}, "replica"},
		{"bad pull policy", map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmTemplate(t, ch, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rendered with %v: error %v, want one naming %q", tc.values, err, tc.want)
			}
		})
	}
}

// The chart and config/default grant the same permissions and run the same container, so
// that the two ways to install cannot drift apart.
func TestChartMatchesConfigDefault(t *testing.T) {
	objs, err := helmTemplate(t, loadChart(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := kustomize(t, filepath.Join(repoRoot(t), "config", "default"))
	for _, r := range []struct{ kind, suffix string }{
		{"ClusterRole", "-manager"}, {"ClusterRole", "-watched-types"}, {"Role", "-leader-election"},
	} {
		if a, b := rules(t, find(t, objs, r.kind, r.suffix)), rules(t, find(t, plain, r.kind, r.suffix)); !reflect.DeepEqual(a, b) {
			t.Errorf("%s *%s: chart grants %v, config/default %v", r.kind, r.suffix, a, b)
		}
	}
	// The policy differs only in the ServiceAccount's namespace and name.
	chartPolicy, plainPolicy := policySpec(t, objs, releaseNamespace), policySpec(t, plain, installNamespace)
	if chartPolicy != plainPolicy {
		t.Errorf("dry-run-only policy: chart\n%s\nconfig/default\n%s", chartPolicy, plainPolicy)
	}
	chartPod, _, _ := unstructured.NestedMap(find(t, objs, "Deployment", releaseName).Object, "spec", "template", "spec")
	plainPod, _, _ := unstructured.NestedMap(find(t, plain, "Deployment", "gitops-reverser").Object, "spec", "template", "spec")
	for _, field := range []string{"securityContext", "volumes", "terminationGracePeriodSeconds"} {
		if !reflect.DeepEqual(chartPod[field], plainPod[field]) {
			t.Errorf("pod %s: chart %v, config/default %v", field, chartPod[field], plainPod[field])
		}
	}
	cc := chartPod["containers"].([]any)[0].(map[string]any)
	pc := plainPod["containers"].([]any)[0].(map[string]any)
	for _, field := range []string{"args", "ports", "livenessProbe", "readinessProbe", "resources", "securityContext", "volumeMounts"} {
		if !reflect.DeepEqual(cc[field], pc[field]) {
			t.Errorf("container %s: chart %v, config/default %v", field, cc[field], pc[field])
		}
	}
}
