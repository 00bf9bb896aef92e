package gitrepo

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// localRepo opens a local copy in a new folder, for tests that never reach its remote.
func localRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := Open(dir, "https://git.example.com/app.git", Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// objectFiles counts the local copy's loose objects and packs.
func objectFiles(t *testing.T, dir string) (loose, packs int) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(dir, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(dir, "objects"), p)
		switch {
		case strings.HasPrefix(rel, "pack/") && strings.HasSuffix(rel, ".pack"):
			packs++
		case len(filepath.Dir(rel)) == 2: // objects/ab/cdef…
			loose++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return loose, packs
}

// A commit's new objects are written as one pack, not as a loose file each
// (docs/branch-worker.md#objects-in-packs).
func TestACommitsObjectsAreWrittenAsOnePack(t *testing.T) {
	r, dir := localRepo(t)
	var changes []Change
	for i := range 200 {
		changes = append(changes, Change{Path: fmt.Sprintf("ns-%d/cm-%03d.yaml", i%7, i), Content: fmt.Appendf(nil, "n: %d\n", i)})
	}
	sha := mustCommit(t, r, "", changes...)
	loose, packs := objectFiles(t, dir)
	if loose != 0 || packs != 1 {
		t.Fatalf("a commit of 200 files left %d loose objects and %d packs; want none and one", loose, packs)
	}
	files, err := r.ReadFiles(sha, "ns-3")
	if err != nil || len(files) == 0 {
		t.Fatalf("the commit's files do not read back from its pack: %d files, %v", len(files), err)
	}
	// Git itself finds the repository whole.
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", sha).CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// A long run of small commits leaves a bounded number of packs: small packs are merged,
// every object of every commit is kept (unpushed ones are in no ref), and the branch still
// pushes whole (docs/branch-worker.md#objects-in-packs).
func TestManySmallCommitsLeaveABoundedNumberOfPacks(t *testing.T) {
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	dir := t.TempDir()
	r, err := Open(dir, front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	const commits = 3*mergeFanIn + 5
	var tips []string
	tip := ""
	for i := range commits {
		tip = mustCommit(t, r, tip, Change{Path: fmt.Sprintf("cm-%03d.yaml", i), Content: fmt.Appendf(nil, "n: %d\n", i)})
		tips = append(tips, tip)
		if err := r.MergePacks(); err != nil {
			t.Fatal(err)
		}
		if _, packs := objectFiles(t, dir); packs > mergeFanIn {
			t.Fatalf("after commit %d the local copy holds %d packs; want at most %d", i+1, packs, mergeFanIn)
		}
	}
	if loose, _ := objectFiles(t, dir); loose != 0 {
		t.Fatalf("%d loose objects", loose)
	}
	// Every commit's tree reads back, though only the last is in a ref after the push.
	for i, c := range tips {
		content, ok, err := r.ReadFile(c, fmt.Sprintf("cm-%03d.yaml", i))
		if err != nil || !ok || string(content) != fmt.Sprintf("n: %d\n", i) {
			t.Fatalf("commit %d reads %q, %v", i+1, content, err)
		}
	}
	if err := r.Push(testCtx(t), "main", "", tip); err != nil {
		t.Fatal(err)
	}
	if got, err := g.ListFiles("app.git", "main"); err != nil || len(got) != commits {
		t.Fatalf("the remote holds %d files (%v); want %d", len(got), err, commits)
	}
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", tip).CombinedOutput(); err != nil {
		t.Fatalf("git fsck of the local copy: %v\n%s", err, out)
	}
}

// Packs over the smallest tier's bound are merged in the next tier, once there are as many
// of them: the number of packs stays bounded however much is written.
func TestLargePacksAreMergedInTheirTier(t *testing.T) {
	r, dir := localRepo(t)
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, mergeTiers[0]+mergeTiers[0]/8) // each commit's pack is over the first bound
	tip := ""
	for i := range mergeFanIn {
		for k := range big {
			big[k] = byte(rng.Uint32())
		}
		tip = mustCommit(t, r, tip, Change{Path: fmt.Sprintf("blob-%02d.bin", i), Content: big})
	}
	if _, packs := objectFiles(t, dir); packs != mergeFanIn {
		t.Fatalf("%d packs before the merge, want %d", packs, mergeFanIn)
	}
	if err := r.MergePacks(); err != nil {
		t.Fatal(err)
	}
	if _, packs := objectFiles(t, dir); packs != 1 {
		t.Fatalf("%d packs of the second tier after the merge, want 1", packs)
	}
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", tip).CombinedOutput(); err != nil {
		t.Fatalf("git fsck of the local copy: %v\n%s", err, out)
	}
}

// A pack names each object once: files of equal content, and folders of equal files, give
// one blob and one tree, and the pack holds them in the order the commit made them (its
// blob before its trees, the commit last).
func TestACommitsRepeatedObjectsArePackedOnce(t *testing.T) {
	r, dir := localRepo(t)
	var changes []Change
	for _, folder := range []string{"a", "b"} {
		for i := range 5 {
			changes = append(changes, Change{Path: fmt.Sprintf("%s/cm-%d.yaml", folder, i), Content: []byte("n: same\n")})
		}
	}
	sha := mustCommit(t, r, "", changes...)
	idx, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	if err != nil || len(idx) != 1 {
		t.Fatalf("want one pack index, found %v (%v)", idx, err)
	}
	out, err := exec.Command("git", "--git-dir", dir, "verify-pack", "-v", idx[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("git verify-pack: %v\n%s", err, out)
	}
	// One line per object: "<name> <type> <size> <size in pack> <offset>".
	type packed struct {
		offset int
		kind   string
	}
	var objects []packed
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 5 && len(f[0]) == 40 {
			offset, err := strconv.Atoi(f[4])
			if err != nil {
				t.Fatalf("offset %q: %v", f[4], err)
			}
			objects = append(objects, packed{offset, f[1]})
		}
	}
	if len(objects) != 4 {
		t.Fatalf("the pack holds %d objects, want 4 (a blob, a folder's tree, the root tree, the commit):\n%s", len(objects), out)
	}
	slices.SortFunc(objects, func(a, b packed) int { return a.offset - b.offset })
	var order []string
	for _, o := range objects {
		order = append(order, o.kind)
	}
	if strings.Join(order, " ") != "blob tree tree commit" {
		t.Errorf("the pack holds its objects in the order %v, want blob, tree, tree, commit", order)
	}
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", sha).CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}
