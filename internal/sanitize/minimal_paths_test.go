package sanitize

import (
	"reflect"
	"testing"
)

// The fields a refusal names are found in the live object as the API server prints them,
// map keys with dots included; a field live lacks resolves to its deepest ancestor.
func TestARefusalsFieldIsFoundInTheLiveObject(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}},
		"data": map[string]any{"a.b": "1", "a": map[string]any{"c": "2"}},
	}
	type resolved struct {
		path  []any
		whole bool
	}
	for field, want := range map[string]resolved{
		"spec.template.spec.containers[0].image":  {p("spec", "template", "spec", "containers", 0, "image"), true},
		"metadata.labels[app.kubernetes.io/name]": {p("metadata", "labels", "app.kubernetes.io/name"), true},
		"data.a.b":                               {p("data", "a.b"), true},
		"data.a.c":                               {p("data", "a", "c"), true},
		"spec.template.spec.containers[3].image": {p("spec", "template", "spec", "containers"), false},
		"spec.template.spec.containers[0].command": {p("spec", "template", "spec", "containers", 0), false},
		"status.phase": {nil, false},
	} {
		if got, whole := resolveField(field, live); !reflect.DeepEqual(got, want.path) || whole != want.whole {
			t.Errorf("%s: %v (whole %v), want %v (whole %v)", field, got, whole, want.path, want.whole)
		}
	}
}

// The skeleton keeps identity, metadata and the shape of the content, no other value; an
// emptied map is taken out of a reduced document, a list element never.
func TestTheSkeletonKeepsOnlyTheShape(t *testing.T) {
	live := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"type": "NodePort", "selector": map[string]any{"app": "web"},
			"ports": []any{map[string]any{"name": "http", "port": int64(80)}}, "ipFamilies": []any{"IPv4"}}}
	want := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"selector": map[string]any{}, "ports": []any{map[string]any{"name": "http"}}}}
	if got := skeleton(live); !equalValues(got, want) {
		t.Fatalf("skeleton %v, want %v", got, want)
	}
	reduced := map[string]any{"spec": map[string]any{"strategy": map[string]any{"rollingUpdate": map[string]any{}},
		"volumes": []any{map[string]any{}}}}
	if got := dropEmpty(reduced); !equalValues(got, map[string]any{"spec": map[string]any{"volumes": []any{map[string]any{}}}}) {
		t.Fatalf("dropEmpty %v", got)
	}
}
