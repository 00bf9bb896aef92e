package sandbox

import (
	"reflect"
	"testing"
)

func TestParseCommitSummariesClassifiesEachFile(t *testing.T) {
	out := "\x00a1b2c3d\talice\tfirst: 2 resource(s)\n\nA\tclusters/sandbox/README.md\nA\tclusters/sandbox/demo/core/configmaps/app-config.yaml\n" +
		"\x00e4f5a6b\tbob\tedit\n\nM\tclusters/sandbox/demo/core/configmaps/app-config.yaml\n" +
		"\x00c7d8e9f\talice\tdelete and move\n\nD\told.yaml\nR100\tfrom.yaml\tto.yaml\nT\tlink.yaml\n" +
		"\x00f0f0f0f\tGitOps Reverser\tempty\n"
	got := ParseCommitSummaries(out)
	want := []CommitSummary{
		{Short: "a1b2c3d", Author: "alice", Subject: "first: 2 resource(s)", Created: []string{"clusters/sandbox/README.md", "clusters/sandbox/demo/core/configmaps/app-config.yaml"}},
		{Short: "e4f5a6b", Author: "bob", Subject: "edit", Updated: []string{"clusters/sandbox/demo/core/configmaps/app-config.yaml"}},
		{Short: "c7d8e9f", Author: "alice", Subject: "delete and move", Created: []string{"to.yaml"}, Updated: []string{"link.yaml"}, Deleted: []string{"old.yaml", "from.yaml"}},
		{Short: "f0f0f0f", Author: "GitOps Reverser", Subject: "empty"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseCommitSummaries =\n%+v\nwant\n%+v", got, want)
	}
	kinds := []string{"create", "update", "create+update+delete", "empty"}
	for i, c := range got {
		if c.Kinds() != kinds[i] {
			t.Errorf("commit %s: Kinds() = %q, want %q", c.Short, c.Kinds(), kinds[i])
		}
	}
}
