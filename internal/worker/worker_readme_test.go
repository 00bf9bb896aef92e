package worker

import (
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// The folder README.md explains a folder the operator made; a folder that already holds
// the user's files gets nothing beside them (docs/layout.md#the-first-write).
func TestTheREADMEIsWrittenOnlyIntoAFolderTheOperatorCreates(t *testing.T) {
	t.Run("the user's folder", func(t *testing.T) {
		r := newRig(t)
		if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{
			"clusters/dev/team-a/bundle.yaml": bundle,
		}}); err != nil {
			t.Fatal(err)
		}
		r.submit(Event{Target: "team/live", Author: Author{Name: "alice"}, Op: OpUpsert, Type: configMapType,
			ID:  layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "fresh"},
			Doc: configMap("team-a", "fresh", "new")})
		r.settled()
		if !r.hasFile(cmPath("team-a", "fresh")) {
			t.Fatal("the new object was not written")
		}
		if r.hasFile("clusters/dev/README.md") {
			t.Fatalf("README.md was added beside the user's files:\n%s", r.file("clusters/dev/README.md"))
		}
	})
	t.Run("a new folder", func(t *testing.T) {
		r := newRig(t)
		r.submit(Event{Target: "team/live", Author: Author{Name: "alice"}, Op: OpUpsert, Type: configMapType,
			ID:  layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "fresh"},
			Doc: configMap("team-a", "fresh", "new")})
		r.settled()
		if !r.hasFile("clusters/dev/README.md") {
			t.Fatal("the folder the operator created has no README.md")
		}
	})
}
