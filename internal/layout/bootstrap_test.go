package layout

import (
	"errors"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

func TestBootstrap(t *testing.T) {
	edits, err := Bootstrap(folder{}.read)
	if err != nil {
		t.Fatal(err)
	}
	if got := editPaths(edits); !sameStrings(got, []string{"README.md"}) {
		t.Fatalf("edited %q, want README.md", got)
	}
	readme := string(edits[0].Content)
	for _, part := range []string{"GitOps Reverser", "Kubernetes API", "placement", "kustomization", "_cluster"} {
		if !strings.Contains(readme, part) {
			t.Errorf("README lacks %q", part)
		}
	}
	// The README must not refuse the folder it is written to.
	if _, err := BuildIndex([]tree.File{{Path: "README.md", Content: edits[0].Content}}); err != nil {
		t.Errorf("BuildIndex with the README: %v", err)
	}

	edits, err = Bootstrap(folder{"README.md": "ours"}.read)
	if err != nil || edits != nil {
		t.Errorf("existing README: %q, %v; want nil, nil", editPaths(edits), err)
	}

	boom := errors.New("boom")
	if _, err := Bootstrap(func(string) ([]byte, bool, error) { return nil, false, boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the read error", err)
	}
}
