package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The worker lets its local copy merge the packs its commits write: a long run of commits
// leaves a bounded number of packs (docs/branch-worker.md#objects-in-packs).
func TestAWorkersCommitsLeaveABoundedNumberOfPacks(t *testing.T) {
	var dir string
	r := newRig(t, func(c *Config) { c.CommitWindow = 0; dir = c.Dir })
	const edits = 60
	for i := range edits {
		r.submit(upsert("alice", "team-a", fmt.Sprintf("cm-%02d", i), "1"))
	}
	r.settled()
	if got := len(r.log()); got < edits {
		t.Fatalf("%d commits, want at least %d", got, edits)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "objects", "pack"))
	if err != nil {
		t.Fatal(err)
	}
	packs := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".pack") {
			packs++
		}
	}
	if packs > 16 {
		t.Fatalf("%d commits left %d packs in the local copy; want them merged (at most 16)", edits, packs)
	}
}
