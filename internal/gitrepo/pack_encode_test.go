package gitrepo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"testing"
)

// The pack a commit writes (compressed on every CPU, its index made as it is written) is
// one Git reads whole: several windows of objects, an empty file, files whose sizes take
// one to four bytes of an entry header, and equal files written once.
func TestACommitsPackIsOneGitVerifies(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, "https://git.example.com/app.git", Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	sizes := []int{0, 1, 15, 16, 2047, 2048}
	var changes []Change
	want := map[string][]byte{}
	for i := range 3*encodeWindow + 17 {
		size := sizes[i%len(sizes)]
		if i == 3 {
			size = 300_000 // a header of four bytes
		}
		content := make([]byte, size)
		for j := range content {
			content[j] = byte('a' + rng.IntN(3)) // compressible, like YAML
		}
		if i%50 == 0 {
			content = []byte("same\n") // equal blobs: one object
		}
		p := fmt.Sprintf("d%d/f-%04d.yaml", i%5, i)
		changes = append(changes, Change{Path: p, Content: content})
		want[p] = content
	}
	sha := mustCommit(t, r, "", changes...)
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", "--full", sha).CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	got := 0
	for d := range 5 {
		files, err := r.ReadFiles(sha, fmt.Sprintf("d%d", d))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := fmt.Sprintf("d%d/%s", d, f.Path)
			if !bytes.Equal(f.Content, want[p]) {
				t.Errorf("%s reads back as %d bytes, want %d", p, len(f.Content), len(want[p]))
			}
			got++
		}
	}
	if got != len(want) {
		t.Errorf("read %d files back, want %d", got, len(want))
	}
}
