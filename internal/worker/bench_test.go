package worker

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// seedRepository writes n ConfigMap documents into a bare repository in one commit, with
// git fast-import (as a large existing repository would be).
func seedRepository(b *testing.B, g *testenv.GitServer, n int) {
	b.Helper()
	var stream bytes.Buffer
	stream.WriteString("commit refs/heads/main\ncommitter Seed <seed@example.com> 1700000000 +0000\ndata 4\nseed\n")
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("ns-%03d", i%200)
		name := fmt.Sprintf("cm-%05d", i)
		doc := configMap(ns, name, "seed")
		fmt.Fprintf(&stream, "M 100644 inline clusters/dev/%s/core/configmaps/%s.yaml\ndata %d\n%s\n", ns, name, len(doc), doc)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = filepath.Join(g.Root(), repoName)
	cmd.Stdin = &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out)
	}
}

// seededServer serves a repository of n ConfigMap documents over smart HTTP.
func seededServer(b *testing.B, n int) *testenv.HTTPFrontend {
	b.Helper()
	g := testenv.NewGitServer(b)
	if err := g.CreateRepo(repoName); err != nil {
		b.Fatal(err)
	}
	seedRepository(b, g, n)
	return g.ServeHTTP(b, testenv.HTTPAuth{})
}

// fetchedWorker is a branch worker of the repository front serves, with the target
// team/live on clusters/dev, fetched: ready for its first plan.
func fetchedWorker(b *testing.B, front *testenv.HTTPFrontend) *branchState {
	b.Helper()
	cfg := Config{URL: front.URL(repoName), Branch: "main", AllowedBranches: []string{"main"}, Dir: b.TempDir(), Log: logr.Discard()}
	w, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	s := w.state
	s.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent}, false)
	if !s.ensureReady(context.Background(), time.Now()) {
		b.Fatalf("fetch: %v", s.lastErr)
	}
	return s
}

// BenchmarkUpsert measures planning and committing one changed document (decide once,
// in-place edit, tree edit) in repositories of 100 and 20,000 files. The index of the
// folder is built before the timer starts, as a running worker holds it already; the cost
// of one upsert should not grow with the repository.
func BenchmarkUpsert(b *testing.B) {
	for _, files := range []int{100, 20000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			s := fetchedWorker(b, seededServer(b, files))
			f := s.targets["team/live"].folder
			if err := f.begin(s.localTip); err != nil {
				b.Fatal(err)
			}
			f.end(true) // the index is loaded: each decide below plans on it
			id := layout.Identity{Kind: "ConfigMap", Namespace: "ns-001", Name: "cm-00001"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ev := Event{Target: "team/live", Op: OpUpsert, Type: configMapType, ID: id,
					Doc: configMap("ns-001", "cm-00001", fmt.Sprintf("v%d", i))}
				pw, err := s.decide(context.Background(), &batch{target: "team/live", author: Author{Name: "bench"}, events: []Event{ev}})
				if err != nil || pw == nil {
					b.Fatalf("decide: %v (write %v)", err, pw)
				}
			}
		})
	}
}

// BenchmarkBurstPlan measures deciding one batch that edits every document of a folder of
// 2,000 files (a burst of edits closed in one window), without the Reducer's dry-runs: its
// cost per edit should not grow with the burst.
func BenchmarkBurstPlan(b *testing.B) {
	for _, files := range []int{500, 2000} {
		b.Run(fmt.Sprintf("edits=%d", files), func(b *testing.B) {
			s := fetchedWorker(b, seededServer(b, files))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				events := make([]Event, files)
				for k := range events {
					ns, name := fmt.Sprintf("ns-%03d", k%200), fmt.Sprintf("cm-%05d", k)
					events[k] = Event{Target: "team/live", Op: OpUpsert, Type: configMapType,
						ID: layout.Identity{Kind: "ConfigMap", Namespace: ns, Name: name}, Doc: configMap(ns, name, fmt.Sprintf("v%d", i))}
				}
				pw, err := s.decide(context.Background(), &batch{target: "team/live", author: Author{Name: "bench"}, events: events})
				if err != nil || pw == nil {
					b.Fatalf("decide: %v (write %v)", err, pw)
				}
			}
		})
	}
}

// BenchmarkFolderLoad measures what a worker does before its first plan on a folder of
// 20,000 files: the fetch into an empty local copy, then reading and indexing the folder.
func BenchmarkFolderLoad(b *testing.B) {
	const files = 20000
	front := seededServer(b, files)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := fetchedWorker(b, front)
		f := s.targets["team/live"].folder
		if err := f.begin(s.localTip); err != nil {
			b.Fatal(err)
		}
		f.end(true)
		if f.index.Len() != files {
			b.Fatalf("indexed %d documents, want %d", f.index.Len(), files)
		}
	}
}
