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
	for _, c := range []struct {
		name, file, content, bound string
	}{
		{"alias bomb", "clusters/dev/bomb.yaml", nestedAliases(9, 9), "aliases expanded"},
		{"alias bomb under another name", "clusters/dev/bomb.txt", nestedAliases(9, 9), "aliases expanded"},
		{"file over the size bound", "clusters/dev/big.yaml", "# " + strings.Repeat("x", 5<<20) + "\n", "size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rigOn(t, map[string]string{
				"clusters/dev/kustomization.yaml": "resources:\n- " + strings.TrimPrefix(c.file, "clusters/dev/") + "\n",
				c.file:                            c.content,
			}, func(cfg *Config) { cfg.MaxFileBytes = 4 << 20 })
			r.setTarget(TargetConfig{Name: "team/other", Path: "clusters/prod", Prune: PruneOnEvent})
			r.submit(upsert("alice", "team-a", "waiting", "1"))
			st := r.waitStatus("the folder to be refused", func(st Status) bool { return st.Refused["team/live"] != "" })
			if msg := st.Refused["team/live"]; !strings.Contains(msg, strings.TrimPrefix(c.file, "clusters/dev/")) || !strings.Contains(msg, c.bound) {
				t.Fatalf("refusal %q, want it to name the file and the bound", msg)
			}
			other := Event{Target: "team/other", Author: Author{Name: "bob"}, Op: OpUpsert, Type: configMapType,
				ID: upsert("", "team-b", "elsewhere", "1").ID, Doc: configMap("team-b", "elsewhere", "1")}
			r.submit(other)
			r.waitFor("the other target's write", func() bool {
				return r.hasFile("clusters/prod/team-b/core/configmaps/elsewhere.yaml")
			})

			if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Delete: []string{c.file, "clusters/dev/kustomization.yaml"}}); err != nil {
				t.Fatal(err)
			}
			r.waitFor("the held change to land after the fix", func() bool { return r.hasFile(cmPath("team-a", "waiting")) })
		})
	}
}
