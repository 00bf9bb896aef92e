package sanitize

import "testing"

func TestOddShapesNeitherPanicNorLoseContent(t *testing.T) {
	odd := []map[string]any{
		nil,
		{},
		{"metadata": "not a map", "spec": "a string"},
		{"metadata": map[string]any{"labels": "x", "annotations": []any{1}}},
		{"apiVersion": int64(1), "kind": []any{}, "metadata": map[string]any{"name": int64(3)}},
		{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{"ports": []any{"x", nil, map[string]any{}}, "clusterIP": int64(1)}},
		{"apiVersion": "v1", "kind": "Service", "spec": []any{}},
		{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"annotations": map[string]any{boundByControllerAnnotation: true}}, "spec": map[string]any{"volumeName": "v"}},
		{"spec": map[string]any{"template": map[string]any{"metadata": "x"}}},
	}
	for i, obj := range odd {
		cleaned := Clean(obj)
		_, _ = Document(cleaned)
		for _, other := range odd {
			Reduce(obj, cleaned, other)
			Reduce(other, obj, cleaned)
		}
		if s, ok := obj["spec"]; ok {
			if _, kept := cleaned["spec"]; !kept {
				t.Errorf("case %d: spec %v was lost", i, s)
			}
		}
	}
}

func TestReduceKeepsListsWithDuplicateNamesWholeUnlessTheyLineUp(t *testing.T) {
	dup := func(extra string) []any {
		return []any{map[string]any{"name": "a", "x": extra}, map[string]any{"name": "a"}, map[string]any{"name": "b"}}
	}
	source := map[string]any{"l": []any{map[string]any{"name": "a"}}}
	defaulted := map[string]any{"l": []any{map[string]any{"name": "a", "x": "d"}}}
	live := map[string]any{"l": dup("d")}
	if got := Reduce(source, live, defaulted); !equalValues(got, live) {
		t.Errorf("got %#v, want live's list whole", got)
	}
}
