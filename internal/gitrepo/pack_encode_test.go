package gitrepo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The pack a commit writes (compressed on every CPU, its index made as it is written) is
// one Git reads whole: several windows of objects, an empty file, files whose sizes take
// one to four bytes of an entry header, and equal files written once.
func TestACommitsPackIsOneGitVerifies(t *testing.T) {
	r, dir := localRepo(t)
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
	assertIndexesAsGitMakesThem(t, dir)
}

// assertIndexesAsGitMakesThem checks that every pack of the local copy in dir has an index
// and a reverse index byte for byte as git index-pack makes them from the pack alone.
func assertIndexesAsGitMakesThem(t *testing.T, dir string) {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if err != nil || len(packs) == 0 {
		t.Fatalf("no pack in the local copy: %v", err)
	}
	for _, p := range packs {
		pack, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		copied := filepath.Join(t.TempDir(), "pack-copy.pack")
		if err := os.WriteFile(copied, pack, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("git", "index-pack", "--rev-index", copied).CombinedOutput(); err != nil {
			t.Fatalf("git index-pack: %v\n%s", err, out)
		}
		for _, ext := range []string{".idx", ".rev"} {
			ours, err := os.ReadFile(strings.TrimSuffix(p, ".pack") + ext)
			if err != nil {
				t.Fatalf("the pack has no %s: %v", ext, err)
			}
			gits, err := os.ReadFile(strings.TrimSuffix(copied, ".pack") + ext)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours, gits) {
				t.Errorf("%s of %s differs from git index-pack's (%d and %d bytes)", ext, filepath.Base(p), len(ours), len(gits))
			}
		}
	}
}
