package bounds

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A small file whose aliases expand beyond the bound is refused by name before any parser
// expands it; a real manifest with anchors passes.
func TestAnAliasBombIsRefusedByName(t *testing.T) {
	bomb := testenv.AliasBomb(9, 9, 0)
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
	f.Add([]byte(testenv.AliasBomb(3, 3, 0)))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		_ = CheckYAML("f.yaml", content) // never panics, never runs away
	})
}

// BenchmarkCheckYAML measures the bound's cost on an ordinary file: 100 ConfigMaps of 20
// keys each, read once more before the folder's own parse — without an anchor (most files)
// and with one (a URL's query string is enough to make the check parse).
func BenchmarkCheckYAML(b *testing.B) {
	for _, anchor := range []bool{false, true} {
		b.Run(fmt.Sprintf("anchor=%t", anchor), func(b *testing.B) { benchmarkCheckYAML(b, anchor) })
	}
}

func benchmarkCheckYAML(b *testing.B, anchor bool) {
	var sb strings.Builder
	for i := range 100 {
		fmt.Fprintf(&sb, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: team\ndata:\n", i)
		for k := range 20 {
			fmt.Fprintf(&sb, "  key-%d: value-%d\n", k, k)
		}
	}
	if anchor {
		sb.WriteString("  url: https://example.com/?a=1&b=2\n")
	}
	content := []byte(sb.String())
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckYAML("f.yaml", content); err != nil {
			b.Fatal(err)
		}
	}
}
