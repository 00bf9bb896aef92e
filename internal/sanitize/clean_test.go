package sanitize

import (
	"reflect"
	"testing"
)

// p builds a lookup path.
func p(path ...any) []any { return path }

func TestCleanRemovesBookkeepingAndKeepsContent(t *testing.T) {
	tests := []struct {
		fixture string
		gone    [][]any
		kept    [][]any
	}{
		{
			fixture: "deployment",
			gone: [][]any{
				p("status"), p("metadata", "managedFields"), p("metadata", "uid"),
				p("metadata", "resourceVersion"), p("metadata", "generation"),
				p("metadata", "creationTimestamp"),
				p("metadata", "labels", "kustomize.toolkit.fluxcd.io/name"),
				p("metadata", "labels", "kustomize.toolkit.fluxcd.io/namespace"),
				p("metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"),
				p("metadata", "annotations", "deployment.kubernetes.io/revision"),
				p("metadata", "annotations", "argocd.argoproj.io/tracking-id"),
				p("spec", "template", "metadata", "creationTimestamp"),
			},
			kept: [][]any{
				p("apiVersion"), p("kind"), p("metadata", "name"), p("metadata", "namespace"),
				p("metadata", "labels", "app"), p("metadata", "labels", "app.kubernetes.io/instance"),
				p("metadata", "annotations", "example.com/owner"),
				p("spec", "template", "spec", "containers", 0, "image"),
				p("spec", "strategy"), // a default: Reduce decides, not Clean
			},
		},
		{
			fixture: "configmap",
			gone:    [][]any{p("metadata", "ownerReferences"), p("metadata", "finalizers"), p("metadata", "uid")},
			kept: [][]any{
				p("data", "empty"), p("binaryData", "blob"), p("immutable"),
				p("metadata", "annotations", "example.com/note"),
			},
		},
		{
			fixture: "service",
			gone:    [][]any{p("spec", "clusterIP"), p("spec", "clusterIPs"), p("spec", "ipFamilies"), p("status")},
			kept:    [][]any{p("spec", "ports", 0, "port"), p("spec", "selector"), p("spec", "type"), p("spec", "ipFamilyPolicy")},
		},
		{
			fixture: "service-nodeport",
			// The nodePort no manager set (managedFields) was allocated: gone.
			gone: [][]any{p("spec", "clusterIP"), p("spec", "clusterIPs"), p("spec", "ports", 0, "nodePort")},
			kept: [][]any{p("spec", "ports", 0, "port"), p("spec", "type")},
		},
		{
			fixture: "service-headless",
			gone:    [][]any{p("spec", "clusterIPs"), p("spec", "ipFamilies")},
			kept:    [][]any{p("spec", "clusterIP")},
		},
		{
			fixture: "secret",
			gone:    [][]any{p("metadata", "labels"), p("metadata", "uid")},
			kept:    [][]any{p("data", "token"), p("data", "password"), p("type")},
		},
		{
			fixture: "pvc",
			gone: [][]any{
				p("spec", "volumeName"), p("metadata", "annotations"), p("status"),
				p("metadata", "finalizers"),
			},
			kept: [][]any{p("spec", "accessModes"), p("spec", "resources", "requests", "storage")},
		},
		{
			fixture: "widget",
			gone: [][]any{
				p("status"), p("metadata", "finalizers"), p("metadata", "generation"),
				p("metadata", "labels", "helm.toolkit.fluxcd.io/name"),
			},
			kept: [][]any{p("metadata", "labels", "app.kubernetes.io/instance"), p("spec", "words")},
		},
		{fixture: "crd", gone: [][]any{p("status")}, kept: [][]any{p("spec", "versions", 0, "schema")}},
		{fixture: "role", gone: [][]any{p("metadata", "uid")}, kept: [][]any{p("rules", 0, "verbs")}},
		{fixture: "clusterrole", kept: [][]any{p("rules", 1, "nonResourceURLs"), p("metadata", "labels")}},
		{fixture: "rolebinding", kept: [][]any{p("roleRef", "name"), p("subjects", 0, "namespace")}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			live := readLive(t, tt.fixture)
			cleaned := Clean(live)
			for _, path := range tt.gone {
				if v, ok := lookup(cleaned, path...); ok {
					t.Errorf("%v survived: %v", path, v)
				}
			}
			for _, path := range tt.kept {
				if _, ok := lookup(cleaned, path...); !ok {
					t.Errorf("%v was removed", path)
				}
			}
			wantMeta := map[string]bool{"name": true, "namespace": true, "labels": true, "annotations": true}
			meta, _ := cleaned["metadata"].(map[string]any)
			for k := range meta {
				if !wantMeta[k] {
					t.Errorf("metadata.%s survived", k)
				}
			}
		})
	}
}

func TestCleanFixturesHoldWhatTheyAreMeantToProve(t *testing.T) {
	// The capture must really contain the bookkeeping that the table above says is gone.
	for _, tt := range []struct {
		fixture string
		path    []any
	}{
		{"deployment", p("metadata", "managedFields")},
		{"deployment", p("status", "conditions")},
		{"deployment", p("metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")},
		{"configmap", p("metadata", "ownerReferences")},
		{"configmap", p("metadata", "finalizers")},
		{"service", p("spec", "clusterIPs")},
		{"service", p("spec", "ipFamilies")},
		{"pvc", p("spec", "volumeName")},
		{"widget", p("status", "phase")},
		{"crd", p("status", "acceptedNames")},
	} {
		if _, ok := lookup(readLive(t, tt.fixture), tt.path...); !ok {
			t.Errorf("%s fixture lacks %v", tt.fixture, tt.path)
		}
	}
}

func TestCleanDropsLabelsAndAnnotationsLeftEmpty(t *testing.T) {
	cleaned := Clean(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name":        "x",
			"labels":      map[string]any{"kustomize.toolkit.fluxcd.io/name": "apps"},
			"annotations": map[string]any{},
		},
		"data": map[string]any{},
	})
	meta := cleaned["metadata"].(map[string]any)
	if _, ok := meta["labels"]; ok {
		t.Error("labels left empty were kept")
	}
	if _, ok := meta["annotations"]; ok {
		t.Error("annotations left empty were kept")
	}
	if data, ok := cleaned["data"].(map[string]any); !ok || len(data) != 0 {
		t.Errorf("empty content map was not kept: %#v", cleaned["data"])
	}
}

func TestCleanKeepsMeaningfulEmptyValues(t *testing.T) {
	cleaned := Clean(readLive(t, "widget"))
	for _, tt := range []struct {
		path []any
		want any
	}{
		{p("spec", "emptyMap"), map[string]any{}},
		{p("spec", "emptyList"), []any{}},
		{p("spec", "emptyString"), ""},
		{p("spec", "zero"), int64(0)},
		{p("spec", "disabled"), false},
		{p("spec", "items", 0), map[string]any{}},
		{p("spec", "items", 1, "weight"), int64(0)},
	} {
		got, ok := lookup(cleaned, tt.path...)
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v = %#v (present %v), want %#v", tt.path, got, ok, tt.want)
		}
	}
	// And they survive the written document.
	back, err := Parse(mustDocument(t, cleaned))
	if err != nil {
		t.Fatal(err)
	}
	if !equalValues(back, cleaned) {
		t.Errorf("document does not read back as the cleaned object")
	}
}

func TestCleanLeavesItsInputUntouched(t *testing.T) {
	live := readLive(t, "deployment")
	before := copyValue(live)
	Clean(live)
	if !reflect.DeepEqual(before, live) {
		t.Error("Clean modified its input")
	}
}

func TestCleanIsIdempotent(t *testing.T) {
	for _, name := range fixtures {
		once := Clean(readLive(t, name))
		if twice := Clean(once); !reflect.DeepEqual(once, twice) {
			t.Errorf("%s: cleaning a cleaned object changed it", name)
		}
	}
}

func TestCleanStripsNodePortOfAClusterIPService(t *testing.T) {
	cleaned := Clean(map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "s"},
		"spec": map[string]any{
			"type":  "ClusterIP",
			"ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30001)}},
		},
	})
	if _, ok := lookup(cleaned, "spec", "ports", 0, "nodePort"); ok {
		t.Error("a ClusterIP Service kept a nodePort")
	}
}

func TestCleanKeepsAPreBoundVolumeName(t *testing.T) {
	cleaned := Clean(map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "c"},
		"spec": map[string]any{"volumeName": "chosen-by-a-person"},
	})
	if v, _ := lookup(cleaned, "spec", "volumeName"); v != "chosen-by-a-person" {
		t.Error("a volumeName without the binder's annotation was removed")
	}
}

// A StatefulSet's claim templates are written without the status the API server puts in
// them; what a person wrote there stays.
func TestCleanRemovesTheStatusOfClaimTemplates(t *testing.T) {
	cleaned := Clean(map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db"},
		"spec": map[string]any{"volumeClaimTemplates": []any{map[string]any{
			"metadata": map[string]any{"name": "data"},
			"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}},
			"status":   map[string]any{"phase": "Pending"},
		}}},
	})
	if _, ok := lookup(cleaned, "spec", "volumeClaimTemplates", 0, "status"); ok {
		t.Error("a claim template kept its status")
	}
	if v, _ := lookup(cleaned, "spec", "volumeClaimTemplates", 0, "metadata", "name"); v != "data" {
		t.Error("the claim template's own content was removed")
	}
}
