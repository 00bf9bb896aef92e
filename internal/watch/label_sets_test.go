package watch

import (
	"fmt"
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func labelled(labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetLabels(labels)
	return u
}

func TestObjectsWithEqualLabelsShareOneMap(t *testing.T) {
	var l labelSets
	a := l.of(labelled(map[string]string{"app": "web", "tier": "front"}))
	b := l.of(labelled(map[string]string{"tier": "front", "app": "web"}))
	c := l.of(labelled(map[string]string{"app": "web"}))
	if !maps.Equal(a, map[string]string{"app": "web", "tier": "front"}) || !maps.Equal(c, map[string]string{"app": "web"}) {
		t.Fatalf("labels read as %v and %v", a, c)
	}
	a["probe"] = "x" // only to see which maps are one
	if _, shared := b["probe"]; !shared {
		t.Errorf("equal labels got two maps")
	}
	if _, shared := c["probe"]; shared {
		t.Errorf("different labels got one map")
	}
	if got := l.of(labelled(nil)); got != nil {
		t.Errorf("no labels read as %v", got)
	}
}

func TestLabelSetsSharedAreBounded(t *testing.T) {
	var l labelSets
	for i := range maxLabelSets + 10 {
		l.of(labelled(map[string]string{"n": fmt.Sprint(i)}))
	}
	if len(l.sets) != maxLabelSets {
		t.Errorf("%d label sets kept, bound %d", len(l.sets), maxLabelSets)
	}
	late := l.of(labelled(map[string]string{"n": "late"}))
	if late["n"] != "late" {
		t.Errorf("a set past the bound read as %v", late)
	}
}
