package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

const bundle = `# Team A configuration, kept by hand.
apiVersion: v1
kind: ConfigMap
metadata:
  name: first
  namespace: team-a
data:
  key: one   # the first value
---
# The middle document.
apiVersion: v1
kind: ConfigMap
metadata:
  name: middle
  namespace: team-a
data:
  key: two   # changed by the API
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: last
  namespace: team-a
data:
  key: three
`

func TestEditingOneDocumentKeepsItsSiblingsAndCommentsByteIdentical(t *testing.T) {
	r := newRig(t)
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{
		"clusters/dev/README.md":          "hand-written\n",
		"clusters/dev/team-a/bundle.yaml": bundle,
	}}); err != nil {
		t.Fatal(err)
	}
	r.submit(Event{Target: "team/live", Author: Author{Name: "alice"}, Op: OpUpsert, Type: configMapType,
		ID:  layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "middle"},
		Doc: configMap("team-a", "middle", "TWO")})
	r.settled()

	got := strings.Split(r.file("clusters/dev/team-a/bundle.yaml"), "\n")
	want := strings.Split(bundle, "\n")
	if len(got) != len(want) {
		t.Fatalf("the file has %d lines after the edit, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] == want[i] {
			continue
		}
		// Only the edited value's line may change; its comment stays (yaml.v3 may
		// normalize the spaces before it).
		if strings.Join(strings.Fields(got[i]), " ") != "key: TWO # changed by the API" {
			t.Fatalf("line %d changed from %q to %q; only the edited value may change", i+1, want[i], got[i])
		}
	}
	if r.hasFile(cmPath("team-a", "middle")) {
		t.Fatal("placement created a new file for a document that already existed elsewhere")
	}
	if r.file("clusters/dev/README.md") != "hand-written\n" {
		t.Fatal("the existing README.md was replaced by the bootstrap")
	}
}
