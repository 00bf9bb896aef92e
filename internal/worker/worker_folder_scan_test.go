package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A folder is indexed from its files' identity lines: a file broken past them does not
// hold back the writes to other files, and refuses the folder, naming itself, as soon as
// an edit reads it. The change waits for the fix and lands after it.
func TestAFileBrokenPastItsIdentityRefusesTheFolderWhenAnEditReadsIt(t *testing.T) {
	broken := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\n  namespace: team-a\ndata:\n  key: one\n  key: two\n"
	r := rigOn(t, map[string]string{cmPath("team-a", "broken"): broken})

	r.submit(upsert("alice", "team-a", "other", "1"))
	r.waitFor("a change to another file to be written", func() bool { return r.hasFile(cmPath("team-a", "other")) })
	if st := r.settled(); len(st.Refused) != 0 {
		t.Fatalf("refused before anything read the broken file: %v", st.Refused)
	}

	r.submit(upsert("bob", "team-a", "broken", "fixed-by-bob"))
	st := r.waitStatus("the folder to be refused", func(st Status) bool { return st.Refused["team/live"] != "" })
	if msg := st.Refused["team/live"]; !strings.Contains(msg, "broken.yaml") || !strings.Contains(msg, `mapping key "key" already defined`) {
		t.Fatalf("refusal = %q, want it to name the file and the problem", msg)
	}
	if got := r.file(cmPath("team-a", "broken")); got != broken {
		t.Fatalf("the broken file was written while refused:\n%s", got)
	}

	fixed := strings.Replace(broken, "  key: two\n", "", 1)
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{cmPath("team-a", "broken"): fixed}}); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the parked change to land after the fix", func() bool {
		return strings.Contains(r.file(cmPath("team-a", "broken")), "fixed-by-bob")
	})
	if st := r.settled(); len(st.Refused) != 0 {
		t.Fatalf("still refused after the fix: %v", st.Refused)
	}
}
