package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// nestedAliases is a ConfigMap whose data is an alias bomb (testenv.AliasBomb).
func nestedAliases(levels, width int) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n  namespace: team-a\ndata:\n" + testenv.AliasBomb(levels, width, 2)
}

// Hostile files in a target's folder — an alias bomb a kustomization lists, a file over the
// size bound — refuse that folder by name before any parser expands them; the other target
// of the branch keeps mirroring, and the folder is written again once the files are gone
// (docs/security.md#bounded-reading).
func TestHostileFilesRefuseTheirFolderByName(t *testing.T) {
	bomb, big := nestedAliases(9, 9), "# "+strings.Repeat("x", 5<<20)+"\n"
	listing := func(entry string) string { return "resources:\n- " + entry + "\n" }
	for _, c := range []struct {
		name  string
		files map[string]string
		named string // what the refusal names
		bound string
	}{
		{"alias bomb", map[string]string{"clusters/dev/kustomization.yaml": listing("bomb.yaml"), "clusters/dev/bomb.yaml": bomb},
			"bomb.yaml", "aliases expanded"},
		{"alias bomb under another name", map[string]string{"clusters/dev/kustomization.yaml": listing("bomb.txt"), "clusters/dev/bomb.txt": bomb},
			"bomb.txt", "aliases expanded"},
		{"file over the size bound", map[string]string{"clusters/dev/kustomization.yaml": listing("big.yaml"), "clusters/dev/big.yaml": big},
			"big.yaml", "size"},
		// A base outside the target folder is read through the same bounds.
		{"alias bomb in a base outside the folder", map[string]string{"clusters/dev/kustomization.yaml": listing("../base"),
			"clusters/base/kustomization.yaml": listing("bomb.yaml"), "clusters/base/bomb.yaml": bomb},
			"base/bomb.yaml", "aliases expanded"},
		{"file over the size bound in a base outside the folder", map[string]string{"clusters/dev/kustomization.yaml": listing("../base"),
			"clusters/base/kustomization.yaml": listing("big.yaml"), "clusters/base/big.yaml": big},
			"base/big.yaml", "size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rigOn(t, c.files, func(cfg *Config) { cfg.MaxFileBytes = 4 << 20 })
			r.setTarget(TargetConfig{Name: "team/other", Path: "clusters/prod", Prune: PruneOnEvent})
			r.submit(upsert("alice", "team-a", "waiting", "1"))
			st := r.waitStatus("the folder to be refused", func(st Status) bool { return st.Refused["team/live"] != "" })
			if msg := st.Refused["team/live"]; !strings.Contains(msg, c.named) || !strings.Contains(msg, c.bound) {
				t.Fatalf("refusal %q, want it to name %s and the bound", msg, c.named)
			}
			other := Event{Target: "team/other", Author: Author{Name: "bob"}, Op: OpUpsert, Type: configMapType,
				ID: upsert("", "team-b", "elsewhere", "1").ID, Doc: configMap("team-b", "elsewhere", "1")}
			r.submit(other)
			r.waitFor("the other target's write", func() bool {
				return r.hasFile("clusters/prod/team-b/core/configmaps/elsewhere.yaml")
			})

			fix := testenv.ForeignChange{}
			for path := range c.files {
				fix.Delete = append(fix.Delete, path)
			}
			if _, err := r.server.PushForeign(repoName, "main", fix); err != nil {
				t.Fatal(err)
			}
			r.waitFor("the held change to land after the fix", func() bool { return r.hasFile(cmPath("team-a", "waiting")) })
		})
	}
}
