package sanitize

import (
	"bytes"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResultCacheForgetsItsOldestEntryFirst(t *testing.T) {
	c := newResultCache(3)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	key := func(i int) cacheKey { return keyOf(gvr, []byte(fmt.Sprint(i)), nil) }
	for i := range 5 {
		c.put(key(i), []byte(fmt.Sprint("doc", i)))
	}
	if c.len() != 3 {
		t.Fatalf("cache holds %d entries, want 3", c.len())
	}
	for i := range 5 {
		got, ok := c.get(key(i))
		if wantOK := i >= 2; ok != wantOK || (ok && !bytes.Equal(got, []byte(fmt.Sprint("doc", i)))) {
			t.Errorf("entry %d: %q, %v", i, got, ok)
		}
	}
}

func TestCacheKeyTellsEveryPartApart(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	base := keyOf(gvr, []byte("ab"), []byte("c"))
	for name, other := range map[string]cacheKey{
		"moved byte":    keyOf(gvr, []byte("a"), []byte("bc")),
		"other version": keyOf(schema.GroupVersionResource{Group: "apps", Version: "v2", Resource: "deployments"}, []byte("ab"), []byte("c")),
		"swapped docs":  keyOf(gvr, []byte("c"), []byte("ab")),
	} {
		if other == base {
			t.Errorf("%s: same key", name)
		}
	}
}

func TestCachedResultIsACopy(t *testing.T) {
	c := newResultCache(2)
	k := keyOf(schema.GroupVersionResource{}, nil, nil)
	doc := []byte("a: 1\n")
	c.put(k, doc)
	doc[0] = 'x'
	got, _ := c.get(k)
	got[0] = 'y'
	if again, _ := c.get(k); string(again) != "a: 1\n" {
		t.Errorf("cached entry changed to %q", again)
	}
}
