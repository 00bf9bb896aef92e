package gitrepo

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/bounds"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/go-git/go-git/v6/plumbing"
)

// manyFilesRepo fetches a folder of more files than ReadFiles reads one by one: similar
// files (sent as deltas), files with equal content, an empty file, and extra.
func manyFilesRepo(t *testing.T, extra ...string) (*Repo, string, map[string]string) {
	t.Helper()
	g, front := newServerRepo(t, testenv.HTTPAuth{})
	shared := strings.Repeat("line of text shared by many files\n", 60)
	files := map[string]string{"many/empty.yaml": ""}
	for i := range bulkReadMin + 100 {
		switch {
		case i%10 == 0:
			files[fmt.Sprintf("many/f%04d.yaml", i)] = "same content\n"
		default:
			files[fmt.Sprintf("many/f%04d.yaml", i)] = shared + fmt.Sprintf("value: %d\n", i)
		}
	}
	files["other/outside.yaml"] = "not read\n"
	for i := 0; i+1 < len(extra); i += 2 {
		files[extra[i]] = extra[i+1]
	}
	if _, err := g.PushForeign("app.git", "main", testenv.ForeignChange{Files: files}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r, err := Open(dir, front.URL("app.git"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := r.Fetch(testCtx(t), "main")
	if err != nil {
		t.Fatal(err)
	}
	return r, tip, files
}

// A large folder is read from its packs at once; each file reads as it does alone.
func TestAFolderOfManyFilesReadsAsEachFileAlone(t *testing.T) {
	r, tip, want := manyFilesRepo(t)
	deltas, err := exec.Command("sh", "-c", "git verify-pack -v "+r.dir+"/objects/pack/*.idx | awk '$2 == \"blob\" && NF == 7' | wc -l").Output()
	if err != nil || strings.TrimSpace(string(deltas)) == "0" {
		t.Fatalf("the fetched pack holds no delta (%s, %v): the test would not read one", deltas, err)
	}
	got, err := r.ReadFiles(tip, "many")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != bulkReadMin+101 {
		t.Fatalf("read %d files, want %d", len(got), bulkReadMin+101)
	}
	// Every blob is read from the pack, the deltas too: none is left to go-git.
	wanted := make([]wantedBlob, len(got))
	for i, f := range got {
		h := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(f.Content))), f.Content...))
		wanted[i] = wantedBlob{hash: plumbing.NewHash(hex.EncodeToString(h[:])), content: new([]byte)}
	}
	done, err := r.readPackedBlobs(wanted)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range done {
		if !ok || string(*wanted[i].content) != string(got[i].Content) {
			t.Fatalf("%s was not read from the pack (read: %v)", got[i].Path, ok)
		}
	}
	for _, f := range got {
		alone, ok, err := r.ReadFile(tip, "many/"+f.Path)
		if err != nil || !ok {
			t.Fatalf("ReadFile %s: %v %v", f.Path, ok, err)
		}
		if string(f.Content) != string(alone) || string(alone) != want["many/"+f.Path] || f.Content == nil {
			t.Fatalf("%s read %q in the folder, %q alone; it holds %q", f.Path, f.Content, alone, want["many/"+f.Path])
		}
	}
}

// A pack entry damaged on disk fails the read: it is never taken for the file's content.
func TestADamagedPackEntryIsAnErrorNotContent(t *testing.T) {
	r, tip, _ := manyFilesRepo(t)
	sum := sha1.Sum([]byte("blob 13\x00same content\n"))
	target := plumbing.NewHash(hex.EncodeToString(sum[:]))
	packs, err := os.ReadDir(r.dir + "/objects/pack")
	if err != nil {
		t.Fatal(err)
	}
	damaged := false
	for _, p := range packs {
		name, ok := strings.CutSuffix(strings.TrimPrefix(p.Name(), "pack-"), ".pack")
		if !ok {
			continue
		}
		idx, err := r.packIndex(plumbing.NewHash(name))
		if err != nil {
			t.Fatal(err)
		}
		off, err := idx.FindOffset(target)
		if err != nil {
			continue
		}
		path := r.packPath(plumbing.NewHash(name))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[off+4] ^= 0x55 // inside the compressed content, past the header
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		damaged = true
	}
	if !damaged {
		t.Fatal("no pack holds the blob to damage")
	}
	files, err := r.ReadFiles(tip, "many")
	if err == nil {
		for _, f := range files {
			if strings.HasPrefix(f.Path, "f0000") {
				t.Fatalf("a damaged entry read as %q", f.Content)
			}
		}
		t.Fatal("reading a damaged pack entry succeeded")
	}
	if !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("err = %v, want the checksum named", err)
	}
}

// A file over the size bound in a large folder is refused by its repository path, as in a
// small one: the read from the packs leaves it to the read that checks the bound.
func TestAFileOverTheBoundInALargeFolderIsRefusedByName(t *testing.T) {
	r, tip, _ := manyFilesRepo(t, "many/zz-big.yaml", strings.Repeat("x", 5000))
	r.LimitFileSize(4096)
	_, err := r.ReadFiles(tip, "many")
	var exceeded *bounds.ExceededError
	if !errors.As(err, &exceeded) || exceeded.Path != "many/zz-big.yaml" {
		t.Fatalf("err = %v, want the bound exceeded by many/zz-big.yaml", err)
	}
}
