package bounds

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// aliasBomb is levels of lists, each holding width aliases of the level below: a few
// hundred bytes that expand to width^levels values.
func aliasBomb(levels, width int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x]\n")
	for l := 1; l <= levels; l++ {
		fmt.Fprintf(&b, "a%d: &a%d [", l, l)
		for i := 0; i < width; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", l-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// A small file whose aliases expand beyond the bound is refused by name before any parser
// expands it; a real manifest with anchors passes.
func TestAnAliasBombIsRefusedByName(t *testing.T) {
	bomb := aliasBomb(9, 9)
	if len(bomb) > 1000 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	err := CheckYAML("team/bomb.yaml", []byte(bomb))
	var exceeded *ExceededError
	if !errors.As(err, &exceeded) || exceeded.Path != "team/bomb.yaml" {
		t.Fatalf("bomb: %v, want an ExceededError naming the file", err)
	}
	manifest := "base: &base\n  replicas: 2\n  image: nginx\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  <<: *base\n"
	if err := CheckYAML("team/ok.yaml", []byte(manifest)); err != nil {
		t.Fatalf("a manifest with anchors: %v", err)
	}
}

// A file over the size bound is refused by name with the bound.
func TestAFileOverTheSizeBoundIsRefusedByName(t *testing.T) {
	if err := CheckSize("big.yaml", DefaultMaxFileBytes, 0); err != nil {
		t.Fatalf("a file at the bound: %v", err)
	}
	err := CheckSize("big.yaml", 40<<20, 0)
	if err == nil || !strings.Contains(err.Error(), "big.yaml") || !strings.Contains(err.Error(), fmt.Sprint(DefaultMaxFileBytes)) {
		t.Fatalf("40 MiB: %v, want a refusal naming the file and the bound", err)
	}
}

func FuzzCheckYAML(f *testing.F) {
	f.Add([]byte(aliasBomb(3, 3)))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		_ = CheckYAML("f.yaml", content) // never panics, never runs away
	})
}
